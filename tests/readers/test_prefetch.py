"""The prefetching iterator hands over exactly the producer's items, errors and end."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from entbench.readers.compressed.prefetch import InlineBlocks, Prefetched, usable_cpus


def test_items_arrive_in_order_and_complete() -> None:
    assert list(Prefetched(iter(range(1000)), depth=3)) == list(range(1000))


def test_producer_error_arrives_after_the_items_before_it() -> None:
    def source() -> Iterator[int]:
        yield 1
        yield 2
        raise EOFError("stream ended early")

    seen: list[int] = []
    with pytest.raises(EOFError, match="stream ended early"):
        for item in Prefetched(source()):
            seen.append(item)
    assert seen == [1, 2]


def counting(n: int, closed: threading.Event) -> Iterator[int]:
    """0..n-1, setting `closed` when the generator finishes or is closed."""
    try:
        yield from range(n)
    finally:
        closed.set()


def test_stopping_early_closes_the_producer_and_its_thread() -> None:
    closed = threading.Event()
    prefetched = Prefetched(counting(10_000, closed), depth=2)
    for item in prefetched:
        if item == 5:
            break
    prefetched.close()
    assert closed.is_set()
    assert not any(t.name == "entbench-prefetch" and t.is_alive() for t in threading.enumerate())


def test_inline_blocks_iterate_in_order_and_close_their_source() -> None:
    closed = threading.Event()
    blocks = InlineBlocks(counting(5, closed))
    assert [next(iter(blocks)), next(iter(blocks))] == [0, 1]
    blocks.close()
    assert closed.is_set()
    assert usable_cpus() >= 1
