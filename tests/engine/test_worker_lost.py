"""A worker process that dies under a build (the OOM killer's SIGKILL, most often) stops the build
with one clear line that says what to do, not "internal error: BrokenProcessPool"."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from entbench.engine.executors.local import ProcessPoolTaskExecutor, lost_worker_message
from entbench.engine.progress import StageBar
from entbench.errors import WorkerLost


def die_on(value: int, *, progress: Any) -> int:
    """A task that kills its own worker with SIGKILL when given 3, as the OOM killer would."""
    if value == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    progress(1, 0)
    return value


def test_a_worker_killed_under_a_task_is_a_worker_lost_error_naming_the_likely_cause() -> None:
    executor = ProcessPoolTaskExecutor(2)
    bar = StageBar("map", total=None, unit="task", items="rows", enabled=False)
    try:
        with pytest.raises(WorkerLost) as caught:
            list(executor.run(die_on, [(v,) for v in range(8)], bar))
    finally:
        bar.close()
        executor.close()
    message = str(caught.value)
    assert "killed (SIGKILL)" in message and "out-of-memory killer" in message
    assert "fewer --workers (this build had 2)" in message and "to resume" in message


@pytest.mark.parametrize(
    ("codes", "workers", "expected"),
    [
        ([-9, -15], 4, "was killed (SIGKILL)"),
        ([-11, -15], 2, "was killed by SIGSEGV"),
        ([3, -15], 2, "exited with status 3"),
        ([-15, -15], 2, "was killed by SIGTERM"),
        ([], 2, "ended unexpectedly"),
    ],
)
def test_the_message_names_how_the_worker_ended(codes: list[int], workers: int, expected: str) -> None:
    message = lost_worker_message(codes, workers)
    assert expected in message
    fewer = f"with fewer --workers (this build had {workers}) to resume"
    assert message.endswith(f"re-run the same command {fewer}")


def test_one_worker_is_not_told_to_use_fewer() -> None:
    assert "fewer" not in lost_worker_message([-9], 1)
