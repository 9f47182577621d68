"""Progress that works the same whether tasks run inline, in a process pool or on dask, and reads
well both on a terminal and in a log file.

Tasks call the `ProgressFn` they are given with (units, items) increments. Inline, that updates
the bar directly; in a worker process it goes through a queue drained by a thread in the main
process. The bar shows units (bytes of input or shards) and an items rate such as entities/s.

Where the progress goes (`progress_mode`): on a terminal, a tqdm bar redrawn in place; off a
terminal (stderr redirected to a file or a pipe, `CI` set, `TERM=dumb`), a plain line every
`LINE_INTERVAL` seconds, with no carriage return and no escape sequence, so a log file holds a
few readable lines rather than a redraw every half second. `--no-progress` (`enabled=False`)
shows nothing. entbench writes no colour anywhere, so `NO_COLOR` is always respected; with it
set the bar is also drawn in ASCII only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tqdm import tqdm

#: Seconds between two progress lines written off a terminal.
LINE_INTERVAL = 5.0

ProgressMode = Literal["off", "bar", "lines"]


def progress_mode(enabled: bool, stream: Any = None) -> ProgressMode:
    """How progress is shown on `stream` (default stderr): not at all, as a bar, or as lines."""
    if not enabled:
        return "off"
    stream = sys.stderr if stream is None else stream
    try:
        interactive = bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        interactive = False
    if not interactive or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return "lines"
    return "bar"


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _amount(value: int, unit: str) -> str:
    if unit != "B":
        return f"{value:,} {unit}{'' if value == 1 else 's'}"
    size = float(value)
    for name in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or name == "TiB":
            return f"{value} B" if name == "B" else f"{size:.1f} {name}"
        size /= 1024
    raise AssertionError("unreachable")


class _NoBar:
    """What stands for the bar off a terminal: tqdm (whose import costs ~0.07 s of CPU, paid by
    every build process, pool worker and test run) is only imported to draw one."""

    def update(self, units: int) -> None:
        """Nothing to redraw."""

    def set_postfix_str(self, postfix: str) -> None:
        """Nothing to redraw."""

    def close(self) -> None:
        """Nothing to close."""


def _terminal_bar(desc: str, total: int | None, unit: str) -> tqdm[Any]:
    """A tqdm bar redrawn in place on stderr."""
    from tqdm import tqdm

    is_bytes = unit == "B"
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=is_bytes,
        unit_divisor=1024 if is_bytes else 1000,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
        leave=True,
        ascii=True if os.environ.get("NO_COLOR") else None,
        colour=None,
    )


class StageBar:
    """The progress of one stage phase, thread-safe, with an items/s rate."""

    def __init__(self, desc: str, *, total: int | None, unit: str, items: str, enabled: bool) -> None:
        self._lock = threading.Lock()
        self._desc = desc
        self._unit = unit
        self._items = 0
        self._units = 0
        self._total = total
        self._items_name = items
        self._start = time.monotonic()
        self._last_postfix = 0.0
        self._mode = progress_mode(enabled)
        self._lines = 0
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: tqdm[Any] | _NoBar = _NoBar()
        if self._mode == "bar":
            self._bar = _terminal_bar(desc, total, unit)
        if self._mode == "lines":
            # A thread of its own, so that a line comes every few seconds even while one long task
            # reports nothing (a reduce of a big shard).
            self._ticker = threading.Thread(target=self._tick, daemon=True, name=f"progress {desc}")
            self._ticker.start()

    def update(self, units: int, items: int = 0) -> None:
        """Add progress; refreshes the items rate at most twice a second. The bar never passes its
        total (an estimate of compressed bytes per block may run ahead; the rate would then lie)."""
        with self._lock:
            self._items += items
            if self._total is not None:
                units = max(0, min(units, self._total - self._units))
            if units:
                self._units += units
                self._bar.update(units)
            now = time.monotonic()
            if self._mode == "bar" and now - self._last_postfix >= 0.5:
                self._set_postfix(now)

    def _tick(self) -> None:
        while not self._stopped.wait(LINE_INTERVAL):
            with self._lock:
                if not self._stopped.is_set():
                    self._write_line(time.monotonic())

    def _rate(self, now: float) -> str:
        if not self._items_name:
            return ""
        rate = self._items / max(now - self._start, 1e-9)
        return f"{self._items:,} {self._items_name}, {rate:,.0f} {self._items_name}/s"

    def _set_postfix(self, now: float) -> None:
        if self._items_name:
            self._bar.set_postfix_str(self._rate(now))
        self._last_postfix = now

    def _write_line(self, now: float, done: bool = False) -> None:
        """One plain line: what is done of the total, the items rate, the time taken."""
        done_part = _amount(self._units, self._unit)
        if self._total:
            share = self._units / self._total
            done_part += f" of {_amount(self._total, self._unit)} ({share:.0%})"
        parts = [done_part, self._rate(now), f"{_duration(now - self._start)} elapsed"]
        status = "done, " if done else ""
        print(f"{self._desc}: {status}{', '.join(p for p in parts if p)}", file=sys.stderr, flush=True)
        self._lines += 1

    def close(self) -> None:
        """Finish the bar with the final counts (off a terminal: a last line if the phase was long
        enough to have written one)."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
            now = time.monotonic()
            if self._mode == "lines" and self._lines:
                self._write_line(now, done=True)
            self._set_postfix(now)
            self._bar.close()

    @property
    def items(self) -> int:
        """Items counted so far."""
        return self._items

    @property
    def units(self) -> int:
        """Units counted so far (never past the total)."""
        return self._units


class QueueDrain:
    """Moves (units, items) messages from worker processes onto a bar until stopped."""

    def __init__(self, queue: Any, bar: StageBar) -> None:
        self._queue = queue
        self._bar = bar
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            msg = self._queue.get()
            if msg is None:
                return
            self._bar.update(*msg)

    def stop(self, *, abandon: bool = False) -> None:
        """Stop draining (after all senders finished).

        `abandon` leaves the (daemon) thread to die with the process instead: after workers were
        terminated, one may have died holding the queue's shared write lock (or halfway through a
        message), and a `put` of the end marker would then wait forever."""
        if abandon:
            return
        self._queue.put(None)
        self._thread.join(timeout=5)
