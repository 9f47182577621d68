"""Shared pytest fixtures: paths to the committed fixture dumps and a CLI runner."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"
#: The separate real samples the engine's tests pin their counts on (the bundled default is the
#: demo world, `fixtures/entbench.toml`).
SAMPLES_CONFIG = REPO_ROOT / "tests" / "samples.toml"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The repository's `fixtures/` directory (real dumps + the bundled config)."""
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_config() -> Path:
    """The test samples' config (`tests/samples.toml`)."""
    return SAMPLES_CONFIG


@pytest.fixture
def run_cli() -> Callable[..., Result]:
    """Invoke `entbench ARGS…` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from entbench.cli import commands  # noqa: F401 - registers commands
    from entbench.cli.app import cli

    def run(args: Sequence[str]) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return run


@pytest.fixture(scope="session")
def world_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo world's build directory, every target built once per session (read it, never write)."""
    from tests.world_support import shared_world

    return shared_world(tmp_path_factory)
