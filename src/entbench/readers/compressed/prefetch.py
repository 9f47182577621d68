"""Run a producer iterator a few items ahead in a background thread.

Decompression (isal, bz2) releases the GIL, so a thread that decompresses the next blocks while
the calling thread parses the current one puts a second core to work even with `--workers 1`,
without changing what is produced or in which order.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

_DONE = object()


class _Failure:
    """An exception raised by the producer, handed to the consumer at the point it occurred."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Prefetched(Generic[T]):
    """Iterate `source` in a daemon thread: `depth` finished items wait for the consumer while the
    producer makes the next one; with `depth` 0, the producer makes the next item only once the
    consumer took the last, so it holds one item ahead of the consumer, not two (a block of a dump
    less in memory, decompressed all the same while the consumer works on the one it took).

    Items and the producer's exception (if any) reach the consumer in the producer's order. Closing
    (or leaving a `with` block, or garbage collection of the generator) stops the producer at its
    next item and waits for it, so no thread outlives its consumer for long.
    """

    def __init__(self, source: Iterator[T], depth: int = 2) -> None:
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        self._source = source
        self._depth = depth
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max(1, depth))
        self._taken = threading.Event()  # set by the consumer on each item it takes
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="entbench-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        self._taken.clear()
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                break
            except queue.Full:
                continue
        else:
            return False
        if self._depth == 0:
            while not self._taken.wait(0.1):
                if self._stop.is_set():
                    return False
        return True

    def _produce(self) -> None:
        try:
            for item in self._source:
                if not self._put(item):
                    return
        except BaseException as exc:  # re-raised in the consumer's thread
            self._put(_Failure(exc))
            return
        finally:
            close = getattr(self._source, "close", None)
            if close is not None and self._stop.is_set():
                close()
        self._put(_DONE)

    def __iter__(self) -> Iterator[T]:
        try:
            while True:
                item = self._queue.get()
                self._taken.set()
                if item is _DONE:
                    return
                if isinstance(item, _Failure):
                    raise item.exc
                yield item  # type: ignore[misc]
        finally:
            self.close()

    def close(self) -> None:
        """Stop the producer and wait for its thread."""
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> Prefetched[T]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class InlineBlocks(Generic[T]):
    """`Prefetched`'s interface without the thread: for a process with a single CPU."""

    def __init__(self, source: Iterator[T]) -> None:
        self._source = source

    def __iter__(self) -> Iterator[T]:
        return self._source

    def close(self) -> None:
        """Close the source (a generator holding a decompressor)."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
