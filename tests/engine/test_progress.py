"""Progress bars count what was done, once, on the bar of the phase that did it (issue 19: a tty
bar once counted ~290k entities for a 60k dump, with a 22 h ETA)."""

from __future__ import annotations

from typing import Any

from entbench.engine.executors.local import ProcessPoolTaskExecutor
from entbench.engine.progress import StageBar


def test_a_bar_never_passes_its_total() -> None:
    bar = StageBar("test", total=100, unit="B", items="rows", enabled=False)
    bar.update(80, 1)
    bar.update(50, 1)  # an estimate running ahead of the real total
    bar.update(10, 1)
    assert bar.units == 100 and bar.items == 3
    bar.close()


def report(units: int, items: int, *, progress: Any) -> int:
    """A task reporting its progress in many small messages before it returns."""
    for _ in range(units):
        progress(1, items)
    return units


def test_every_message_of_a_phase_lands_on_its_bar_before_the_next_phase() -> None:
    """Worker messages reach the pipe before the task's result does (a SimpleQueue), so a phase's
    bar has all of them when it closes and none reaches the next phase's bar."""
    executor = ProcessPoolTaskExecutor(2)
    try:
        for phase in range(3):
            bar = StageBar(f"phase {phase}", total=None, unit="shard", items="rows", enabled=False)
            tasks = [(200, phase + 1) for _ in range(10)]
            done = list(executor.run(report, tasks, bar))
            assert sum(done) == 2000
            assert bar.units == 2000 and bar.items == 2000 * (phase + 1), phase
            bar.close()
    finally:
        executor.close()
