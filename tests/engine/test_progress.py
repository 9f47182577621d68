"""Progress bars count what was done, once, on the bar of the phase that did it (issue 19: a tty
bar once counted ~290k entities for a 60k dump, with a 22 h ETA)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from entbench.engine.executors.local import ProcessPoolTaskExecutor, interrupts_held
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


def hold_the_progress_lock(*, progress: Any) -> None:
    """A task that reports once, then keeps the progress queue's shared write lock: what a worker
    terminated halfway through a `put` leaves behind."""
    from entbench.engine.executors import local

    progress(1, 0)
    local._worker_queue._wlock.acquire()
    time.sleep(600)


def test_an_interrupt_stops_the_pool_even_when_a_dead_worker_held_the_progress_lock() -> None:
    """Ctrl-C in the map once hung the build for good (issue 19's CI run): the coordinator, after
    terminating the workers, waited to put the drain's end marker behind the lock a killed worker
    held. Now it abandons the drain and the interrupt reaches the caller."""
    executor = ProcessPoolTaskExecutor(2)
    bar = StageBar("map", total=None, unit="task", items="rows", enabled=False)
    raised: list[BaseException] = []

    def tasks() -> Iterator[tuple[Any, ...]]:
        yield ()
        while bar.units < 1:
            time.sleep(0.01)
        time.sleep(0.5)  # the task now holds the lock
        raise KeyboardInterrupt

    def run() -> None:
        try:
            list(executor.run(hold_the_progress_lock, tasks(), bar))
        except BaseException as exc:  # the interrupt is what the test waits for
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=120)
    executor.close()
    assert not thread.is_alive(), "the executor hung after an interrupt"
    assert len(raised) == 1 and isinstance(raised[0], KeyboardInterrupt)


def sigint_blocked() -> bool:
    """Whether this process's main thread blocks SIGINT (run in a spawned child)."""
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())


@pytest.fixture
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during the test, as in a terminal: a shell that starts the
    suite as a background job (`make test &`, `nohup`) hands it SIGINT ignored, and an ignored
    signal is dropped, never held."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("sigint_raises")
def test_a_ctrl_c_while_workers_are_spawned_is_held_then_delivered() -> None:
    """While workers are spawned, SIGINT was ignored (for them to inherit) and so dropped: a Ctrl-C
    in that window let the build run on to exit 0 (seen in CI). It is now blocked instead: held,
    then delivered, here, as the window closes at the latest."""
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        time.sleep(1)  # not reached: the interrupt has arrived by now
    assert not sigint_blocked()


@pytest.mark.usefixtures("sigint_raises")
def test_a_ctrl_c_another_thread_receives_while_workers_start_is_raised_after_the_start() -> None:
    """A Ctrl-C sent to the process group reaches whichever thread does not block it (pyarrow's,
    OpenBLAS's): the main thread raised KeyboardInterrupt in the middle of starting the workers, one
    of which the pool never recorded, never stopped, and saw fail once the coordinator had exited.
    Now the start runs to its end and the interrupt is raised as the window closes."""
    ready, received = threading.Event(), threading.Event()

    def receive_ctrl_c() -> None:
        ready.wait(10)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        received.set()

    receiver = threading.Thread(target=receive_ctrl_c)  # started before the block: SIGINT open
    receiver.start()
    steps = 0
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            ready.set()
            assert received.wait(10)
            for _ in range(50):  # many points where a pending interrupt would be raised
                time.sleep(0.001)
                steps += 1
        time.sleep(1)  # not reached: the interrupt is raised as the block ends
    receiver.join()
    assert steps == 50
    assert not sigint_blocked()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_workers_spawned_while_interrupts_are_held_never_see_ctrl_c() -> None:
    """The workers inherit the blocked SIGINT through fork and exec (no KeyboardInterrupt traceback
    from each of them); the coordinator's mask is as it was afterwards."""
    context = multiprocessing.get_context("spawn")
    with interrupts_held(), context.Pool(1) as pool:
        assert pool.apply(sigint_blocked) is True
    assert not sigint_blocked()


class _Terminal:
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    from entbench.engine.progress import progress_mode

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert progress_mode(True, _Terminal()) == "bar"
    assert progress_mode(False, _Terminal()) == "off"
    with open(os.devnull, "w") as log_file:
        assert progress_mode(True, log_file) == "lines"
    monkeypatch.setenv("CI", "true")
    assert progress_mode(True, _Terminal()) == "lines"
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "dumb")
    assert progress_mode(True, _Terminal()) == "lines"


def test_off_a_terminal_progress_is_a_plain_line_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Captured stderr is not a terminal: no carriage return, no escape sequence, whole lines
    saying how far the phase is, and a last line when it is done (issue 34, item 4)."""
    from entbench.engine import progress

    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.05)
    bar = StageBar("wikidata [map]", total=4 << 20, unit="B", items="entities", enabled=True)
    bar.update(1 << 20, 250)
    deadline = time.monotonic() + 30
    while "wikidata [map]: 1.0 MiB" not in capsys.readouterr().err and time.monotonic() < deadline:
        time.sleep(0.01)
    bar.update(3 << 20, 750)
    bar.close()
    bar.close()  # closing twice writes nothing more
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    assert err.splitlines()[-1].startswith(
        "wikidata [map]: done, 4.0 MiB of 4.0 MiB (100%), 1,000 entities, "
    )
    assert err.count("done,") == 1


def test_without_progress_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from entbench.engine import progress

    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.01)
    bar = StageBar("wikidata [map]", total=10, unit="B", items="entities", enabled=False)
    bar.update(5, 1)
    time.sleep(0.05)
    bar.close()
    assert capsys.readouterr().err == ""
