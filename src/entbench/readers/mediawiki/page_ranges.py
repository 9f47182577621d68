"""Reading a range of an uncompressed XML dump's pages: the unit of a map task on a plain dump.

A task covers the pages whose `<page>` starts in its byte range. Its ends are found by small reads
around the range's ends, then its bytes are read a chunk at a time as they are parsed, so a task
holds a chunk, not its range (which grows with the dump up to `--chunk-mb`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from entbench.errors import DataError

PAGE_OPEN = b"<page>"
PAGE_CLOSE = b"</page>"


def read_page_range(path: str, start: int, end: int) -> tuple[int, bytes]:
    """The pages of an uncompressed dump whose `<page>` starts in [start, end), and their offset."""
    offset, chunks = page_range(path, start, end)
    return offset, b"".join(chunks)


#: Bytes read at a time while looking for a range's first and last pages.
_SEEK_WINDOW = 1 << 20


def page_range(path: str, start: int, end: int, chunk_bytes: int = 4 << 20) -> tuple[int, Iterator[bytes]]:
    """`read_page_range` as chunks of about `chunk_bytes`, read as they are consumed.

    A map task of a range held it whole (read, then copied from its first `<page>`): its memory
    grew with the task, which grows with the dump up to `--chunk-mb`. The range's ends are found
    first, by reads of a window around each, so that a dump cut inside the range's last page is
    reported before any of it is parsed, as before."""
    with open(path, "rb") as f:
        first = _find_forward(f, start, end, PAGE_OPEN)
        if first < 0:
            return end, iter(())
        last_open = _find_backward(f, first, end, PAGE_OPEN)
        close = _find_forward(f, last_open, None, PAGE_CLOSE)
        if close < 0:
            raise DataError("a <page> is never closed (truncated dump?)", path=path, offset=last_open)
    return first, _read_span(path, first, close + len(PAGE_CLOSE), chunk_bytes)


def _find_forward(f: BinaryIO, position: int, before: int | None, needle: bytes) -> int:
    """Where `needle` first occurs in `f` at or after `position` and starting before `before`
    (None: the end of the file), or -1."""
    carry = len(needle) - 1
    while before is None or position < before:
        f.seek(position)
        data = f.read(_SEEK_WINDOW + carry)
        limit = len(data) if before is None else min(len(data), before - position + carry)
        found = data.find(needle, 0, limit)
        if found >= 0:
            return position + found
        if len(data) <= carry:
            return -1
        position += len(data) - carry
    return -1


def _find_backward(f: BinaryIO, after: int, before: int, needle: bytes) -> int:
    """Where `needle` last starts in [after, before) of `f` (the caller knows one at `after`)."""
    carry = len(needle) - 1
    stop = before
    while stop > after:
        begin = max(after, stop - _SEEK_WINDOW)
        f.seek(begin)
        data = f.read(stop - begin + carry)
        found = data.rfind(needle, 0, stop - begin + carry)
        if found >= 0:
            return begin + found
        stop = begin
    return after


def _read_span(path: str, start: int, end: int, chunk_bytes: int) -> Iterator[bytes]:
    try:
        yield from file_range(path, start, end, chunk_bytes)
    except RangeCutShort as exc:
        raise DataError("the dump became shorter while it was read", path=path, offset=exc.offset) from exc


class RangeCutShort(EOFError):
    """`file_range`'s file ended at `offset`, before the range did."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"the file ends at byte {offset}, before the range does")
        self.offset = offset


def file_range(path: str, start: int, end: int, chunk_bytes: int) -> Iterator[bytes]:
    """The bytes [start, end) of a file, `chunk_bytes` at most at a time; `RangeCutShort` (an
    `EOFError`) if the file ends first."""
    with open(path, "rb") as f:
        f.seek(start)
        position = start
        while position < end:
            chunk = f.read(min(chunk_bytes, end - position))
            if not chunk:
                raise RangeCutShort(position)
            position += len(chunk)
            yield chunk
