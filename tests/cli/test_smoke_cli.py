"""The CLI end to end on the bundled fixtures."""

from __future__ import annotations

import json
from pathlib import Path


def test_build_wikidata_prints_output_dirs(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    result = run_cli(["build", "wikidata", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    target = json.loads((out / "targets" / "wikidata.json").read_text())
    assert target["target"] == "wikidata"
    stage_dir = out / target["stages"]["wikidata"]
    assert (stage_dir / "_MANIFEST.json").is_file()
    assert str(stage_dir) in result.output
