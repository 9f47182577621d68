"""Progress bars that work the same whether tasks run inline, in a process pool or on dask.

Tasks call the `ProgressFn` they are given with (units, items) increments. Inline, that updates
the bar directly; in a worker process it goes through a queue drained by a thread in the main
process. The bar shows units (bytes of input or shards) and an items rate such as entities/s.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from tqdm import tqdm


class StageBar:
    """One tqdm bar for a stage phase, thread-safe, with an items/s postfix."""

    def __init__(self, desc: str, *, total: int | None, unit: str, items: str, enabled: bool) -> None:
        self._lock = threading.Lock()
        self._items = 0
        self._units = 0
        self._total = total
        self._items_name = items
        self._start = time.monotonic()
        self._last_postfix = 0.0
        is_bytes = unit == "B"
        self._bar = tqdm(
            total=total,
            desc=desc,
            unit=unit,
            unit_scale=is_bytes,
            unit_divisor=1024 if is_bytes else 1000,
            disable=not enabled,
            file=sys.stderr,
            dynamic_ncols=True,
            mininterval=0.5,
            leave=True,
        )

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
            if now - self._last_postfix >= 0.5:
                self._set_postfix(now)

    def _set_postfix(self, now: float) -> None:
        rate = self._items / max(now - self._start, 1e-9)
        self._bar.set_postfix_str(f"{self._items:,} {self._items_name}, {rate:,.0f} {self._items_name}/s")
        self._last_postfix = now

    def close(self) -> None:
        """Finish the bar with the final counts."""
        with self._lock:
            self._set_postfix(time.monotonic())
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

    def stop(self) -> None:
        """Stop draining (after all senders finished)."""
        self._queue.put(None)
        self._thread.join(timeout=5)
