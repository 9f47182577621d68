"""The demo world (`fixtures/entbench.toml`, no --config, no --source), every target built once
per test session and shared by the tests that read a whole world build (cards, loaders, the README
commands, the issue thresholds).

Under pytest-xdist each worker is its own session, so the build goes to one directory all workers
share (next to their own base temporary directories): the first worker to take the lock builds
every target, the others wait for it and then read the same build.

A test that must write into a build of the world (the README's commands, which start with
`make run`) starts from a copy of this one (`copy_world`): its own builds then find the world's
stages done and build only what differs. That is correct by construction: a stage's directory is
named by its fingerprint (code version, parameters, inputs), so a copied stage is reused only where
the build would have written the same bytes.

The same world's files given as real sources (`--source`, so each stage's documented defaults and
nothing of the demo's parameters) are built once per session too (`shared_real_sources`), for the
tests of that boundary and the README's real-use commands, which build the same targets from the
same files.

Builds on the test samples (`tests/samples.toml`) are shared the same way (`SamplesBuilds`, the
`samples_builds` fixture): each (target, sources, parameters) is built once per run, and a test
whose point is what a build wrote, not the build, seeds its own directory with a copy of those
stages before its own build there.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from entbench import api
from entbench.engine import build_out
from entbench.golden import GOLDEN_TARGETS  # every target of the demo world, in build order
from tests.cards.card_support import build
from tests.conftest import FIXTURES, SAMPLES_CONFIG

DONE = "world-built.json"
WORLD = FIXTURES / "world"
#: The demo world's files given as real sources: the same bytes, so only the parameters differ.
REAL_SOURCES = (
    f"wikidata={WORLD / 'wikidata-new.json.gz'}",
    f"wikipedia={WORLD / 'enwiki.xml.bz2'}",
)
#: The targets of `REAL_SOURCES`' shared build, in build order (each reuses the scans of those before).
REAL_TARGETS = ("wikidata", "wikireading", "alias-table", "wikient", "enteval-tasks")


def build_once(out: Path, targets: Sequence[str], build_target: Callable[[str], object]) -> None:
    """`build_target` each of `targets` from `out`'s parent, unless a finished build is in `out`;
    under a lock, so that of several processes the first builds and the others wait for it."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (out / DONE).is_file():
            return
        with contextlib.chdir(out.parent):
            for target in targets:
                build_target(target)
        (out / DONE).write_text(json.dumps(list(targets)) + "\n", encoding="utf-8")


def build_world(out: Path) -> None:
    """Build every world target into `out` (cards included) unless a finished build is there.

    The builds run from `out`'s parent with `--out` given as its bare name, as `make run` runs them
    from a checkout (`entbench build TARGET --out entbench-out`): each card records that invocation,
    so a `make run` on a copy of this build named `entbench-out` (the README test) finds every card
    up to date too, instead of drawing all of them again for another recorded `--out`."""
    # no config, no source: the demo world
    build_once(out, GOLDEN_TARGETS, lambda target: build(target, Path(out.name), config=None))


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of the builds every xdist worker of this run shares (the session's own
    temporary directory without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory of the demo world, every target built (read it, never write to it)."""
    out = shared_dir(tmp_path_factory) / "world" / "entbench-out"
    build_world(out)
    return out


def shared_real_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build directory of `REAL_TARGETS` from `REAL_SOURCES`, without cards (read it, never
    write to it)."""
    out = shared_dir(tmp_path_factory) / "real-sources" / "out"

    def build_target(target: str) -> None:
        api.build(target, sources=REAL_SOURCES, out=out, progress=False, log=lambda _m: None, card=False)

    build_once(out, REAL_TARGETS, build_target)
    return out


def copy_world(world: Path, dest: Path) -> None:
    """Copy the finished world build `world` to `dest` (a new directory) for a test that writes into
    it: real copies, never links, so that nothing the test rewrites reaches the shared build."""
    shutil.copytree(world, dest, ignore=shutil.ignore_patterns(DONE, ".lock"))


def copy_stages(world: Path, dest: Path, targets: Sequence[str]) -> None:
    """Copy the finished stage directories of `targets` in the world build `world` into `dest`,
    without the targets' listings or cards: a build of those targets in `dest` then finds every
    stage done, as a build that had run before would have left it, and writes the rest itself."""
    for target in targets:
        listing = build_out.listing_file(world, target).read_bytes()
        for rel in build_out.listed_stages(listing).values():
            if not (dest / rel).is_dir():
                shutil.copytree(world / rel, dest / rel)


class SamplesBuilds:
    """Builds on the test samples (`tests/samples.toml` unless another config is named), each one
    once per test run and shared by every xdist worker, to seed the build directories of tests
    whose point is what a build wrote rather than the build itself.

    Every shared build goes to one directory: a stage's directory is named by its fingerprint, so
    builds of different targets or parameters there share their common stages and never overwrite
    one another's (the engine's lock on the directory orders builds from several workers). A test
    never builds or writes there: `seed` copies the stages it needs into its own directory, where
    its own build then finds them done and runs only what it changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.out = root / "out"

    def build(
        self,
        target: str,
        *,
        sources: Sequence[str] = (),
        params: Sequence[str] = (),
        config: Path = SAMPLES_CONFIG,
    ) -> dict[str, Path]:
        """Stage -> directory of `target`'s shared build (read them, never write to them), built
        by the first caller of this run (under a lock) and recorded for the others."""
        key = json.dumps([target, str(config), list(sources), list(params)])
        done = self.root / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "builds.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not done.is_file():
                dirs = api.build(
                    target,
                    config=config,
                    sources=sources,
                    params=params,
                    out=self.out,
                    progress=False,
                    log=lambda _m: None,
                    card=False,
                )
                relative = {stage: str(path.relative_to(self.out)) for stage, path in dirs.items()}
                done.write_text(json.dumps(relative) + "\n", encoding="utf-8")
        return {stage: self.out / rel for stage, rel in json.loads(done.read_text(encoding="utf-8")).items()}

    def seed(
        self,
        dest: Path,
        target: str,
        *,
        sources: Sequence[str] = (),
        params: Sequence[str] = (),
        config: Path = SAMPLES_CONFIG,
        only: Callable[[str], bool] = lambda _stage: True,
    ) -> None:
        """Copy the finished stages of `target`'s shared build (those whose name passes `only`)
        into `dest`, each at its place in a build directory: a build there of the same target,
        sources and parameters finds them done, as one that had run before would."""
        for stage, path in self.build(target, sources=sources, params=params, config=config).items():
            rel = path.relative_to(self.out)
            if only(stage) and not (dest / rel).is_dir():
                shutil.copytree(path, dest / rel)


def shared_samples(tmp_path_factory: pytest.TempPathFactory) -> SamplesBuilds:
    """The run's shared builds on the test samples (`SamplesBuilds`)."""
    return SamplesBuilds(shared_dir(tmp_path_factory) / "samples")
