"""The golden check (`entbench.golden`, `make fixtures-check`) on the session's one build of the demo
world (`world_out`): every shard of every target byte for byte the committed golden one. CI's
`make test` runs it here instead of rebuilding the world from scratch a second time; the build is
the same (no --config, no --source, as `make run` builds it)."""

from __future__ import annotations

from pathlib import Path

from entbench import golden


def test_every_shard_of_every_demo_world_target_matches_the_golden_files(world_out: Path) -> None:
    problems = golden.problems_by_target(golden.built_snapshot(world_out))
    assert list(problems) == list(golden.GOLDEN_TARGETS)
    assert {target: found for target, found in problems.items() if found} == {}, "run `make fixtures`?"
