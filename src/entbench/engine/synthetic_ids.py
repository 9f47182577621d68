"""The demo world's made-up Wikidata ids: their documented ranges, defined here once, and how many of
a built target's ids fall in them.

The bundled demo world (`fixtures/world/PROVENANCE.md`) gives each entity it derives (a zhwiki or
enwiki title no real item of its material covers) its real QID where the material's real labels
name the item without doubt (`fixtures/scripts/world_real_qids.py`), else an id far above real
Wikidata's (about Q130M in 2024), so no made-up id can ever be taken for a real item:

* `Q9000000001` and up: the Hansel pair's derived zhwiki items (`fixtures/scripts/hansel_fixture.py`);
* `Q9100000001` and up: the world's derived enwiki items (`fixtures/scripts/world_wikidata.py`).

A demo build says how many of its ids are synthetic: on stderr after the build, in `summary` and in
its card (`synthetic_counts`). Real dumps hold none. The count is kept in the per-user cache under the
sha256s of the shards it read, so that a second `entbench build` of a built target (a test suite
starts dozens) does not import and start DuckDB to count again (0.77 -> 0.6 s of CPU for `kb`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from entbench.engine.manifest import load_manifest
from entbench.engine.shards import atomic_write_text
from entbench.readers.cache import default_cache_dir

#: Where each range of made-up QIDs starts (the first id is the base + 1), and what it holds.
HANSEL_DERIVED_BASE = 9_000_000_000
WORLD_DERIVED_BASE = 9_100_000_000
RANGES = (
    (HANSEL_DERIVED_BASE, "the Hansel pair's derived zhwiki items"),
    (WORLD_DERIVED_BASE, "the demo world's derived enwiki items"),
)
#: Every id from here up is made up (the lowest base).
FIRST_SYNTHETIC = HANSEL_DERIVED_BASE + 1
#: Columns of the final tables that may hold entity ids (a value counts only if it is a QID).
ID_COLUMNS = ("qid", "gold_id", "target_qid", "to_qid", "id", "subject", "item", "from_id", "to_id", "value")
_QID = re.compile(r"Q[0-9]+")


def is_synthetic(qid: str) -> bool:
    """Whether `qid` is one of the demo world's made-up ids."""
    return bool(_QID.fullmatch(qid)) and int(qid[1:]) >= FIRST_SYNTHETIC


@dataclass(frozen=True)
class SyntheticCount:
    """Distinct QIDs in a target's final tables, and how many are made up."""

    qids: int
    synthetic: int

    def sentence(self) -> str:
        """`5,713 of 5,827 distinct QIDs (98.0%) are synthetic (Q9000000001 and up)…`."""
        share = f" ({self.synthetic / self.qids:.1%})" if self.qids else ""
        return (
            f"{self.synthetic:,} of the {self.qids:,} distinct QIDs in its final tables{share} are the demo "
            f"world's synthetic ids (Q{FIRST_SYNTHETIC} and up: entities it derived where its real "
            "material has no item; fixtures/world/PROVENANCE.md), the rest real Wikidata ids"
        )


def synthetic_counts(stage_dirs: dict[str, Path], final_stages: tuple[str, ...]) -> SyntheticCount:
    """Count the distinct QIDs in the id columns (`ID_COLUMNS`) of the final stages' tables, and the
    synthetic ones among them (DuckDB over the shards, those columns only)."""
    selects: list[str] = []
    read: list[tuple[list[str], list[str]]] = []  # (sha256 of each shard, id columns)
    for stage in final_stages:
        if stage not in stage_dirs:
            continue
        manifest = load_manifest(stage_dirs[stage])
        for output in manifest["outputs"].values():
            files = [str(stage_dirs[stage] / shard["file"]) for shard in output["shards"] if shard["rows"]]
            columns = [
                f["name"] for f in output["schema"] if f["name"] in ID_COLUMNS and f["type"] == "string"
            ]
            if not files or not columns:
                continue
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            selects += [f'SELECT "{c}" AS v FROM read_parquet([{listed}])' for c in columns]
            read.append(([shard["sha256"] for shard in output["shards"] if shard["rows"]], columns))
    if not selects:
        return SyntheticCount(0, 0)
    key = hashlib.sha256(json.dumps([_COUNT_VERSION, FIRST_SYNTHETIC, read]).encode()).hexdigest()
    cached = _cache_dir() / f"{key}.json"
    try:
        known = json.loads(cached.read_text(encoding="utf-8"))
        return SyntheticCount(int(known["qids"]), int(known["synthetic"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not counted yet (or a damaged entry): count again
    count = _count(selects)
    # Not durable: a record a power cut empties is counted again; a read-only cache counts each time.
    with contextlib.suppress(OSError):
        record = json.dumps({"qids": count.qids, "synthetic": count.synthetic})
        atomic_write_text(cached, record, durable=False)
    return count


#: Bump when what `_count` counts changes: it is part of a cached count's key.
_COUNT_VERSION = 1


def _cache_dir() -> Path:
    return default_cache_dir() / "synthetic-ids"


def _count(selects: list[str]) -> SyntheticCount:
    from entbench.engine.duck import connect  # DuckDB only when a count is not cached

    with tempfile.TemporaryDirectory(prefix="entbench-ids-") as scratch:
        con = connect(scratch=Path(scratch), workers=1, tasks=1)
        try:
            row = con.execute(
                "SELECT count(DISTINCT v), count(DISTINCT v) FILTER (WHERE length(v) >= 11 "
                f"AND CAST(substr(v, 2) AS HUGEINT) >= {FIRST_SYNTHETIC}) "
                f"FROM ({' UNION ALL '.join(selects)}) WHERE regexp_full_match(v, 'Q[0-9]+')"
            ).fetchone()
        finally:
            con.close()
    assert row is not None
    return SyntheticCount(int(row[0]), int(row[1]))
