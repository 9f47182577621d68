"""Two builds into one `--out`: the lock file (`<out>/.lock`, `Builder._lock`) makes them take
turns, so neither corrupts the other's stages and both finish with the bytes of solo builds."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from entbench.engine.inspect import verify_build
from tests.faults.fault_support import REPO, WIKIDATA_ARGS, snapshot

ENTRY = "from entbench.cli.main import main; main()"


def start(target: str, out: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-c", ENTRY, "build", target, "--out", str(out), "--no-progress"]
    args += [*WIKIDATA_ARGS, *extra]
    with open(log, "wb") as stderr:
        return subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr)


def wait_for(predicate: object, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(scope="module")
def references(solo_build: Callable[[str], Path]) -> dict[str, dict[str, str]]:
    return {target: snapshot(solo_build(target)) for target in ("wikidata", "kb")}


def test_a_build_waits_for_the_lock_holder(tmp_path: Path, references: dict[str, dict[str, str]]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "build.log"
    with open(out / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another build is running
        proc = start("wikidata", out, log, "--no-card")  # the stages are compared, not the card
        try:
            assert wait_for(lambda: b"waiting for another build holding" in log.read_bytes()), log.read_text()
            time.sleep(0.5)
            assert proc.poll() is None
            assert not (out / "normalized").exists()  # it touched no stage while waiting
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    assert proc.wait(timeout=120) == 0, log.read_text()
    assert snapshot(out) == references["wikidata"]


def test_two_concurrent_builds_into_one_out(tmp_path: Path, references: dict[str, dict[str, str]]) -> None:
    out = tmp_path / "out"
    procs = [start(target, out, tmp_path / f"{target}.log") for target in ("kb", "wikidata")]
    codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0, 0], [(tmp_path / f"{t}.log").read_text()[-2000:] for t in ("kb", "wikidata")]
    report = verify_build(out)
    assert not report.problem
    both = snapshot(out)
    for target in ("kb", "wikidata"):
        assert {k: v for k, v in both.items() if k in references[target]} == references[target]
    assert set(both) == set(references["kb"]) | set(references["wikidata"])
    assert (out / "cards" / "kb" / "README.md").is_file() and (
        out / "cards" / "wikidata" / "README.md"
    ).is_file()
    assert not [p for p in (out / "cards").iterdir() if p.name.startswith(".")]
