"""What a build says it made: `entbench build` prints its final tables and rows and warns about an
empty one (naming the counters that took its rows), `entbench summary` lists a build directory's
targets, and an export of an empty table says so (issue 18, item 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES_CONFIG

RunCli = Callable[..., Any]


def test_an_empty_final_table_is_a_warning_naming_where_its_rows_went(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """On the test samples no WikiReading statement has an article to join: every split is empty,
    and the warning names the counter that took the rows (`dropped_no_article`)."""
    out = str(tmp_path / "out")
    built = run_cli(["build", "wikireading", "--config", str(SAMPLES_CONFIG), "--out", out, "--no-progress"])
    assert built.exit_code == 0, built.stderr
    assert "final tables of wikireading:" in built.stdout
    assert "  wikireading.train  " in built.stdout and " 0 rows" in built.stdout
    warnings = [
        line for line in built.stderr.splitlines() if line.startswith("entbench: warning: final table")
    ]
    assert len(warnings) == 6  # train, valid, test, property statistics and the two audits' decisions
    assert all("wikireading_instances: dropped_no_article" in w for w in warnings), warnings
    exported = run_cli(["export", "wikireading", "--from", out, "--out", str(tmp_path / "x")])
    assert exported.exit_code == 0
    assert "entbench: warning: wikireading: train is empty (0 records)" in exported.stderr


def test_summary_lists_every_target_built(run_cli: RunCli, world_out: Path) -> None:
    shown = run_cli(["summary", "--from", str(world_out)])
    assert shown.exit_code == 0, shown.stderr
    assert "wikireading:\n" in shown.stdout and "  wikireading.train " in shown.stdout
    assert "hansel-train:\n" in shown.stdout and "empty table" not in shown.stdout
    assert shown.stdout.count(":\n") == 13


def test_summary_of_a_directory_without_builds_is_a_user_error(run_cli: RunCli, tmp_path: Path) -> None:
    shown = run_cli(["summary", "--from", str(tmp_path)])
    assert shown.exit_code == 2 and "no target was built there" in shown.stderr
