"""`bench/pipelines/measure_build.py`: one measured build, its short stages timed more than once."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.bench.conftest import BENCH_DIR

DUMP = BENCH_DIR.parent / "fixtures" / "wikidata" / "entities-old.json.bz2"


def measured_wikidata_scan(out: Path, *options: str) -> dict[str, Any]:
    """The `wikidata` stage's record from a measured build of the fixture dump into `out`."""
    argv = [sys.executable, str(BENCH_DIR / "pipelines" / "measure_build.py"), "--out", str(out)]
    argv += ["--source", f"wikidata={DUMP}", *options, "wikidata"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300)
    record: dict[str, Any] = json.loads(done.stdout)["stages"]["wikidata"]
    return record


def test_a_short_stage_is_run_again_and_its_median_seconds_kept(tmp_path: Path) -> None:
    stage = measured_wikidata_scan(tmp_path / "out", "--short-runs", "3")
    runs = stage["seconds_runs"]
    assert len(runs) == 3 and all(seconds > 0 for seconds in runs)
    assert stage["seconds"] == round(statistics.median(runs), 3)
    assert stage["rows"]["entities"] > 0 and stage["rss_mib"] > 0
    # the last run's output is the one left, complete
    assert (Path(stage["dir"]) / "_MANIFEST.json").exists()

    once = measured_wikidata_scan(tmp_path / "once", "--short-seconds", "0")
    assert "seconds_runs" not in once


def test_a_named_stage_is_run_again_however_long_it_took(tmp_path: Path) -> None:
    # run.py names the stages that were short in the smallest world, so that both sides of a time
    # ratio are medians of as many runs
    stage = measured_wikidata_scan(tmp_path / "out", "--short-seconds", "0", "--rerun", "wikidata")
    runs = stage["seconds_runs"]
    assert len(runs) == 3 and stage["seconds"] == round(statistics.median(runs), 3)
