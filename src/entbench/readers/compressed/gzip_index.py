"""The seek index of a `.gz` dump: rapidgzip's checkpoints, saved beside the dump (or in the cache
directory when the dump's directory is read-only) after one clean sequential pass, validated and
thinned, so that later runs split the *decompressed* stream at checkpoints and every worker
decompresses its own ranges in parallel.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import json
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entbench.readers.compressed.dumps import LinePiece, iter_line_pieces

INDEX_SUFFIX = ".rapidgzip-index"
_INDEX_MAGIC = b"entbench-rapidgzip-index/1\n"
#: Index checkpoints every this many decompressed bytes at most. A task decodes whole chunks between
#: checkpoints, including the one after its range that holds the end of its last line: small chunks
#: waste little. Workers import only their task's few points, so the count does not cost memory.
INDEX_MAX_SPACING = 4 << 20
INDEX_MIN_SPACING = 512 << 10
#: rapidgzip's `chunk_size` counts *compressed* bytes, and its reader keeps a few dozen chunks
#: decompressed while it reads a stream through: with 2 MiB chunks (~15-30 MB each decompressed) a
#: dump smaller than that cache was held whole, so the first `--workers 2` build of a `.gz` (the one
#: that writes its index) grew with the dump (a 1 GB Hansel world's 426 MB Wikidata stream: 368 MiB
#: peak; 1.26 GB: 458 MiB, 2.3 CPU s). With 512 KiB chunks the same reads peak at 121-139 MiB and
#: take 1.4 CPU s. The saved index is thinned to `index_spacing` afterwards.
INDEX_BUILD_CHUNK = 512 << 10
#: Expected decompressed/compressed ratio of a JSON dump, to skip indexing dumps of one task.
_GZIP_EXPANSION = 7


def index_spacing(block_bytes: int) -> int:
    """Decompressed bytes between two checkpoints of an index built for tasks of `block_bytes`."""
    return min(INDEX_MAX_SPACING, max(INDEX_MIN_SPACING, block_bytes // 2))


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

    The index is built reading with small rapidgzip chunks (`INDEX_BUILD_CHUNK`: its cache holds
    a few dozen), which leaves a point every few MiB; every point costs each worker a window
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


def iter_indexed_range(dump_path: str, task: dict[str, Any], piece_bytes: int) -> Iterator[LinePiece]:
    """The lines of a `.gz` dump whose preceding newline lies in [start, end) of the decompressed
    stream (the first line belongs to the range at 0), decompressed `piece_bytes` at a time into
    one reused buffer (`iter_line_pieces`); `task` holds `start`, `end`, the index file (`index`,
    `index_offset`), the range's `points` (from `GzipIndex.task_points`) and the index `trailer` (hex).

    The reader knows only the range's own checkpoints and is closed at the end: one that kept the
    whole index open across tasks cached every chunk it had decoded or prefetched (~100 MB per
    non-adjacent range, without bound in practice). Unlike a byte range (`dumps.range_bounds`) the
    byte before `start` is never needed, so nothing before the checkpoint at `start` is decompressed."""
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
        yield from iter_line_pieces(
            reader, start, end - start, piece_bytes, skip_partial=start > 0, finish_line=True
        )
    finally:
        reader.close()
