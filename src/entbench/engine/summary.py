"""What a build made, in a few lines: each target's final tables with their row counts, and when a
final table is empty or tiny, one line saying in words what was missing.

A target's final tables are the output tables of its final stages (`registry.Target.stages`), read
from their manifests; the reason counters are the stats of the target's stages whose names say a
row was let go (`dropped…`, `removed…`, `rejected…`, …), largest first. `entbench build` prints them
after each build, then one coverage line for a target with an empty or tiny final table: the
sentences its stages give for their stats (`Stage.coverage`), upstream first, else its largest
drop counters; `entbench summary` prints the tables for every target a build directory holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entbench.engine import registry
from entbench.engine.build_out import listed_stages, listing_file
from entbench.engine.config import is_demo_world
from entbench.engine.manifest import load_manifest
from entbench.engine.synthetic_ids import synthetic_counts
from entbench.errors import UserError

#: Stats whose name says rows were let go somewhere (the reasons an output can be empty).
DROP_COUNTER = re.compile(r"(^|_)(dropped|removed|rejected|skipped|unresolved|filtered|without)(_|$)")
#: How many reason counters an empty table's warning names.
REASONS_SHOWN = 5
#: A final table with fewer rows than this (and not empty) is tiny: a trial build, or a dump that
#: holds little of what the target needs.
TINY_ROWS = 10


@dataclass(frozen=True)
class TableCount:
    """One final table of a target and its rows."""

    stage: str
    table: str
    rows: int
    may_be_empty: bool = False
    sized_by_data: bool = True

    @property
    def name(self) -> str:
        """`stage.table` (`stage` alone when the stage writes one table of its own name)."""
        return self.stage if self.table == self.stage else f"{self.stage}.{self.table}"


def target_stages(out: Path, target: str) -> dict[str, Path]:
    """Stage name -> directory of a target built in `out` (its `targets/<target>.json`, or the
    variant `--variant` names)."""
    return {name: out / rel for name, rel in listed(out, target).items()}


def listed(out: Path, target: str) -> dict[str, str]:
    """The stage directories (relative to `out`) a target's listing names."""
    return listed_stages(listing_file(out, target).read_bytes())


def final_tables(out: Path, target: str) -> list[TableCount]:
    """The output tables of `target`'s final stages, in the target's stage order."""
    dirs = target_stages(out, target)
    counts = []
    for stage in registry.get_target(target).stages:
        if stage not in dirs:
            continue
        outputs = load_manifest(dirs[stage])["outputs"]
        spec = registry.get_stage(stage)
        declared = {o.name: o for o in spec.outputs(spec.params_type())}
        counts += [
            TableCount(
                stage,
                table,
                int(info["rows"]),
                table in declared and declared[table].may_be_empty,
                table not in declared or declared[table].sized_by_data,
            )
            for table, info in outputs.items()
        ]
    return counts


def drop_reasons(out: Path, target: str) -> list[tuple[str, str, int]]:
    """(stage, counter, count) of every non-zero drop counter of the target's stages, largest first."""
    found = []
    for stage, directory in target_stages(out, target).items():
        for key, value in load_manifest(directory)["stats"].items():
            if (
                isinstance(value, int)
                and not isinstance(value, bool)
                and value > 0
                and DROP_COUNTER.search(key)
            ):
                found.append((stage, key, value))
    return sorted(found, key=lambda r: (-r[2], r[0], r[1]))


def table_lines(tables: list[TableCount], indent: str = "  ") -> list[str]:
    """`name   rows` lines, names padded to one column."""
    width = max((len(t.name) for t in tables), default=0)
    return [f"{indent}{t.name:<{width}}  {t.rows:>12,} {'row' if t.rows == 1 else 'rows'}" for t in tables]


def coverage_line(out: Path, target: str) -> str | None:
    """One line, for a target whose final tables include an empty or tiny one, saying in words what
    its stages kept and let go (None when every final table has rows enough).

    An empty table makes it a warning, a tiny one (under `TINY_ROWS` rows) a note. Side tables
    that real inputs may leave empty (`Output.may_be_empty`) do not count, nor are tables whose
    size the data does not set (`Output.sized_by_data`) ever tiny."""
    tables = [t for t in final_tables(out, target) if not t.may_be_empty]
    empty = [t.name for t in tables if t.rows == 0]
    tiny = [f"{t.name} {t.rows:,}" for t in tables if 0 < t.rows < TINY_ROWS and t.sized_by_data]
    if not empty and not tiny:
        return None
    said = [f"{len(empty)} empty final table(s) ({', '.join(empty)})"] if empty else []
    said += [f"tiny: {', '.join(tiny)} row(s)"] if tiny else []
    order = [s.stage_name for s in registry.stage_order(registry.get_target(target).stages)]
    sentences = []
    for stage, directory in target_stages(out, target).items():
        manifest = load_manifest(directory)
        try:
            spec = registry.get_stage(stage)
        except UserError:  # a stage this entbench no longer has
            continue
        sentence = spec.coverage(manifest["stats"], manifest["params"])
        if sentence:
            sentences.append((order.index(stage) if stage in order else len(order), sentence))
    if sentences:
        why = "; ".join(s for _, s in sorted(sentences))
    else:
        reasons = drop_reasons(out, target)[:REASONS_SHOWN]
        named = "; ".join(f"{stage}: {key} {count:,}" for stage, key, count in reasons)
        why = f"rows were let go by {named}" if reasons else "no input row reached them (no drop was counted)"
    level = "warning" if empty else "note"
    return f"entbench: {level}: {target}: {', '.join(said)}: {why}"


def built_targets(out: Path) -> list[str]:
    """The targets with a listing in `out/targets/`, sorted."""
    return sorted(p.stem for p in (out / "targets").glob("*.json"))


def demo_ids_line(out: Path, target: str) -> str | None:
    """For a target built from the bundled demo world, how many of its QIDs are synthetic
    (`engine.synthetic_ids`); None for any other build."""
    dirs = target_stages(out, target)
    sources: dict[str, dict[str, Any]] = {}
    for directory in dirs.values():
        for name, info in load_manifest(directory)["sources"].items():
            sources.setdefault(name, dict(info))
    if not is_demo_world(sources):
        return None
    count = synthetic_counts(dirs, registry.get_target(target).stages)
    return count.sentence() if count.qids else None
