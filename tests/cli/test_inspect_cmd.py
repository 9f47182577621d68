"""`entbench inspect` and `entbench verify` end to end on a real fixture build."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests import builds as samples
from tests.world_support import SamplesBuilds

CLI = Callable[[list[str]], Result]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    root = tmp_path_factory.mktemp("built")
    samples_builds.seed(root, "wikidata")  # the build below finds the scan done and lists it
    samples.build("wikidata", out=root, progress=False, log=lambda _m: None, card=False)
    return root


def test_inspect_build_dir_shows_an_overview_then_each_stage(out: Path, run_cli: CLI) -> None:
    result = run_cli(["inspect", str(out), "--rows", "1", "--width", "100", "--table", "sitelinks"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["stage", "version", "fingerprint", "rows"]
    assert lines[2].startswith("normalized/wikidata  v3") and lines[2].endswith("sitelinks 75")
    assert "  table sitelinks: 75 rows in 4 shards, sorted by id, site" in result.output
    assert "table entities" not in result.output


def test_inspect_json_keeps_its_contract(out: Path, run_cli: CLI) -> None:
    result = run_cli(["inspect", str(out), "--json", "--rows", "2"])
    doc = json.loads(result.output)
    assert {"directory", "stage", "fingerprint", "params", "sources", "stats", "tables", "run"} <= set(doc)
    assert len(doc["tables"]["entities"]["sample"]) == 2


def test_verify_ok_and_bad_manifest(out: Path, run_cli: CLI, tmp_path: Path) -> None:
    result = run_cli(["verify", str(out)])
    assert result.exit_code == 0
    assert result.output.startswith("ok: 25 file(s) in 1 stage directory match their manifests")
    bad = tmp_path / "stage"
    bad.mkdir()
    (bad / "_MANIFEST.json").write_text("{not json")
    result = run_cli(["verify", str(bad)])
    assert result.exit_code == 1
    assert f"verify failed: {bad}: _MANIFEST.json: unreadable" in result.output
