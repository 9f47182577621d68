"""`mention_stats` with its vocabulary in parts (`partition_mentions`) writes the counts of one
automaton over every mention, on the demo world's enwiki and zhwiki, whatever the workers.

The whole-vocabulary build is the session's shared build of the demo world (`world_out`): its
stages are copied into the test's `--out` (stage directories are named by fingerprint, so the build
here finds them done, as the same build would have written them), and only the stage with its
vocabulary in parts is built here, on the very tables of that build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from entbench import api
from entbench.builders.alias import matching
from entbench.builders.alias.stages import mention_partitions
from tests.world_support import copy_stages


def build(target: str, out: Path, stage: str, *params: str, workers: int = 1) -> Path:
    """Build a demo-world target (no config, no sources) and return `stage`'s directory."""
    dirs = api.build(
        target, out=out, params=params, workers=workers, progress=False, log=lambda _m: None, card=False
    )
    return dirs[stage]


def tables(stage_dir: Path) -> list[tuple[str, object]]:
    return [(f.name, pq.read_table(f)) for f in sorted(stage_dir.glob("*.parquet"))]


def stats(stage_dir: Path) -> dict[str, int]:
    return dict(json.loads((stage_dir / "_MANIFEST.json").read_text())["stats"])


@pytest.mark.parametrize(
    ("target", "stage", "part"),
    # parts small enough to cut each demo vocabulary (~22k and ~1.5k mentions) into several
    [("alias-table", "mention_stats", 4_000), ("hansel-fewshot", "hansel_mention_stats", 300)],
    ids=["enwiki", "zhwiki"],
)
def test_parts_count_what_one_automaton_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_out: Path, target: str, stage: str, part: int
) -> None:
    copy_stages(world_out, tmp_path / "out", [target])
    whole = build(target, tmp_path / "out", stage)
    assert stats(whole)["mentions"] > 3 * part
    assert "phases_seconds" not in json.loads((whole / "_RUN.json").read_text())  # one automaton
    # One worker runs the tasks in this process: small blocks everywhere, so that the matching
    # calls, the walk's blocks of text and its blocks of rows all have many boundaries.
    monkeypatch.setattr(matching, "_CHUNK_BYTES", 4096)
    monkeypatch.setattr(matching, "_WALK_BLOCK", 64)
    monkeypatch.setattr(mention_partitions, "_WALK_BYTES", 4096)
    parts = build(target, tmp_path / "out", stage, f"{stage}.partition_mentions={part}")
    monkeypatch.undo()
    assert parts != whole
    assert "phases_seconds" in json.loads((parts / "_RUN.json").read_text())
    assert tables(parts) == tables(whole)
    assert stats(parts) == stats(whole)
    assert sum(t.column("linked_occurrences").to_numpy().sum() for _, t in tables(parts)) > 0  # type: ignore[attr-defined]
    # The same bytes from two workers (the stage rebuilt alone: its directory removed).
    first = {f.name: f.read_bytes() for f in parts.glob("*.parquet")}
    shutil.rmtree(parts)
    again = build(target, tmp_path / "out", stage, f"{stage}.partition_mentions={part}", workers=2)
    assert again == parts
    assert {f.name: f.read_bytes() for f in again.glob("*.parquet")} == first
