"""Shared pytest fixtures: paths to the committed fixture dumps and a CLI runner."""

from __future__ import annotations

import importlib
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

import entbench

if TYPE_CHECKING:
    from tests.world_support import SamplesBuilds

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"
#: The separate real samples the engine's tests pin their counts on (the bundled default is the
#: demo world, `fixtures/entbench.toml`).
SAMPLES_CONFIG = REPO_ROOT / "tests" / "samples.toml"


def _load_sanitized_extensions() -> None:
    """Under ENTBENCH_SANITIZE=1 (`make sanitize`) the C extensions come from the sanitizer builds.

    Their directory goes first on the package's search path before any test imports them, so every
    `from entbench import _wdscan` gets the sanitized module. Anything else (not built, built without
    the ASan runtime preloaded) stops the run: tests silently skipped for want of a native module
    would make a green sanitizer run mean nothing.
    """
    if os.environ.get("ENTBENCH_SANITIZE") != "1":
        return
    from hatch_build import EXTENSIONS, SANITIZE_DIR  # the repository root is on the path

    directory = REPO_ROOT / SANITIZE_DIR
    entbench.__path__.insert(0, str(directory))
    for name in EXTENSIONS:
        try:
            module = importlib.import_module(f"entbench.{name}")
        except ImportError as exc:
            raise pytest.UsageError(
                f"ENTBENCH_SANITIZE=1: cannot load the sanitizer build of entbench.{name} ({exc}); "
                "run `make sanitize`, which builds it and preloads the ASan runtime"
            ) from exc
        if Path(module.__file__ or "").parent != directory:
            raise pytest.UsageError(f"ENTBENCH_SANITIZE=1 but entbench.{name} came from {module.__file__}")


_load_sanitized_extensions()


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


def run_in_process(
    cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: Sequence[str]
) -> subprocess.CompletedProcess[str]:
    """`entbench ARGS…` run to its end in `cwd`, in this process, by the console script's own `run`
    (exit status and all), output captured: what the command gives in a process of its own but for
    that process's start-up (~1 s of CPU each) and its one-time set-up (`main`: huge pages, the
    worker-process guards). An exception the command lets out fails the test that ran it."""
    from entbench.cli import commands  # noqa: F401 - registers the commands on `cli`
    from entbench.cli.app import cli
    from entbench.cli.main import run

    with monkeypatch.context() as patch:
        patch.chdir(cwd)
        capsys.readouterr()  # only this command's output
        status = run(cli, list(args))
        captured = capsys.readouterr()
    return subprocess.CompletedProcess(["entbench", *args], status, captured.out, captured.err)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test reading the shared demo-world build is `slow`: the quick tier (`make test-quick`,
    `-m "not slow"`) then never waits for that build, and the full suite builds it once.

    The order is the one xdist's worksteal (`make pytest`) splits in two contiguous halves, one per
    worker: tests that declare a time limit above the default (`@pytest.mark.timeout(N)`: the
    README's commands) first, as started last such a test would be the run's tail with the other
    worker idle; then the modules with a test reading the world build; then the rest, each group in
    the order collected (a module's tests stay together, so its module fixtures are made once). The
    first worker then builds the world for its first test, while the second runs tests that never
    wait for it (collected in place, its half began with a test reading the world: one worker idle
    for the whole build, ~30 s)."""
    world_modules = set()
    for item in items:
        if "world_out" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
            world_modules.add(item.nodeid.split("::")[0])
    items.sort(key=lambda item: (-declared_timeout(item), item.nodeid.split("::")[0] not in world_modules))


def declared_timeout(item: pytest.Item) -> float:
    """The seconds a test's own `timeout` mark gives it (0 without one)."""
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark is not None and mark.args else 0.0


@pytest.fixture(scope="session", autouse=True)
def subprocess_bytecode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The Python processes tests start (the README's ~50 commands, `make hansel`, fault rows,
    dask workers) cache their compiled modules in one directory of the session, as a user's Python
    does in their clone: with `PYTHONDONTWRITEBYTECODE` set each one compiled entbench again
    (~0.7 s of CPU per process). The directory is outside the repository and shared by the xdist
    workers (Python writes each cache file atomically)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        patch.setenv("PYTHONPYCACHEPREFIX", str(shared / "pycache"))
        yield


@pytest.fixture(scope="session", autouse=True)
def subprocess_huge_pages() -> Iterator[None]:
    """The `entbench` processes tests start get the huge-page malloc setting from their environment,
    as `engine.process.reexec_with_huge_pages` would give them, so they run with it from the start
    instead of starting a second interpreter each (~0.05 s of CPU per command). The re-execution
    itself is tested in tests/engine/test_process_setup.py, which sets its own environment."""
    from entbench.engine.process import huge_pages_environment

    with pytest.MonkeyPatch.context() as patch:
        for name, value in huge_pages_environment().items():
            patch.setenv(name, value)
        yield


@pytest.fixture(scope="session")
def world_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo world's build directory, every target built once per session (read it, never write)."""
    from tests.world_support import shared_world

    return shared_world(tmp_path_factory)


@pytest.fixture(scope="session")
def real_sources_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory of the demo world's files given as real sources (`--source`), its
    targets built once per session (`tests.world_support.REAL_TARGETS`; read it, never write)."""
    from tests.world_support import shared_real_sources

    return shared_real_sources(tmp_path_factory)


#: The young generation's threshold in the test processes (CPython's default is 700 objects).
GC_YOUNG_THRESHOLD = 50_000


def pytest_collection_finish(session: pytest.Session) -> None:
    """The test process's cyclic GC set for a long session: what collection made (modules, test
    items, parametrized values) frozen out of the GC's sight, and a young generation of 50,000
    objects. A test process lives for ~1,000 tests and keeps large caches (EWT's parsed pairs,
    fixture dumps read once per process); at 700 the GC ran a full collection every ~70,000
    allocations that kept, each walking all of them while freeing almost nothing (EWT's tests and
    their neighbours: 8.4 of 52 CPU s in the GC, 3.7 with this). Reference counting still frees
    everything acyclic at once; cycles wait a little longer. Only the test processes: the
    `entbench` processes and build workers tests start run with the product's own settings."""
    import gc

    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


@pytest.fixture(scope="session")
def samples_builds(tmp_path_factory: pytest.TempPathFactory) -> SamplesBuilds:
    """Builds on the test samples shared by the whole run (`tests.world_support.SamplesBuilds`):
    `samples_builds.seed(out, TARGET, …)` copies a shared build's stages into a test's own `out`."""
    from tests.world_support import shared_samples

    return shared_samples(tmp_path_factory)
