"""`entbench publish TARGET --from BUILD_OUT --out DIR`: a built target as a Hugging Face dataset
folder, ready to upload as it is (`huggingface-cli upload USER/NAME DIR . --repo-type dataset`).

    DIR/README.md                          the dataset card, its YAML front matter mapping configs
                                           and splits to files (`cards.published`)
    DIR/croissant.json                     the Croissant description of the tables (`cards.croissant`)
    DIR/data/<config>/<split>-SSSSS-of-NNNNN.parquet   the build's shards, byte for byte
    DIR/*.png                              the card's plots (copied from the built card's where the
                                           chart is the same: `cards.plot_reuse`)

The target's splits (its card's `splits`: train/valid/test, …) are the `default` config; every other
final table is a config of its own, named after the table (after its stage when two stages write a
table of one name), with one split named after the table. A table without rows is left out
(Hugging Face `datasets` refuses an empty split) and named in the card. Shards are hard-linked from
the build where the file system allows it, else copied. The folder is assembled beside DIR and
swapped into place, so DIR is never half written; an existing DIR is replaced only if it is empty or
an earlier publish (it has a `croissant.json`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from entbench.cards.build_view import BuildView
from entbench.cards.croissant import croissant
from entbench.cards.licence import content_of, licence_ids
from entbench.cards.model import CardResult, PublishedTable
from entbench.cards.registry import card_for
from entbench.cards.writer import README, card_dir, recorded_invocation, render_card
from entbench.engine import registry
from entbench.errors import UserError

CROISSANT = "croissant.json"
DEFAULT_CONFIG = "default"
_SHARD = re.compile(r"part-(\d+)-of-(\d+)\.parquet$")


@dataclass
class PublishResult:
    """What a publish wrote: where, each table's config and split with its rows, what was left out."""

    out: Path
    tables: list[tuple[str, PublishedTable, int]] = field(default_factory=list)  # name, place, rows
    left_out: list[str] = field(default_factory=list)
    card: CardResult | None = None


def layout(view: BuildView) -> dict[tuple[str, str], PublishedTable]:
    """Where each non-empty final table goes: the card's splits in `default`, every other table a
    config of its own (see the module docstring)."""
    card = card_for(view.target)
    tables: list[tuple[str, str]] = []
    for stage in view.final:
        if stage not in view.manifests:
            continue
        spec = registry.find_stage(stage)
        declared = [o.name for o in spec.outputs(spec.params_type())] if spec else []
        names = view.tables(stage)
        tables += [
            (stage, t)
            for t in [*(d for d in declared if d in names), *(n for n in names if n not in declared)]
        ]
    splits = [(s, t) for s, t in tables if t in card.splits]
    names = [t for s, t in tables if (s, t) not in splits]
    placed: dict[tuple[str, str], PublishedTable] = {}
    for stage, table in tables:
        if view.rows(stage, table) == 0:
            continue
        if (stage, table) in splits:
            placed[(stage, table)] = PublishedTable(DEFAULT_CONFIG, table)
            continue
        unique = names.count(table) == 1 and table != DEFAULT_CONFIG
        config = table if unique else (stage if len(view.tables(stage)) == 1 else f"{stage}_{table}")
        placed[(stage, table)] = PublishedTable(config, table)
    return placed


def publish(root: Path, target: str, out: Path) -> PublishResult:
    """Write the Hugging Face dataset folder of `target`, built in `root`, to `out`."""
    view = BuildView(root, target)
    try:
        _check_destination(out)
        view.published = layout(view)
        result = PublishResult(out)
        tmp = out.parent / f".{out.name}.publish-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            for (stage, table), place in view.published.items():
                _place_shards(view, stage, table, place, tmp)
                name = stage if table == stage else f"{stage}.{table}"
                result.tables.append((name, place, view.rows(stage, table)))
            for stage in view.final:
                for table in view.tables(stage) if stage in view.manifests else []:
                    if (stage, table) not in view.published:
                        result.left_out.append(stage if table == stage else f"{stage}.{table}")
            built_card = card_dir(root, target)
            invocation = recorded_invocation(built_card)
            text, result.card = render_card(view, invocation, tmp, built_card)
            (tmp / README).write_text(text, encoding="utf-8")
            card = card_for(target)
            description = card.summary or view.description or f"entbench target {target}"
            doc = croissant(view, description, licence_ids(content_of(view, card)))
            (tmp / CROISSANT).write_text(
                json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            _swap(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        view.close()
    result.card.directory = str(out) if result.card else ""
    return result


def _check_destination(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / CROISSANT).is_file():
        raise UserError(
            f"--out {out}: not empty and not an earlier `entbench publish` (no {CROISSANT}); "
            "give a new or empty directory"
        )


def _place_shards(view: BuildView, stage: str, table: str, place: PublishedTable, folder: Path) -> None:
    """The table's shards as `data/<config>/<split>-SSSSS-of-NNNNN.parquet`, linked or copied."""
    target = folder / "data" / place.config
    target.mkdir(parents=True, exist_ok=True)
    for path in view.files(stage, table):
        found = _SHARD.search(path)
        if found is None:
            raise UserError(f"{path}: not a shard name entbench writes (part-SSSSS-of-NNNNN.parquet)")
        dest = target / f"{place.split}-{found[1]}-of-{found[2]}.parquet"
        try:
            os.link(path, dest)
        except OSError:
            shutil.copyfile(path, dest)


def _swap(tmp: Path, out: Path) -> None:
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)
