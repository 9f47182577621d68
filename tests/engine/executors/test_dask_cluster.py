"""A real dask cluster: `dask scheduler` and `dask worker --nworkers 2` as processes of their own.

What a user who outgrows one machine runs (README "On a cluster"): a scheduler, workers that
connect to it, and `entbench build … --executor dask --dask-address tcp://…` from a third process.
Here all three are on 127.0.0.1 (free ports: the scheduler picks its own and writes its address to
a scheduler file) and share the build directory, as hosts share a file system. The build is the
demo world's `hansel-train` (two Wikidata scans, a Wikipedia scan, the DuckDB kb stages and the
partitioned joins of `hansel_links`); every file it writes must be the local executor's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")

TARGET = "hansel-train"
#: Seconds the scheduler and the workers get to come up (a loaded CI machine starts slowly).
START_TIMEOUT = 120


@contextlib.contextmanager
def dask_cluster(directory: Path, workers: int = 2) -> Iterator[str]:
    """A scheduler and `workers` worker processes (one nanny) on 127.0.0.1; yields the scheduler's
    address and stops every process it started, also when the body fails."""
    directory.mkdir(parents=True, exist_ok=True)
    scheduler_file = directory / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    started: list[subprocess.Popen[bytes]] = []
    logs = []
    try:
        for name, argv in (
            (
                "scheduler",
                [
                    *dask,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
            ),
            (
                "worker",
                [
                    *dask,
                    "worker",
                    "--scheduler-file",
                    str(scheduler_file),
                    "--host",
                    "127.0.0.1",
                    "--nworkers",
                    str(workers),
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--local-directory",
                    str(directory / "worker-space"),
                    "--death-timeout",
                    str(START_TIMEOUT),
                ],
            ),
        ):
            log = open(directory / f"{name}.log", "wb")  # noqa: SIM115 - closed below
            logs.append(log)
            # A session of its own: the nanny's worker processes are stopped with it (its group).
            started.append(subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True))
            if name == "scheduler":
                _wait_for(lambda: scheduler_file.is_file() and scheduler_file.stat().st_size > 0, started)
        address = json.loads(scheduler_file.read_text())["address"]
        _wait_for_workers(address, workers, started)
        yield address
    finally:
        for process in reversed(started):  # workers first, then the scheduler
            _stop(process)
        for log in logs:
            log.close()


def _wait_for(ready: object, processes: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():  # type: ignore[operator]
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError("the dask cluster did not come up")
        time.sleep(0.2)


def _wait_for_workers(address: str, workers: int, processes: list[subprocess.Popen[bytes]]) -> None:
    from distributed import Client

    with Client(address, timeout=START_TIMEOUT) as client:
        _wait_for(lambda: len(client.scheduler_info(n_workers=-1)["workers"]) >= workers, processes)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's own group (the nanny and its workers), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


def _tasks_executed(dask_worker: object) -> int:
    """How many tasks a worker has run (`Client.run` passes the worker)."""
    return int(dask_worker.state.executed_count)  # type: ignore[attr-defined]


def output_files(stage_dir: Path) -> dict[str, str]:
    """sha256 of every file a stage wrote (shards, sidecars, manifest), but its run record."""
    return {
        path.relative_to(stage_dir).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(stage_dir.rglob("*"))
        if path.is_file() and path.name != "_RUN.json"
    }


def test_a_scheduler_and_two_worker_processes_write_the_local_bytes(world_out: Path, tmp_path: Path) -> None:
    """`entbench build hansel-train --executor dask --dask-address …` on a real cluster writes, file for
    file, what the local executor wrote for the demo world (`world_out`, built with one worker)."""
    out = tmp_path / "shared" / "out"  # on several hosts: a path every worker sees (a shared file system)
    with dask_cluster(tmp_path / "cluster") as address:
        argv = ["build", TARGET, "--out", str(out), "--executor", "dask", "--dask-address", address]
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("entbench")), *argv, "--no-progress"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        from distributed import Client

        with Client(address) as client:
            executed = client.run(_tasks_executed)
    assert len(executed) == 2 and all(executed.values()), executed  # both worker processes worked
    local = json.loads((world_out / "targets" / f"{TARGET}.json").read_text())["stages"]
    remote = json.loads((out / "targets" / f"{TARGET}.json").read_text())["stages"]
    assert remote == local  # the same stages, fingerprints and versions
    for stage, rel in local.items():
        files = output_files(out / rel)
        assert any(name.endswith(".parquet") for name in files), stage
        assert files == output_files(world_out / rel), stage
