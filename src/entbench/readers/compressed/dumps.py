"""Reading line-oriented dumps: compression, format sniffing, line-aligned blocks and byte ranges.

Wikidata JSON dumps are one entity per line, framed as a JSON array (`[` first line, `,` line
ends, `]` last line) or not framed at all. This module and its two siblings are the only code that
touches compressed bytes:

* uncompressed input is split into byte ranges that workers read independently (a line belongs
  to the range its first byte falls in);
* `.gz` is decompressed with isal (4-10x faster than zlib here) and `.bz2` with rapidgzip's
  parallel bz2 reader (one thread per worker), sequentially, into line-aligned blocks that workers
  parse in parallel (`readers.compressed.blocks`);
* with several workers, a `.gz` dump is read once through rapidgzip, which leaves a seek index
  (`readers.compressed.gzip_index`); later runs split the *decompressed* stream at the index's checkpoints
  and every worker decompresses its own ranges, so decompression runs in parallel too.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar, cast

from entbench.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"


@dataclass(frozen=True)
class DumpFormat:
    """How a dump file is stored."""

    compression: str  # none | gzip | bz2
    kind: str  # json-lines (framed or not)


class StreamTruncated(Exception):
    """The compressed stream ended before its end-of-stream marker (or was corrupt) at `offset`."""

    def __init__(self, offset: int, detail: str) -> None:
        super().__init__(detail)
        self.offset = offset
        self.detail = detail

    def data_error(self, path: str) -> DataError:
        """The user's error: a missing tail is not a bad line (`--max-bad-lines` counts malformed
        lines and pages), and a dump cut short must never look like a smaller complete one."""
        return DataError(
            f"compressed stream ends early ({self.detail}): the dump is truncated or damaged; "
            "download it again",
            path=path,
            offset=self.offset,
            offset_in="the decompressed stream",
        )


def detect_compression(path: str) -> str:
    """Compression from the magic bytes, checked against the suffix (a mismatch is a clear error)."""
    with open(path, "rb") as f:
        head = f.read(4)
    by_magic = "gzip" if head.startswith(GZIP_MAGIC) else "bz2" if head.startswith(BZ2_MAGIC) else "none"
    lower = path.lower()
    by_suffix = "gzip" if lower.endswith(".gz") else "bz2" if lower.endswith(".bz2") else None
    if by_suffix is not None and by_suffix != by_magic:
        raise DataError(
            f"file name says {by_suffix} but the content is "
            + ("not compressed" if by_magic == "none" else by_magic),
            path=path,
        )
    return by_magic


_bz2_noted = False
#: Only worth a note when the dump is big enough for the difference to cost minutes.
BZ2_NOTE_BYTES = 64 << 20


def note_slow_bz2(size: int) -> None:
    """Once per process, for a big `.bz2` dump: say that the `.gz` one reads much faster."""
    global _bz2_noted  # noqa: PLW0603 - one note per process
    if not _bz2_noted and size > BZ2_NOTE_BYTES:
        print(
            "entbench: note: bz2 decompresses ~20x slower than gzip per core; "
            "for a big dump prefer the .gz one",
            file=sys.stderr,
        )
        _bz2_noted = True


def open_decompressed(path: str, compression: str) -> BinaryIO:
    """A binary stream of the decompressed bytes."""
    if compression == "gzip":
        from isal import igzip

        return cast(BinaryIO, igzip.open(path, "rb"))  # type: ignore[no-untyped-call]
    if compression == "bz2":
        note_slow_bz2(os.path.getsize(path))
        return cast(BinaryIO, bz2.open(path, "rb"))
    return open(path, "rb")


def sniff_json_dump(path: str) -> DumpFormat:
    """Check that `path` looks like a Wikidata JSON dump; a clear `DataError` says what it is otherwise."""
    compression = detect_compression(path)
    try:
        with open_decompressed(path, compression) as stream:
            head = stream.read(4096)
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot decompress ({exc})", path=path) from exc
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise DataError("empty file: not a Wikidata JSON dump", path=path)
    first = stripped[:1]
    if first in (b"[", b"{"):
        return DumpFormat(compression=compression, kind="json-lines")
    if first == b"<":
        raise DataError(
            "this is an XML file (a MediaWiki XML export?), not a Wikidata JSON dump "
            "(expected a JSON entity per line, e.g. latest-all.json.gz)",
            path=path,
        )
    preview = stripped[:40].decode("utf-8", "backslashreplace").replace("\t", "\\t").split("\n")[0]
    raise DataError(
        f"not a Wikidata JSON dump: expected '[' or '{{' at the start, found {preview!r}",
        path=path,
    )


def iter_blocks(
    stream: BinaryIO, block_bytes: int, read_bytes: int = 256 << 10
) -> Iterator[tuple[int, bytearray]]:
    """Line-aligned blocks of about `block_bytes` with the offset of their first byte.

    The stream is read `read_bytes` at a time so that a compressed stream that ends early loses
    at most that much decodable data: it raises `StreamTruncated` (with the offset where readable
    data ends) after yielding everything before it, the partial last line included.

    Reads go straight into the buffer of the block being filled (`readinto`); only the partial
    line after a block's last newline is copied, to the start of the next block. The blocks are
    `bytearray`s filled again once nothing refers to them any more (`_BlockBuffers`). Joining
    separate reads copied every byte three times into fresh allocations, which cost more than
    isal's decompression itself; copying each block out of one read buffer into a fresh allocation
    still cost half the page faults of a build, and the copy ~5% of its time on one CPU.
    """
    size = max(block_bytes, read_bytes) + read_bytes
    buffers = _BlockBuffers()
    block = buffers.free(size)
    filled = 0  # bytes of `block` read so far
    offset = 0  # stream offset of block[0]
    while True:
        if len(block) < filled + read_bytes:  # a line longer than a block: grow
            block.extend(bytes(filled + read_bytes - len(block)))
        try:
            got = fill_buffer(stream, block, filled, read_bytes)
        except (EOFError, OSError, ValueError) as exc:
            if filled:
                del block[filled:]
                yield offset, block
            raise StreamTruncated(offset + filled, str(exc) or type(exc).__name__) from exc
        if not got:
            if filled:
                del block[filled:]
                yield offset, block
            return
        filled += got
        if filled < block_bytes:
            continue
        cut = block.rfind(b"\n", 0, filled)
        if cut < 0:
            continue
        # The partial line is set aside and the next buffer taken only once the consumer asks for
        # the next block: by then it holds one block less, so the pool fills one it has let go of.
        # Taken before the yield, a third 16 MB buffer was held through every task of a
        # one-worker scan (the block being mapped, the one read ahead, the one being filled).
        with memoryview(block) as source:
            tail = bytes(source[cut + 1 : filled])
        del block[cut + 1 :]  # from the end: the allocation stays
        yield offset, block
        offset += len(block)
        # Only the consumer's references now decide when this buffer is filled again.
        del block
        block = buffers.free(size)
        block[: len(tail)] = tail
        filled = len(tail)
        del tail


class _BlockBuffers:
    """The buffers one `iter_blocks` reads blocks into, each filled again once only this pool
    refers to it.

    A block of 16-64 MB is a mapping of its own (`process.unmap_freed_buffers`): allocating one
    per block had the kernel zero and fault in every page of it again. A buffer is reused only
    when its reference count shows that nothing else holds it: a task's payload, a prefetch queue,
    a memoryview or an exported buffer (the native scanner's, while it runs without the GIL) all
    count, so a block still in use is never overwritten. At most `KEEP` buffers are kept; beyond
    that (many blocks in flight at once) a block is a fresh allocation.
    """

    KEEP = 6

    def __init__(self) -> None:
        self._buffers: list[bytearray] = []

    def free(self, size: int) -> bytearray:
        """A buffer of at least `size` bytes (of stale content) that nothing else refers to."""
        for index in range(len(self._buffers)):
            # 2: the pool's list and getrefcount's own argument; anything more is a user.
            if sys.getrefcount(self._buffers[index]) == 2:
                buffer = self._buffers[index]
                if len(buffer) < size:  # cut to its last block: grow back within its capacity
                    buffer.extend(bytes(size - len(buffer)))
                return buffer
        buffer = bytearray(size)
        if len(self._buffers) < self.KEEP:
            self._buffers.append(buffer)
        return buffer


def fill_buffer(stream: Any, buf: bytearray, at: int, n: int) -> int:
    """Read up to `n` bytes into buf[at:], as one `read(n)` would (short only at the end)."""
    readinto = _direct_readinto(stream)
    if readinto is None:
        data = stream.read(n)
        buf[at : at + len(data)] = data
        return len(data)
    got = 0
    with memoryview(buf) as view:
        while got < n:
            with view[at + got : at + n] as part:
                count = readinto(part)
            if not count:
                break
            got += count
    return got


def _direct_readinto(stream: Any) -> Any:
    """The `readinto` that fills the caller's buffer itself, or None when `stream` has none.

    A `gzip.GzipFile` (isal's `IGzipFile` is one) has no `readinto` of its own: the inherited one
    reads a new bytes object and copies it over, a second pass over every decompressed byte and a
    fresh 256 KB allocation per read (~9% of isal's time on a Wikidata dump). Its buffered reader
    over the decompressor (its `_buffer`, in CPython since 3.2) reads straight into the buffer,
    with the same bytes, errors and end of stream.
    """
    if isinstance(stream, gzip.GzipFile):
        buffered = getattr(stream, "_buffer", None)
        if isinstance(buffered, io.BufferedReader):
            return buffered.readinto
    return getattr(stream, "readinto", None)


Block = TypeVar("Block", bytes, bytearray)


def iter_lines(block: Block, base_offset: int) -> Iterator[tuple[int, Block]]:
    """Lines of a block (without the newline) with their absolute byte offsets."""
    start = 0
    n = len(block)
    find = block.find
    while start < n:
        end = find(b"\n", start)
        if end < 0:
            end = n
        yield base_offset + start, block[start:end]
        start = end + 1


def byte_ranges(size: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """Split [0, size) into consecutive ranges of `chunk_bytes` (the last may be shorter)."""
    if size <= 0:
        return [(0, 0)]
    return [(start, min(start + chunk_bytes, size)) for start in range(0, size, chunk_bytes)]


#: Bytes read past a range's end at a time while finishing its last line.
TAIL_READ_BYTES = 1 << 20

#: A piece of whole lines: (stream offset of buffer[0], buffer, length); the piece is buffer[:length].
LinePiece = tuple[int, bytearray, int]


def iter_line_pieces(
    stream: Any,
    offset: int,
    length: int,
    piece_bytes: int,
    *,
    skip_partial: bool = False,
    finish_line: bool = False,
) -> Iterator[LinePiece]:
    """The lines of the next `length` bytes of `stream` (at stream offset `offset`), read
    `piece_bytes` at a time into one reused buffer and yielded as pieces that end after a newline
    (the stream's last piece may not): a piece is valid until the next one is asked for.

    `skip_partial`: the bytes up to the first newline belong to the line in progress of the range
    before (no line at all when the range has no newline). `finish_line`: the line in progress at
    the end of the `length` bytes is read on to its newline (when the stream has more). Memory is
    one piece and the longest line, whatever `length` is.
    """
    buffer = bytearray(piece_bytes + TAIL_READ_BYTES)
    filled = 0  # bytes of `buffer` holding data (a partial line carried over, then the new read)
    remaining = length
    skipping = skip_partial
    tail = False  # reading past the range to the end of its last line
    while True:
        want = min(piece_bytes, remaining) if not tail else TAIL_READ_BYTES
        if len(buffer) < filled + want:  # a line longer than a piece: grow
            buffer.extend(bytes(filled + want - len(buffer)))
        got = fill_buffer(stream, buffer, filled, want) if want else 0
        scan_from = filled
        filled += got
        if not tail:
            remaining -= got
        if skipping:
            newline = buffer.find(b"\n", 0, filled)
            if newline < 0:
                offset += filled
                filled = 0
                if got < want or remaining <= 0:
                    return  # no line starts in the range
                continue
            skipping = False
            _move_to_front(buffer, newline + 1, filled)
            offset += newline + 1
            filled -= newline + 1
            scan_from = 0
        if tail:
            newline = buffer.find(b"\n", scan_from, filled)
            if newline >= 0 or got < want:
                end = filled if newline < 0 else newline + 1
                if end:
                    yield offset, buffer, end
                return
            continue
        if got < want or remaining <= 0:
            if finish_line and got == want:
                # The range is read whole: on to the end of its last line (or of the one starting
                # right at its end, whose newline before lies in the range).
                tail = True
                continue
            if filled:
                yield offset, buffer, filled
            return
        cut = buffer.rfind(b"\n", 0, filled)
        if cut < 0:
            continue  # a line longer than a piece: read on
        yield offset, buffer, cut + 1
        offset += cut + 1
        _move_to_front(buffer, cut + 1, filled)
        filled -= cut + 1


def _move_to_front(buffer: bytearray, start: int, end: int) -> None:
    """buffer[start:end] moved to buffer[0:end - start] (the buffer keeps its length)."""
    with memoryview(buffer) as view:
        view[: end - start] = view[start:end]


def range_bounds(path: str, start: int, end: int) -> tuple[int, int]:
    """[begin, stop) of the lines whose first byte lies in [start, end) of an uncompressed file."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line in progress belongs to the previous range
        begin = f.tell()
        if begin >= end:
            return begin, begin
        f.seek(end - 1)
        return begin, end - 1 + len(f.readline())


def iter_range_pieces(path: str, start: int, end: int, piece_bytes: int) -> Iterator[LinePiece]:
    """The lines whose first byte lies in [start, end) of an uncompressed file, as `iter_line_pieces`."""
    begin, stop = range_bounds(path, start, end)
    if stop <= begin:
        return
    with open(path, "rb") as f:
        f.seek(begin)
        yield from iter_line_pieces(f, begin, stop - begin, piece_bytes)


def file_size(path: str) -> int:
    """Size of a file in bytes."""
    return os.stat(path).st_size
