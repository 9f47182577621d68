"""What a build made, in a few lines: each target's final tables with their row counts, and for an
empty one the counters that took its rows.

A target's final tables are the output tables of its final stages (`registry.Target.stages`), read
from their manifests; the reason counters are the stats of the target's stages whose names say a
row was let go (`dropped…`, `removed…`, `rejected…`, …), largest first. `entbench build` prints them
after each build and warns about an empty table; `entbench summary` prints them for every target a
build directory holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from entbench.engine import registry
from entbench.engine.build_out import listed_stages, listing_file
from entbench.engine.manifest import load_manifest

#: Stats whose name says rows were let go somewhere (the reasons an output can be empty).
DROP_COUNTER = re.compile(r"(^|_)(dropped|removed|rejected|skipped|unresolved|filtered|without)(_|$)")
#: How many reason counters an empty table's warning names.
REASONS_SHOWN = 5


@dataclass(frozen=True)
class TableCount:
    """One final table of a target and its rows."""

    stage: str
    table: str
    rows: int
    may_be_empty: bool = False

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
        optional = {o.name for o in spec.outputs(spec.params_type()) if o.may_be_empty}
        counts += [
            TableCount(stage, table, int(info["rows"]), table in optional) for table, info in outputs.items()
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


def empty_warning(out: Path, target: str, table: TableCount) -> str:
    """The warning for an empty final table, naming the counters that took the rows."""
    reasons = drop_reasons(out, target)[:REASONS_SHOWN]
    named = "; ".join(f"{stage}: {key} {count:,}" for stage, key, count in reasons)
    where = f"rows were let go by {named}" if reasons else "no input row reached it (no drop was counted)"
    return f"entbench: warning: final table {table.name} of target {target} is empty: {where}"


def built_targets(out: Path) -> list[str]:
    """The targets with a listing in `out/targets/`, sorted."""
    return sorted(p.stem for p in (out / "targets").glob("*.json"))
