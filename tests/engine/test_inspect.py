"""`entbench.engine.inspect`: terminal layout, describing and verifying real fixture builds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from entbench.engine.inspect import (
    clip,
    describe,
    describe_all,
    display_width,
    grid,
    incomplete_dirs,
    render_text,
    verify_build,
)
from entbench.errors import UserError
from tests import builds as samples
from tests.world_support import SamplesBuilds


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    root = tmp_path_factory.mktemp("built")
    samples_builds.seed(root, "wikidata")  # the build below finds the scan done and lists it
    samples.build("wikidata", out=root, progress=False, log=lambda _m: None, card=False)
    return root


def stage(out: Path) -> Path:
    (directory,) = (out / "normalized" / "wikidata").glob("v*")
    return directory


def test_east_asian_text_takes_two_columns() -> None:
    assert display_width("柏林 Berlin") == 11
    assert display_width("e\u0301") == 1
    assert clip("所在行政领土实体", 7) == "所在行…"
    assert display_width(clip("所在行政领土实体", 7)) <= 7
    lines = grid(["k", "v"], [("海拔", "1"), ("x", "22")], numeric=(False, True))
    assert lines == ["k      v", "----  --", "海拔   1", "x     22"]


def test_render_lays_out_schema_stats_and_rows(out: Path) -> None:
    report = describe(stage(out), sample_rows=2)
    text = render_text(report, width=200)
    assert "  table sitelinks: 75 rows in 4 shards, sorted by id, site" in text
    assert "    badges  list<item: string>" in text
    # narrow terminals get one block per record instead of a grid too wide to read
    narrow = render_text(report, width=60)
    assert "-[ row 1 ]" in narrow
    assert max(display_width(line) for line in narrow.splitlines() if "-[ row" in line) <= 60
    assert "entities_decoded" in text and "530,968" in text


def test_describe_all_filters_tables(out: Path) -> None:
    (only,) = describe_all(out, sample_rows=1, tables=["redirects"])
    assert list(only["tables"]) == ["redirects"]
    assert only["tables"]["redirects"]["sample"][0]["from_id"].startswith("Q")
    with pytest.raises(UserError, match="no stage has a table named nope"):
        describe_all(out, tables=["nope"])


def test_verify_checks_target_listings_and_reports_incomplete_stages(out: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    report = verify_build(copy)
    assert not report.problem and report.files_checked == 25 and not report.incomplete
    # a stage listed by targets/*.json whose manifest is gone is named, not silently skipped
    (stage(copy) / "_MANIFEST.json").unlink()
    report = verify_build(copy)
    assert report.problem.startswith("stage wikidata listed in wikidata.json: normalized/wikidata/v3-")
    assert report.problem.endswith("has no manifest")
    # an unfinished stage is listed (the next build resumes it), not failed
    shutil.rmtree(copy)
    shutil.copytree(out, copy)
    work = copy / "normalized" / "wikidata" / ".incomplete" / "v1-000000000000"
    (work / "_shards").mkdir(parents=True)
    marker = {"tables": {"entities": {"file": "entities/part-00002-of-00004.parquet"}}}
    (work / "_shards" / "part-00002.json").write_text(json.dumps(marker))
    (found,) = incomplete_dirs(copy)
    assert (found.directory, found.shards_done, found.num_shards) == (work, 1, 4)
    assert verify_build(copy).incomplete == [found]
