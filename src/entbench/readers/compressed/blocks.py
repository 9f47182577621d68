"""Compressed dumps read in order, as line-aligned blocks: isal for `.gz`, rapidgzip's
parallel bz2 reader for `.bz2`, and rapidgzip for a `.gz` that several workers will later read by
ranges (the pass leaves a seek index, `readers.compressed.gzip_index`).

rapidgzip is only trusted with healthy streams: it can end a truncated `.gz` early without an error
or fail having returned less than is decodable. Any sign of damage (an error, or an end before the
last compressed byte) makes the reader finish the stream with isal / stdlib bz2 from the start
(skipping the blocks already handed out), so a damaged file gives the same blocks and the same
`StreamTruncated` offset whatever the worker count.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from typing import Any, BinaryIO, cast

from entbench.readers.compressed.dumps import StreamTruncated, iter_blocks, note_slow_bz2, open_decompressed
from entbench.readers.compressed.gzip_index import INDEX_BUILD_CHUNK, index_spacing, save_gzip_index


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

    def close(self) -> None:
        self.reader.close()


def iter_decompressed_blocks(
    path: str,
    compression: str,
    block_bytes: int,
    *,
    threads: int = 1,
    index_sha256: str | None = None,
) -> Generator[tuple[int, bytearray], None, None]:
    """Line-aligned blocks `(offset, block)` of a compressed dump, read in order.

    `.bz2` goes through rapidgzip's bz2 reader with `threads` threads; `.gz` through isal, or,
    when `index_sha256` is given (several workers), through rapidgzip (one thread), whose seek
    index is saved once the whole stream has been read cleanly (see `save_gzip_index`). Raises
    `StreamTruncated` like `iter_blocks`, with the same offset and after the same blocks whichever
    decoder ran.
    """
    use_rapid = compression == "bz2" or (compression == "gzip" and index_sha256 is not None)
    if not use_rapid:
        stream = open_decompressed(path, compression)
        try:
            yield from iter_blocks(stream, block_bytes)
        finally:
            stream.close()
        return
    import rapidgzip

    size = os.path.getsize(path)
    if compression == "bz2":
        note_slow_bz2(size)
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
                yield offset, block
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
    try:
        for offset, block in iter_blocks(stream, block_bytes):
            if offset + len(block) <= next_offset:
                continue
            if offset != next_offset:
                raise RuntimeError(f"{path}: decoders disagree on block boundaries at {next_offset}")
            yield offset, block
            next_offset = offset + len(block)
    except StreamTruncated as exc:
        if exc.offset < next_offset:  # rapidgzip decoded past the point isal/bz2 can read to
            raise RuntimeError(f"{path}: decoders disagree on the readable length") from exc
        raise
    finally:
        stream.close()
