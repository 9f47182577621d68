"""The bz2 streams of a multistream dump (`pages-articles-multistream.xml.bz2`), decompressed a
bounded piece at a time: a map task of a large dump covers tens of MB of XML, and holding all of
it at once made the task's memory follow the dump's size (issue 33)."""

from __future__ import annotations

import bz2
from collections.abc import Iterator

from entbench.errors import DataError
from entbench.readers.mediawiki.page_ranges import file_range

#: Compressed bytes read at a time, and decompressed bytes given at most per piece, by `iter_streams`.
STREAM_READ_BYTES = 1 << 20


def iter_streams(path: str, start: int, end: int, piece_bytes: int = 4 << 20) -> Iterator[bytes]:
    """The concatenated bz2 streams in [start, end) of a multistream dump, decompressed a piece
    (at most `piece_bytes`) at a time. Damage (a stream cut short, corrupt data, a file shorter
    than the range) is a `DataError` at `start`, as `bz2.decompress` of the whole range raised."""
    decompressor = bz2.BZ2Decompressor()
    fed = False  # whether the current stream has been given any input
    try:
        for read in file_range(path, start, end, STREAM_READ_BYTES):
            raw = read
            while raw:
                fed = True
                out = decompressor.decompress(raw, piece_bytes)
                raw = b""
                if out:
                    yield out
                while not decompressor.eof and not decompressor.needs_input:
                    out = decompressor.decompress(b"", piece_bytes)
                    if out:
                        yield out
                if decompressor.eof:  # the next stream starts in what is left over
                    raw = decompressor.unused_data
                    decompressor = bz2.BZ2Decompressor()
                    fed = False
        if fed:
            raise EOFError("Compressed data ended before the end-of-stream marker was reached")
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"cannot decompress the bz2 streams here: {exc}", path=path, offset=start) from exc
