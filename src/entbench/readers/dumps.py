"""Reading line-oriented dumps: compression, format sniffing, line-aligned blocks and byte ranges.

Wikidata JSON dumps are one entity per line, framed as a JSON array (`[` first line, `,` line
ends, `]` last line) or not framed at all. Only this module touches compressed bytes:

* uncompressed input is split into byte ranges that workers read independently (a line belongs
  to the range its first byte falls in);
* `.gz` is decompressed with isal (4-10x faster than zlib here) and `.bz2` with rapidgzip's
  parallel bz2 reader (one thread per worker), sequentially, into line-aligned blocks that workers
  parse in parallel;
* with several workers, a `.gz` dump is read once through rapidgzip, which leaves a seek index
  (`<dump>.rapidgzip-index`, or in the cache directory when the dump's directory is read-only).
  Later runs split the *decompressed* stream at the index's checkpoints and every worker
  decompresses its own ranges, so decompression runs in parallel too.

rapidgzip is only trusted with healthy streams: it can end a truncated `.gz` early without an error
or fail having returned less than is decodable. Any sign of damage (an error, or an end before the
last compressed byte) makes the reader finish the stream with isal / stdlib bz2 from the start
(skipping the blocks already handed out), so a damaged file gives the same blocks and the same
`StreamTruncated` offset whatever the worker count.
"""

from __future__ import annotations

import bisect
import bz2
import contextlib
import io
import json
import os
import struct
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

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
            got = _fill(stream, block, filled, read_bytes)
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
        following = buffers.free(size)
        rest = filled - (cut + 1)
        with memoryview(block) as source, memoryview(following) as target:
            target[:rest] = source[cut + 1 : filled]
        del block[cut + 1 :]  # from the end: the allocation stays
        yield offset, block
        offset += len(block)
        # Only the consumer's references now decide when this buffer is filled again.
        block, filled = following, rest


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


def _fill(stream: Any, buf: bytearray, at: int, n: int) -> int:
    """Read up to `n` bytes into buf[at:], as one `read(n)` would (short only at the end)."""
    readinto = getattr(stream, "readinto", None)
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
        # Find where the range's last line ends first, then read the range in one piece: appending
        # that line's tail afterwards copied the whole block into a second fresh allocation.
        f.seek(end - 1)
        stop = end - 1 + len(f.readline())
        f.seek(begin)
        data = f.read(stop - begin)
    return begin, data


def file_size(path: str) -> int:
    """Size of a file in bytes."""
    return os.stat(path).st_size


# --- compressed streams: sequential blocks, rapidgzip with an isal/stdlib fallback --------------
INDEX_SUFFIX = ".rapidgzip-index"
_INDEX_MAGIC = b"entbench-rapidgzip-index/1\n"
#: Index checkpoints every this many decompressed bytes at most. A task decodes whole chunks between
#: checkpoints, including the one after its range that holds the end of its last line: small chunks
#: waste little. Workers import only their task's few points, so the count does not cost memory.
INDEX_MAX_SPACING = 4 << 20
INDEX_MIN_SPACING = 512 << 10
#: rapidgzip's reader keeps ~100 decompressed chunks cached while it reads a stream through (measured:
#: ~400 MB with 4 MiB chunks, ~200 MB with 2 MiB), so the read that builds the index uses small
#: chunks and the saved index is thinned to `index_spacing` afterwards.
INDEX_BUILD_CHUNK = 2 << 20
#: Expected decompressed/compressed ratio of a JSON dump, to skip indexing dumps of one task.
_GZIP_EXPANSION = 7


class _Damaged(Exception):
    """rapidgzip hit an error or ended before the last compressed byte: finish with the fallback."""


class _CheckedRapidReader:
    """A rapidgzip reader whose `read(n)` returns n bytes until the end and raises `_Damaged`
    (never returns EOF) when the stream is not intact, so `iter_blocks` cannot yield a cut tail."""

    def __init__(self, reader: Any, tell_compressed_bits: Callable[[], int], size: int) -> None:
        self.reader = reader
        self._tell_bits = tell_compressed_bits
        self._size = size

    def readinto(self, buffer: Any) -> int:
        with memoryview(buffer) as view:
            n = len(view)
            got = 0
            while got < n:
                try:
                    with view[got:] as part:
                        count = self.reader.readinto(part)
                except Exception as exc:  # rapidgzip raises RuntimeError, ValueError, ...
                    raise _Damaged(str(exc) or type(exc).__name__) from exc
                if not count:
                    if (self._tell_bits() + 7) // 8 != self._size:
                        raise _Damaged("rapidgzip stopped before the last compressed byte")
                    break
                got += count
        return got

    def read(self, n: int) -> bytes:
        buf = bytearray(n)
        got = self.readinto(buf)
        del buf[got:]
        return bytes(buf)

    def compressed_position(self) -> int:
        """Compressed bytes consumed so far (for the progress bar)."""
        return min(self._size, self._tell_bits() // 8)

    def close(self) -> None:
        self.reader.close()


def _raw_position(stream: Any) -> Callable[[], int]:
    """How far into the compressed file an isal/bz2/plain stream has read (best effort)."""
    raw = getattr(stream, "fileobj", None) or getattr(stream, "_fp", None) or stream

    def position() -> int:
        try:
            return int(raw.tell())
        except (OSError, ValueError, AttributeError):
            return 0

    return position


def index_spacing(block_bytes: int) -> int:
    """Decompressed bytes between two checkpoints of an index built for tasks of `block_bytes`."""
    return min(INDEX_MAX_SPACING, max(INDEX_MIN_SPACING, block_bytes // 2))


def iter_decompressed_blocks(
    path: str,
    compression: str,
    block_bytes: int,
    *,
    threads: int = 1,
    index_sha256: str | None = None,
) -> Generator[tuple[int, bytearray, int], None, None]:
    """Line-aligned blocks `(offset, block, compressed_position)` of a compressed dump, read in order.

    `.bz2` goes through rapidgzip's bz2 reader with `threads` threads; `.gz` through isal, or,
    when `index_sha256` is given (several workers), through rapidgzip (one thread), whose seek
    index is saved once the whole stream has been read cleanly (see `save_gzip_index`). Raises
    `StreamTruncated` like `iter_blocks`, with the same offset and after the same blocks whichever
    decoder ran.
    """
    global _bz2_warned  # noqa: PLW0603 - warn once per process
    use_rapid = compression == "bz2" or (compression == "gzip" and index_sha256 is not None)
    if not use_rapid:
        stream = open_decompressed(path, compression)
        position = _raw_position(stream)
        try:
            for offset, block in iter_blocks(stream, block_bytes):
                yield offset, block, position()
        finally:
            stream.close()
        return
    import rapidgzip

    size = os.path.getsize(path)
    if compression == "bz2" and not _bz2_warned and size > BZ2_WARN_BYTES:
        print(
            "entbench: note: bz2 decompresses ~20x slower than gzip per core; "
            "for a big dump prefer the .gz one",
            file=sys.stderr,
        )
        _bz2_warned = True
    reader: _CheckedRapidReader
    if compression == "gzip":
        # One thread: measured on 2 cores, rapidgzip with 2 threads decompressed a 50 MB .gz
        # slower than with one (300 vs 385 MB/s), its chunk cache doubles, and the workers need
        # the cores to parse.
        gz = rapidgzip.RapidgzipFile(path, parallelization=1, chunk_size=INDEX_BUILD_CHUNK)
        reader = _CheckedRapidReader(gz, gz.tell_compressed, size)
    else:
        bz = rapidgzip.IndexedBzip2File(path, parallelization=threads)
        reader = _CheckedRapidReader(bz, bz.raw.bz2reader.tell_compressed, size)
    next_offset = 0
    damaged = False
    try:
        try:
            for offset, block in iter_blocks(cast(BinaryIO, reader), block_bytes):
                yield offset, block, reader.compressed_position()
                next_offset = offset + len(block)
        except _Damaged:
            damaged = True
        if not damaged and compression == "gzip" and index_sha256 is not None:
            save_gzip_index(reader.reader, path, index_sha256, next_offset, index_spacing(block_bytes))
    finally:
        reader.close()
    if not damaged:
        return
    # The sequential decoders read the whole stream again and report the damage exactly as they
    # do on their own; the blocks rapidgzip already handed out are the same and are skipped.
    stream = open_decompressed(path, compression)
    position = _raw_position(stream)
    try:
        for offset, block in iter_blocks(stream, block_bytes):
            if offset + len(block) <= next_offset:
                continue
            if offset != next_offset:
                raise RuntimeError(f"{path}: decoders disagree on block boundaries at {next_offset}")
            yield offset, block, position()
            next_offset = offset + len(block)
    except StreamTruncated as exc:
        if exc.offset < next_offset:  # rapidgzip decoded past the point isal/bz2 can read to
            raise RuntimeError(f"{path}: decoders disagree on the readable length") from exc
        raise
    finally:
        stream.close()


# --- the .gz seek index -------------------------------------------------------------------------
@dataclass(frozen=True)
class GzipIndex:
    """A validated rapidgzip index of one `.gz` dump (checkpoints: compressed bit offset ->
    decompressed offset, ascending)."""

    path: str
    data_offset: int  # where rapidgzip's own bytes start in the index file
    decompressed_size: int
    checkpoints: tuple[tuple[int, int], ...]
    records: tuple[tuple[int, int], ...] = ()  # each checkpoint's (offset, length) in the file
    trailer: bytes = b""

    def task_points(self, start: int, end: int, extra: int = 2) -> list[list[int]]:
        """Records of the checkpoints a range needs: the one at or before `start`, those up to `end`
        and `extra` after it
        (the end of the range's last line lies in the chunk after `end`; two cover lines up to
        two chunks long without decoding the rest of the stream)."""
        offsets = [d for _bits, d in self.checkpoints]
        first = max(0, bisect.bisect_right(offsets, start) - 1)  # the checkpoint at or before start
        last = bisect.bisect_right(offsets, end) + extra
        return [list(r) for r in self.records[first:last]]

    def ranges(self, compressed_size: int, target_bytes: int) -> list[tuple[int, int, int]]:
        """Decompressed ranges `(start, end, compressed_bytes)` that start and end on checkpoints
        (a worker never decompresses anything twice) and hold about `target_bytes` each; the
        compressed sizes add up to the file size."""
        starts = sorted({d for _bits, d in self.checkpoints if d < self.decompressed_size} | {0})
        bits_at = {d: b for b, d in self.checkpoints}
        result: list[tuple[int, int, int]] = []
        begin = 0
        for cut in [*starts[1:], self.decompressed_size]:
            if cut - begin < target_bytes and cut != self.decompressed_size:
                continue
            first = 0 if begin == 0 else bits_at[begin] // 8
            last = compressed_size if cut == self.decompressed_size else bits_at[cut] // 8
            result.append((begin, cut, last - first))
            begin = cut
        return result or [(0, 0, compressed_size)]


def index_candidates(dump_path: str, sha256: str, cache_dir: Path | None = None) -> list[Path]:
    """Where a dump's index may live: beside the dump, else in the per-user cache by content."""
    if cache_dir is None:
        from entbench.readers.cache import default_cache_dir

        cache_dir = default_cache_dir()
    return [Path(dump_path + INDEX_SUFFIX), cache_dir / "rapidgzip-index" / f"{sha256}{INDEX_SUFFIX}"]


def worth_indexing(compressed_size: int, block_bytes: int) -> bool:
    """An index only pays when the dump is expected to make at least two tasks."""
    return compressed_size * _GZIP_EXPANSION >= 2 * block_bytes


def save_gzip_index(
    reader: Any,
    dump_path: str,
    sha256: str,
    decompressed_size: int,
    spacing: int = INDEX_MAX_SPACING,
    cache_dir: Path | None = None,
) -> Path | None:
    """Write the index of a fully read `RapidgzipFile` atomically beside the dump (or in the cache
    when that directory is not writable), keeping checkpoints at least `spacing` decompressed
    bytes apart; None when neither place can be written."""
    st = os.stat(dump_path)
    import rapidgzip

    for location in index_candidates(dump_path, sha256, cache_dir):
        tmp = location.with_name(f".{location.name}.tmp-{os.getpid()}")
        raw = location.with_name(f".{location.name}.raw-{os.getpid()}")
        try:
            location.parent.mkdir(parents=True, exist_ok=True)
            reader.export_index(str(raw), rapidgzip.IndexFormat.GZTOOL)  # windows zlib-compressed
            thin = location.with_name(f".{location.name}.thin-{os.getpid()}")
            try:
                checkpoints, records, trailer = _thin_gztool_index(raw, thin, spacing)
                header = json.dumps(
                    {
                        "dump_size": st.st_size,
                        "dump_mtime_ns": st.st_mtime_ns,
                        "sha256": sha256,
                        "decompressed_size": decompressed_size,
                        "checkpoints": checkpoints,
                        "records": records,
                        "trailer": trailer.hex(),
                        "index_bytes": os.path.getsize(thin),
                    },
                    separators=(",", ":"),
                ).encode("utf-8")
                with open(tmp, "wb") as out, open(thin, "rb") as src:
                    out.write(_INDEX_MAGIC + header + b"\n")
                    while chunk := src.read(1 << 22):
                        out.write(chunk)
                    out.flush()
                    os.fsync(out.fileno())
            finally:
                with contextlib.suppress(OSError):
                    thin.unlink()
            os.replace(tmp, location)
            return location
        except OSError:
            continue
        finally:
            for leftover in (tmp, raw):
                with contextlib.suppress(OSError):
                    leftover.unlink()
    return None


_GZTOOL_MAGIC = b"\x00" * 8 + b"gzipindx"


def _thin_gztool_index(
    source: Path, target: Path, spacing: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], bytes]:
    """Copy a gztool-format index keeping the first point and then only points at least `spacing`
    decompressed bytes after the last kept one; returns the kept (compressed bit offset,
    decompressed offset) pairs, where each kept point's record lies in `target`, and the trailer.

    The index is built reading with small rapidgzip chunks (its cache holds ~100 decompressed
    chunks), which leaves a point every couple of MiB; every point costs each worker a window
    in memory, and tasks only ever start on a few of them. Format (gztool): magic, two counts,
    points (uncompressed offset, compressed byte offset, bit count, window length, zlib-compressed
    window), the uncompressed size."""
    with open(source, "rb") as src, open(target, "wb") as out:
        head = src.read(32)
        if len(head) < 32 or head[:16] != _GZTOOL_MAGIC:
            raise OSError(f"unexpected rapidgzip index layout in {source}")
        count = struct.unpack(">Q", head[24:32])[0]
        out.write(head)  # the counts are rewritten below
        kept: list[tuple[int, int]] = []
        records: list[tuple[int, int]] = []
        last = -1
        for _ in range(count):
            point = src.read(24)
            if len(point) < 24:
                raise OSError(f"truncated rapidgzip index {source}")
            uncompressed, compressed, bits, window_length = struct.unpack(">QQII", point)
            window = src.read(window_length)
            if not kept or uncompressed - last >= spacing:
                records.append((out.tell(), 24 + window_length))
                out.write(point)
                out.write(window)
                kept.append((8 * compressed - bits, uncompressed))
                last = uncompressed
        trailer = src.read()
        out.write(trailer)
        out.seek(16)
        out.write(struct.pack(">QQ", len(kept), len(kept)))
    return kept, records, trailer


def load_gzip_index(dump_path: str, sha256: str, cache_dir: Path | None = None) -> GzipIndex | None:
    """The dump's saved index if it matches the dump (size, mtime beside it, sha256) and rapidgzip
    imports it; a stale or damaged index is ignored (and rewritten by the next full read)."""
    st = os.stat(dump_path)
    for n, location in enumerate(index_candidates(dump_path, sha256, cache_dir)):
        header, data_offset = _read_index_header(location)
        if header is None:
            continue
        try:
            fresh = (
                header["dump_size"] == st.st_size
                and header["sha256"] == sha256
                and (n > 0 or header["dump_mtime_ns"] == st.st_mtime_ns)
            )
            checkpoints = tuple((int(b), int(d)) for b, d in header["checkpoints"])
            records = tuple((int(o), int(n)) for o, n in header["records"])
            index = GzipIndex(
                str(location),
                data_offset,
                int(header["decompressed_size"]),
                checkpoints,
                records,
                bytes.fromhex(header["trailer"]),
            )
            fresh = (
                fresh
                and len(records) == len(checkpoints) > 0
                and location.stat().st_size == data_offset + int(header["index_bytes"])
            )
        except (KeyError, TypeError, ValueError, OSError):
            continue
        if not fresh:
            continue
        # Every point must import: a damaged window would otherwise fail a task later.
        try:
            for first in range(0, len(records), 4096):
                points = [list(r) for r in records[first : first + 4096]]
                with contextlib.closing(
                    _open_mini(dump_path, index.path, data_offset, points, index.trailer)
                ) as r:
                    imported = {(int(b), int(d)) for b, d in r.block_offsets().items()}
                if not set(checkpoints[first : first + 4096]) <= imported:
                    raise ValueError("points missing after import")
        except Exception:  # any import failure means: do not trust this file
            continue
        return index
    return None


def _read_index_header(location: Path) -> tuple[dict[str, Any] | None, int]:
    try:
        with open(location, "rb") as f:
            if f.read(len(_INDEX_MAGIC)) != _INDEX_MAGIC:
                return None, 0
            line = f.readline()
            header = json.loads(line)
            return (header if isinstance(header, dict) else None), len(_INDEX_MAGIC) + len(line)
    except (OSError, ValueError):
        return None, 0


def _open_mini(
    dump_path: str, index_path: str, data_offset: int, points: list[list[int]], trailer: bytes
) -> Any:
    """A rapidgzip reader that knows only the given checkpoints (records of the index file)."""
    import rapidgzip

    parts = [_GZTOOL_MAGIC, struct.pack(">QQ", len(points), len(points))]
    with open(index_path, "rb") as handle:
        for offset, length in points:
            handle.seek(data_offset + offset)
            record = handle.read(length)
            if len(record) != length:
                raise OSError(f"truncated rapidgzip index {index_path}")
            parts.append(record)
    parts.append(trailer)
    reader = rapidgzip.RapidgzipFile(dump_path, parallelization=1)
    try:
        reader.import_index(io.BytesIO(b"".join(parts)))
    except BaseException:
        reader.close()
        raise
    return reader


def read_indexed_range(dump_path: str, task: dict[str, Any]) -> tuple[int, bytes]:
    """The lines of a `.gz` dump whose preceding newline lies in [start, end) of the decompressed
    stream (the first line belongs to the range at 0), and the offset of the first; `task` holds
    `start`, `end`, the index file (`index`, `index_offset`), the range's `points` (from
    `GzipIndex.task_points`) and the index `trailer` (hex).

    The reader knows only the range's own checkpoints and is closed at the end: one that kept the
    whole index open across tasks cached every chunk it had decoded or prefetched (~100 MB per
    non-adjacent range, without bound in practice). Unlike `read_range` the byte before `start` is
    never needed, so nothing before the checkpoint at `start` is decompressed."""
    start, end = int(task["start"]), int(task["end"])
    reader = _open_mini(
        dump_path,
        str(task["index"]),
        int(task["index_offset"]),
        task["points"],
        bytes.fromhex(task["trailer"]),
    )
    try:
        reader.seek(start)
        buf = bytearray(end - start)
        got = _fill(reader, buf, 0, end - start)
        skip = 0
        if start > 0:
            newline = buf.find(b"\n", 0, got)
            if newline < 0:
                return end, b""  # the line in progress runs past the range: no line starts here
            skip = newline + 1
        tail: list[bytes] = []
        if got == end - start:
            # Finish the line in progress at `end` (or the one starting right at it).
            while True:
                chunk = _read_exactly(reader, 1 << 20)
                cut = chunk.find(b"\n")
                if cut >= 0:
                    tail.append(chunk[: cut + 1])
                    break
                tail.append(chunk)
                if len(chunk) < 1 << 20:
                    break
        with memoryview(buf) as view, view[skip:got] as body:
            return start + skip, b"".join([body, *tail])
    finally:
        reader.close()


def _read_exactly(reader: Any, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = reader.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)
