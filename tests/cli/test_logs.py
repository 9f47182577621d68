"""A build's progress in a log file: plain lines, never carriage-return redraws; none at all with
`--no-progress` (issue 34, item 4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES_CONFIG

RunCli = Callable[..., Any]


def test_a_build_logs_plain_progress_lines_off_a_terminal(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from entbench.engine import progress

    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.001)  # every phase lasts long enough for one
    monkeypatch.setenv("NO_COLOR", "1")
    args = ["build", "wikidata", "--config", str(SAMPLES_CONFIG), "--out", str(tmp_path / "out")]
    built = run_cli(args)
    assert built.exit_code == 0, built.stderr
    assert "\r" not in built.stderr and "\x1b" not in built.stderr
    lines = built.stderr.splitlines()
    assert any(line.startswith("wikidata [map]: done, ") for line in lines), built.stderr
    assert any(line.startswith("wikidata [reduce]: done, ") for line in lines), built.stderr

    quiet = run_cli([*args[:-1], str(tmp_path / "quiet"), "--no-progress"])
    assert quiet.exit_code == 0, quiet.stderr
    assert "[map]" not in quiet.stderr and "[reduce]" not in quiet.stderr
    assert "wikidata: wrote " in quiet.stderr  # what was built is still said
