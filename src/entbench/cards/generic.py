"""The parts every card has, read from the manifests alone: structure, sources, parameters,
statistics by reason and the rebuild command (Hugging Face dataset-card layout); the licence is
`cards.licence`'s."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from entbench import __version__
from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, fmt, md_table, size_category
from entbench.cards.leakage import audits
from entbench.cards.licence import content_of, licence_ids, source_kinds
from entbench.cards.model import Block, Invocation, Section
from entbench.cards.published import configs_yaml, published_load_blocks
from entbench.cards.registry import TargetCard
from entbench.cards.stage_docs import REFERENCE, stage_link
from entbench.engine import registry
from entbench.engine.config import is_demo_world
from entbench.engine.synthetic_ids import synthetic_counts

#: A stats counter that records rows lost, and why (datatrove-style `dropped_<reason>` names,
#: plus the scans' `rejected_<reason>`, the filters' `removed_<reason>`, unresolved links).
DROP_COUNTER = re.compile(r"(^|_)(dropped|rejected|removed|unresolved)(_|$)")
#: The Wikidata scan's counter of a JSON-array dump without its closing `]` (a possible truncation).
MISSING_CLOSE = "missing_closing_bracket"
#: A Wikimedia dump's date in its file name: `wikidata-20210301-all.json.gz`, `zhwiki-20210301-…`.
DUMP_DATE = re.compile(r"(?<!\d)(20\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")


def front_matter(view: BuildView, card: TargetCard) -> str:
    """The YAML header of a Hugging Face dataset card (every value JSON-quoted, which is YAML)."""
    names = set(view.sources())
    licences = licence_ids(content_of(view, card))
    rows = sum(view.rows(s, t) for s, t in split_tables(view, card))
    lines = ["---", f"pretty_name: {json.dumps('entbench ' + view.target)}"]
    if len(licences) == 1:
        lines.append(f"license: {licences[0]}")
    else:
        lines += ["license:", *(f"- {licence}" for licence in licences)]
    languages = _languages(view)
    if languages:
        lines += ["language:", *(f"- {json.dumps(lang)}" for lang in languages)]
    lines += ["size_categories:", f"- {json.dumps(size_category(rows))}"]
    hub = card.hub
    if hub.task_categories:
        lines += ["task_categories:", *(f"- {json.dumps(t)}" for t in hub.task_categories)]
    if hub.task_ids:
        lines += ["task_ids:", *(f"- {json.dumps(t)}" for t in hub.task_ids)]
    kinds = sorted(set(source_kinds(view).values()) & {"wikidata", "wikipedia"})
    if kinds:
        lines += ["source_datasets:", *(f'- "extended|{kind}"' for kind in kinds)]
    tags = ["entbench", *sorted({n.removesuffix("_old").removesuffix("_new") for n in names})]
    tags += ["demo"] if is_demo(view) else []
    lines += ["tags:", *(f"- {json.dumps(t)}" for t in dict.fromkeys(tags))]
    lines += configs_yaml(view)
    lines.append("---")
    return "\n".join(lines)


def _languages(view: BuildView) -> list[str]:
    """The text language(s): the language of the Wikipedia the build read (its text is the data's),
    else a stage's `language` parameter (e.g. WikiReading's label language), else the scans'
    `languages` (every label language kept)."""
    wikis = view.wiki_languages()
    if wikis:
        return sorted(wikis)
    single: set[str] = set()
    several: set[str] = set()
    for manifest in view.manifests.values():
        params = manifest["params"]
        value = params.get("language")
        if isinstance(value, str) and value:
            single.add(value)
        values = params.get("languages")
        if isinstance(values, list):
            several.update(str(v) for v in values if v)
    return sorted(single or several)


def split_tables(view: BuildView, card: TargetCard) -> list[tuple[str, str]]:
    """(stage, table) of the target's splits if it declares them, else every final-stage table."""
    final = [s for s in view.final if s in view.manifests]
    if card.splits:
        found = []
        for split in card.splits:
            for stage in final:
                if split in view.manifests[stage]["outputs"]:
                    found.append((stage, split))
                    break
        if found:
            return found
    audited = {name for name, _ in audits(view)}  # their decisions are the leakage section's
    return [(stage, table) for stage in final if stage not in audited for table in view.tables(stage)]


def table_dir(view: BuildView, stage: str, table: str) -> str:
    """A table's directory relative to the build: the stage's own for a one-table stage."""
    rel = view.dirs[stage].relative_to(view.out).as_posix()
    return rel if len(view.manifests[stage]["outputs"]) == 1 else f"{rel}/{table}"


def load_blocks(view: BuildView, tables: list[tuple[str, str]], is_splits: bool) -> list[Block]:
    """How to load the tables, with the exact paths: Hugging Face `datasets` (one `DatasetDict` of
    the splits, or one call per table, whose schemas differ), pyarrow and Polars."""
    if view.published:
        return published_load_blocks(view, tables)
    loadable = [(s, t) for s, t in tables if view.rows(s, t) > 0]
    empty = [t for s, t in tables if view.rows(s, t) == 0]
    lines = ["import datasets, polars as pl, pyarrow.dataset as ds", ""]
    if is_splits and loadable:
        files = ", ".join(f'"{t}": "{table_dir(view, s, t)}/*.parquet"' for s, t in loadable)
        lines.append(f'splits = datasets.load_dataset("parquet", data_files={{{files}}})')
    else:
        for stage, table in loadable:
            lines.append(
                f'{table} = datasets.load_dataset("parquet", data_files="{table_dir(view, stage, table)}'
                '/*.parquet", split="train")'
            )
    if tables:
        first_stage, first_table = tables[0]
        where = table_dir(view, first_stage, first_table)
        lines += [
            f'arrow = ds.dataset("{where}").to_table()  # or pyarrow.parquet.read_table(that directory)',
            f'frame = pl.read_parquet("{where}/*.parquet")',
        ]
    blocks: list[Block] = [
        "Load them from the build directory (each table the same way; the paths are this build's):",
        "```python\n" + "\n".join(lines) + "\n```",
    ]
    if empty:
        blocks.append(
            f"Empty here: {', '.join(f'`{t}`' for t in empty)}. Hugging Face `datasets` cannot load a "
            "table with no rows (it refuses a split without examples), so the call above leaves it "
            "out; pyarrow and Polars read it as an empty table."
        )
    return blocks


def structure_section(view: BuildView, card: TargetCard) -> Section:
    """The tables users consume, their sizes and where their shards are; the split-size plot."""
    tables = split_tables(view, card)
    is_splits = bool(card.splits) and all(t in card.splits for _, t in tables)
    rows = []
    for stage, table in tables:
        output = view.manifests[stage]["outputs"][table]
        if view.published:
            files = view.published[(stage, table)].glob if (stage, table) in view.published else "–"
        else:
            rel = view.dirs[stage].relative_to(view.out)
            prefix = "" if len(view.manifests[stage]["outputs"]) == 1 else f"{table}/"
            files = f"{rel}/{prefix}part-*.parquet"
        rows.append((table, stage, output["rows"], output["num_shards"], f"`{files}`"))
    where = (
        "Paths are relative to this folder, a Hugging Face dataset repository as it is "
        "(`entbench publish`): `data/<config>/<split>-*.parquet`, the build's shards one for one."
        if view.published
        else "Paths are relative to the build directory. A table's directory holds its shards and "
        "nothing else a Parquet reader would take (the stage's own files start with `_`)."
    )
    blocks: list[Block] = [
        "Every table is a set of Parquet shards (zstd, sorted by a unique key, schema and fingerprint "
        "in the file metadata), listed with their sha256 in the stage's `_MANIFEST.json`. " + where,
        md_table(["table", "stage", "rows", "shards", "files"], rows, "llrrl"),
        *load_blocks(view, tables, is_splits),
    ]
    title = "Split sizes" if is_splits else "Table sizes"
    horizontal = not is_splits and len(tables) > 4
    if len(tables) == 1:
        # One table: its size is a sentence, not a plot of one bar.
        ((stage, table),) = tables
        blocks.append(f"One table, `{table}`: {fmt(view.rows(stage, table))} rows.")
    elif tables:
        blocks.append(
            bar_chart(
                "split_sizes.png",
                f"{view.target}: {title.lower()}",
                [
                    (table if is_splits else f"{stage}.{table}", view.rows(stage, table))
                    for stage, table in tables
                ],
                xlabel="rows" if horizontal else "",
                ylabel="" if horizontal else "rows",
                horizontal=horizontal,
            )
        )
    others = [s for s in view.order if s not in view.final]
    if others:
        blocks.append(
            "Built on the way (intermediate stages, reused by other targets): "
            + ", ".join(f"`{s}`" for s in others)
            + "."
        )
    return Section("Dataset structure", tuple(blocks))


def sources_section(view: BuildView) -> Section:
    """The dumps the build read, identified by size and sha256 (not by path)."""
    sources = view.sources()
    if not sources:
        return Section("Source dumps", ("This target reads no dump directly.",))
    rows = [
        (name, f"`{dump_name(s['path'])}`", dump_date(s["path"]), s["size"], f"`{s['sha256']}`")
        for name, s in sources.items()
    ]
    blocks: list[Block] = [
        "Sources enter every stage fingerprint by content (size and sha256), not by path: the "
        "same dumps give the same fingerprints and shards on any machine. The dump date is the one "
        "in the file's name, as Wikimedia names its dumps (`wikidata-20240101-all.json.gz`).",
        md_table(["source", "dump", "dump date", "bytes", "sha256"], rows, "lllrl"),
    ]
    if is_demo(view):
        blocks.append(
            "These are the bundled demo world's files (`fixtures/world/`, `fixtures/hansel/` of the "
            "entbench repository): real Wikidata and Wikipedia material of 2016-2021, composed so that "
            "items and pages meet; their `PROVENANCE.md` says what is real and what is derived."
        )
    for stage in view.order:
        if view.stats(stage).get(MISSING_CLOSE):
            blocks.append(
                f"**Warning:** the JSON-array dump `{stage}` read opens with `[` but has no closing "
                "`]`: it may be a download cut at a line boundary, so entities after the cut would be "
                "missing without any error. Check its size against the published one."
            )
    limited = {name: s["limit"] for name, s in sources.items() if s.get("limit")}
    if limited:
        blocks.append(trial_note(limited))
    return Section("Source dumps", tuple(blocks))


def dump_name(path: str) -> str:
    """A dump's file name (never the local directory it was read from)."""
    return PurePosixPath(path.replace("\\", "/")).name


def dump_date(path: str) -> str:
    """The date in a dump's file name (`enwiki-20240601-pages-articles.xml.bz2`: 2024-06-01), or "–"."""
    found = DUMP_DATE.search(dump_name(path))
    return f"{found[1]}-{found[2]}-{found[3]}" if found else "–"


def trial_note(limited: Mapping[str, str]) -> str:
    """What a trial build (`build --limit N`) read of each dump."""
    return (
        "**A trial build** (`entbench build --limit N`): it read "
        + "; ".join(f"`{name}`: the {what}" for name, what in sorted(limited.items()))
        + ". The sizes and sha256 above are those of these cut dumps, so every fingerprint is the "
        "trial's own; a build from the whole dumps is another build."
    )


def stages_table(view: BuildView) -> str:
    """Stage, layer, version and fingerprint of every stage, upstream first."""
    rows = []
    for stage in view.order:
        m = view.manifests[stage]
        final = "yes" if stage in view.final else ""
        # What the stage computes as this entbench says it (a description is no output of the
        # stage, so an older build's manifest may carry older wording); the manifest's otherwise.
        spec = registry.find_stage(stage)
        description = spec.description if spec else m.get("description", "")
        rows.append(
            (
                f"`{stage}`",
                m.get("layer", ""),
                m["version"],
                f"`{m['fingerprint'][:12]}`",
                final,
                description,
                f"`{stage_link(stage)}`",
            )
        )
    return md_table(
        ["stage", "layer", "version", "fingerprint", "final", "what it computes", "described in"],
        rows,
        "llrllll",
    )


def parameters_section(view: BuildView) -> Section:
    """Every stage's parameters (all of them enter its fingerprint)."""
    blocks: list[Block] = [
        "Every parameter enters its stage's fingerprint; a stage directory is named "
        "`v<version>-<fingerprint[:12]>`. What each parameter means, and its default, is in the "
        f"section of {REFERENCE} the last column names.",
        stages_table(view),
    ]
    rows = []
    for stage in view.order:
        for key, value in sorted(view.manifests[stage]["params"].items()):
            rows.append((f"`{stage}`", f"`{key}`", f"`{json.dumps(value, ensure_ascii=False)}`"))
    if rows:
        blocks.append(md_table(["stage", "parameter", "value"], rows))
    return Section("Parameters", tuple(blocks))


def stats_section(view: BuildView) -> Section:
    """Counters by reason: first every drop, then each stage's full stats (collapsed)."""
    drops = []
    for stage in view.order:
        for key, value in view.stats(stage).items():
            if DROP_COUNTER.search(key) and isinstance(value, int | float):
                drops.append((f"`{stage}`", f"`{key}`", value))
    blocks: list[Block] = []
    if drops:
        blocks += [
            "Rows lost on the way, by stage and reason:",
            md_table(["stage", "reason", "count"], drops, "llr"),
        ]
    else:
        blocks.append("No stage of this target dropped, rejected or removed anything.")
    for stage in view.order:
        stats = view.stats(stage)
        if not stats:
            continue
        table = md_table(["counter", "value"], [(f"`{k}`", v) for k, v in stats.items()], "lr")
        blocks.append(
            f"<details><summary><code>{stage}</code>: all {len(stats)} counters</summary>"
            f"\n\nWhat they count: `{stage_link(stage)}`.\n\n{table}\n\n</details>"
        )
    return Section("Statistics by reason", tuple(blocks))


def _cli_value(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_cli_value(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def rebuild_command(view: BuildView, invocation: Invocation | None) -> tuple[str, bool]:
    """The `entbench build` command line for this target, and whether it is the recorded one.

    With the invocation recorded at build time this is that command. Otherwise it is rebuilt from
    the manifests: every source as recorded and every parameter that differs from its default.
    """
    if view.published:
        # A published card names no local path: sources by their file name, the default --out.
        args = ["entbench", "build", view.target]
        if invocation is not None and invocation.demo:
            return shlex.join(args), True
        for name, info in view.sources().items():
            args += ["--source", f"{name}={dump_name(info['path'])}"]
        for param in invocation.params if invocation is not None else ():
            args += ["--param", param]
        if invocation is not None and invocation.limit is not None:
            args += ["--limit", str(invocation.limit)]
        return shlex.join(args), invocation is not None
    if invocation is not None:
        args = ["entbench", "build", view.target]
        if invocation.config is not None:
            args += ["--config", invocation.config]
        for source in invocation.sources:
            args += ["--source", source]
        for param in invocation.params:
            args += ["--param", param]
        if invocation.limit is not None:
            args += ["--limit", str(invocation.limit)]
        args += ["--out", invocation.out]
        return shlex.join(args), True
    args = ["entbench", "build", view.target]
    for name, info in view.sources().items():
        args += ["--source", f"{name}={info['path']}"]
    for stage in view.order:
        params = view.manifests[stage]["params"]
        defaults: Mapping[str, Any] = {}
        spec = registry.find_stage(stage)
        if spec:
            defaults = spec.params_type().to_json()
        for key, value in sorted(params.items()):
            if key not in defaults or defaults[key] != value:
                args += ["--param", f"{stage}.{key}={_cli_value(value)}"]
    args += ["--out", str(view.out)]
    return shlex.join(args), False


def rebuild_section(view: BuildView, invocation: Invocation | None) -> Section:
    """How to build exactly this again, and how to check that it is exactly this."""
    command, recorded = rebuild_command(view, invocation)
    out = "entbench-out" if view.published or invocation is None else invocation.out
    note = (
        "The command this build was made with:"
        if recorded
        else "Rebuilt from the manifests (every source as recorded, every non-default parameter; "
        "relative source paths are relative to the config file or directory they were given in):"
    )
    return Section(
        "How to rebuild",
        (
            note,
            f"```sh\n{command}\n```",
            "The build is deterministic: the same dumps and parameters give byte-identical shards for "
            f"any `--workers`. Check a rebuild with `entbench verify {out}` (shards against their "
            "manifests) and `entbench diff OLD_OUT NEW_OUT` (fingerprints, rows and shard hashes).",
        ),
    )


def overview(view: BuildView, card: TargetCard) -> str:
    """The card's title and opening paragraph."""
    lines = [f"# {view.target}", ""]
    if card.summary:
        lines += [card.summary, ""]
    if view.description:
        lines += [f"Target `{view.target}`: {view.description}.", ""]
    limited = {name: s["limit"] for name, s in view.sources().items() if s.get("limit")}
    if limited:
        lines += [trial_note(limited), ""]
    demo = demo_note(view)
    if demo:
        lines += [demo, ""]
    lines.append(
        f"Built by entbench {__version__} from raw public dumps; every number "
        "on this card is read from the build's manifests and shards. What each stage computes and "
        f"what its counters count: {REFERENCE}."
    )
    return "\n".join(lines)


def is_demo(view: BuildView) -> bool:
    """Whether the build is of the bundled demo world (its sources are the demo world's files)."""
    return is_demo_world(view.sources())


def demo_note(view: BuildView) -> str | None:
    """For a build of the bundled demo world: that it is one, and how many of its ids are made up."""
    if not is_demo(view):
        return None
    count = synthetic_counts(view.dirs, view.final)
    ids = f" Of this target, {count.sentence()}." if count.qids else ""
    return (
        "**Built from entbench's bundled demo world**: small real data composed so that Wikidata items "
        "and Wikipedia pages meet, for trying entbench, not for training or evaluating models." + ids
    )


def join_blocks(parts: Iterable[str]) -> str:
    """Paragraphs separated by blank lines."""
    return "\n\n".join(p.strip("\n") for p in parts if p)
