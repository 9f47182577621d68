"""The local pool's workers, forked from a fork server: what they inherit from the coordinator."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from entbench.engine.executors.local import ProcessPoolTaskExecutor, reap_fork_server
from entbench.engine.progress import StageBar


def _worker_state(_: int, *, progress: Any) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "server": os.getppid(),
        "variable": os.environ.get("ENTBENCH_TEST_POOL"),
        "cwd": os.getcwd(),
        "sigint_blocked": signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()),
    }


def _states(executor: ProcessPoolTaskExecutor) -> list[dict[str, Any]]:
    bar = StageBar("states", total=None, unit="task", items="rows", enabled=False)
    return list(executor.run(_worker_state, [(i,) for i in range(4)], bar))


@pytest.fixture
def pool() -> Iterator[ProcessPoolTaskExecutor]:
    executor = ProcessPoolTaskExecutor(2)
    try:
        yield executor
    finally:
        executor.close()


def test_workers_take_the_environment_and_directory_the_coordinator_has_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork server keeps the environment and directory it started with; each pool's workers
    still see the coordinator's as they are when that pool starts (a test's or an API user's
    `ENTBENCH_NATIVE=0`, a cache directory set between two builds in one process)."""
    first = ProcessPoolTaskExecutor(2)  # starts the fork server, if no earlier test did
    try:
        _states(first)
    finally:
        first.close()
    monkeypatch.setenv("ENTBENCH_TEST_POOL", "second")
    monkeypatch.chdir(tmp_path)
    second = ProcessPoolTaskExecutor(2)
    try:
        states = _states(second)
    finally:
        second.close()
    assert {state["variable"] for state in states} == {"second"}
    assert {state["cwd"] for state in states} == {str(tmp_path)}


def test_workers_start_with_ctrl_c_blocked(pool: ProcessPoolTaskExecutor) -> None:
    """The coordinator alone answers Ctrl-C (one line, exit 130); workers never see it."""
    assert all(state["sigint_blocked"] for state in _states(pool))
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_the_fork_server_runs_no_thread_and_serves_every_pool(pool: ProcessPoolTaskExecutor) -> None:
    """A forked child keeps none of its parent's threads, only their locks as they were: the
    server that the workers are forked from runs none (pyarrow's jemalloc purging thread is off
    there). Later pools of this process fork their workers from the same server."""
    states = _states(pool)
    servers = {state["server"] for state in states}
    assert len(servers) == 1 and servers != {os.getpid()}
    (server,) = servers
    assert os.listdir(f"/proc/{server}/task") == [str(server)]
    again = ProcessPoolTaskExecutor(2)
    try:
        later = _states(again)
    finally:
        again.close()
    assert {state["server"] for state in later} == servers
    assert not {state["pid"] for state in later} & {state["pid"] for state in states}


def test_the_fork_server_is_reaped_at_exit_and_a_later_pool_starts_another(
    pool: ProcessPoolTaskExecutor,
) -> None:
    """`reap_fork_server` (run at exit) ends the server and waits for it, as the coordinator's
    child: its workers' CPU time and memory then count among the command's (a benchmark's `wait4`
    of a build missed them while the server was left orphaned)."""
    (server,) = {state["server"] for state in _states(pool)}
    pool.close()
    reap_fork_server()
    assert not Path(f"/proc/{server}").exists()  # gone, not a zombie: waited for
    again = ProcessPoolTaskExecutor(2)
    try:
        assert {state["server"] for state in _states(again)} != {server}
    finally:
        again.close()
