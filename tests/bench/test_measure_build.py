"""`bench/pipelines/measure_build.py`: one measured build, its short stages timed more than once."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from tests.bench.conftest import BENCH_DIR

DUMP = BENCH_DIR.parent / "fixtures" / "wikidata" / "entities-old.json.bz2"


def test_a_short_stage_is_run_again_and_its_median_seconds_kept(tmp_path: Path) -> None:
    script = BENCH_DIR / "pipelines" / "measure_build.py"
    argv = [sys.executable, str(script), "--source", f"wikidata={DUMP}"]
    done = subprocess.run(
        [*argv, "--out", str(tmp_path / "out"), "--short-runs", "3", "wikidata"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    stage = json.loads(done.stdout)["stages"]["wikidata"]
    runs = stage["seconds_runs"]
    assert len(runs) == 3 and all(seconds > 0 for seconds in runs)
    assert stage["seconds"] == round(statistics.median(runs), 3)
    assert stage["rows"]["entities"] > 0 and stage["rss_mib"] > 0
    # the last run's output is the one left, complete
    assert (Path(stage["dir"]) / "_MANIFEST.json").exists()

    once = subprocess.run(
        [*argv, "--out", str(tmp_path / "once"), "--short-seconds", "0", "wikidata"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "seconds_runs" not in json.loads(once.stdout)["stages"]["wikidata"]
