"""The prefetching iterator hands over exactly the producer's items, errors and end."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from entbench.readers.compressed.prefetch import InlineBlocks, Prefetched, usable_cpus


@pytest.mark.parametrize("depth", [0, 3])
def test_items_arrive_in_order_and_complete(depth: int) -> None:
    assert list(Prefetched(iter(range(1000)), depth=depth)) == list(range(1000))


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


@pytest.mark.parametrize("depth", [0, 1])
def test_the_producer_runs_at_most_depth_plus_one_items_ahead(depth: int) -> None:
    """With `depth` 0 the producer makes the next item only once the last was taken: while the
    consumer holds item i, items up to i + 1 exist (`dump_scan.READ_AHEAD_BLOCKS`: one 16 MB block
    of a dump less in memory); with `depth` d, up to i + 1 + d."""
    made: list[int] = []

    def source() -> Iterator[int]:
        for i in range(200):
            made.append(i)
            yield i

    ahead = []
    for item in Prefetched(source(), depth=depth):
        threading.Event().wait(0.0005)  # a consumer slower than its producer, which may run ahead
        ahead.append(len(made) - 1 - item)
    assert max(ahead) <= depth + 1


def test_inline_blocks_iterate_in_order_and_close_their_source() -> None:
    closed = threading.Event()
    blocks = InlineBlocks(counting(5, closed))
    assert [next(iter(blocks)), next(iter(blocks))] == [0, 1]
    blocks.close()
    assert closed.is_set()
    assert usable_cpus() >= 1
