"""`entbench diff` end to end: exit status as diff(1), text and JSON reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from tests import builds as samples
from tests.world_support import SamplesBuilds

CLI = Callable[[list[str]], Result]


def test_diff_exit_status_and_reports(tmp_path: Path, run_cli: CLI, samples_builds: SamplesBuilds) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    samples_builds.seed(a, "wikidata")
    samples.build("wikidata", out=a, progress=False, log=lambda _m: None, card=False)
    samples.build(
        "wikidata", out=b, params=["wikidata.num_shards=3"], progress=False, log=lambda _m: None, card=False
    )
    same = run_cli(["diff", str(a), str(a), "--all"])
    assert same.exit_code == 0
    assert "= wikidata: identical" in same.output
    different = run_cli(["diff", str(a), str(b), "--target", "wikidata"])
    assert different.exit_code == 1
    assert "    param num_shards: 4 -> 3" in different.output
    assert "    num_shards entities: 4 -> 3" in different.output
    doc = json.loads(run_cli(["diff", str(a), str(b), "--json"]).output)
    (stage,) = doc["stages"]
    assert stage["stage"] == "wikidata" and not stage["identical"]
    assert {"kind": "param", "key": "num_shards", "a": 4, "b": 3} in stage["changes"]
    missing = run_cli(["diff", str(a), str(b), "--target", "kb"])
    assert missing.exit_code == 2 and "target 'kb' was not built here" in missing.output
