"""Reading line-oriented dumps: compression, format sniffing, line-aligned blocks and byte ranges.

Wikidata JSON dumps are one entity per line, framed as a JSON array (`[` first line, `,` line
ends, `]` last line) or not framed at all. Only this module touches compressed bytes:

* uncompressed input is split into byte ranges that workers read independently (a line belongs
  to the range its first byte falls in);
* `.gz` is decompressed with isal (4-10x faster than zlib here) and `.bz2` with rapidgzip's bz2
  reader, sequentially, into line-aligned blocks that workers parse in parallel.
"""

from __future__ import annotations

import bz2
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, cast

from entbench.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"

_bz2_warned = False
#: Only worth a note when the dump is big enough for the difference to cost minutes.
BZ2_WARN_BYTES = 64 << 20


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


def open_decompressed(path: str, compression: str) -> BinaryIO:
    """A binary stream of the decompressed bytes."""
    global _bz2_warned  # noqa: PLW0603 - warn once per process
    if compression == "gzip":
        from isal import igzip

        return cast(BinaryIO, igzip.open(path, "rb"))  # type: ignore[no-untyped-call]
    if compression == "bz2":
        if not _bz2_warned and os.path.getsize(path) > BZ2_WARN_BYTES:
            print(
                "entbench: note: bz2 decompresses ~20x slower than gzip; for a big dump prefer the .gz one",
                file=sys.stderr,
            )
            _bz2_warned = True
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
) -> Iterator[tuple[int, bytes]]:
    """Line-aligned blocks of about `block_bytes` with the offset of their first byte.

    The stream is read `read_bytes` at a time so that a compressed stream that ends early loses
    at most that much decodable data: it raises `StreamTruncated` (with the offset where readable
    data ends) after yielding everything before it, the partial last line included.
    """
    offset = 0
    pieces: list[bytes] = []
    size = 0
    while True:
        try:
            data = stream.read(read_bytes)
        except (EOFError, OSError, ValueError) as exc:
            tail = b"".join(pieces)
            if tail:
                yield offset, tail
            raise StreamTruncated(offset + len(tail), str(exc) or type(exc).__name__) from exc
        if data:
            pieces.append(data)
            size += len(data)
            if size < block_bytes:
                continue
        buf = b"".join(pieces)
        if not data:
            if buf:
                yield offset, buf
            return
        cut = buf.rfind(b"\n")
        if cut < 0:
            pieces, size = [buf], len(buf)
            continue
        block = buf[: cut + 1]
        rest = buf[cut + 1 :]
        pieces, size = ([rest], len(rest)) if rest else ([], 0)
        yield offset, block
        offset += len(block)


def iter_lines(block: bytes, base_offset: int) -> Iterator[tuple[int, bytes]]:
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


def read_range(path: str, start: int, end: int) -> tuple[int, bytes]:
    """The lines whose first byte lies in [start, end) of an uncompressed file, and their offset."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line in progress belongs to the previous range
        begin = f.tell()
        if begin >= end:
            return begin, b""
        data = f.read(end - begin)
        if data and not data.endswith(b"\n"):
            data += f.readline()
    return begin, data


def file_size(path: str) -> int:
    """Size of a file in bytes."""
    return os.stat(path).st_size
