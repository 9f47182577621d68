"""The head of a dump as a dump of its own: the first N entities, pages or lines (`build --limit N`).

A trial build reads a small, real dump cut from the start of the one the user gave, so that every
stage runs exactly as on the whole dump and writes the same kinds of tables, and the cut dump's
own size and sha256 give the trial build its own fingerprints. The cut is written gzip-compressed
(level 1, no name, time 0: the same bytes from the same dump), in the layout its reader expects:

* a Wikidata JSON dump: its first N entity lines, framed as a JSON array when the dump is;
* a MediaWiki XML dump: its header (`<mediawiki>` and `<siteinfo>`), its first N `<page>`
  elements, then `</mediawiki>`;
* a file of lines (a JSON-lines corpus): its first N non-empty lines.

Each function reads only as much of the dump as it needs and returns how many it kept (fewer
than N when the dump holds fewer).
"""

from __future__ import annotations

import bz2
import contextlib
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from isal import igzip

from entbench.errors import DataError
from entbench.readers.compressed.dumps import StreamTruncated, detect_compression, open_decompressed
from entbench.readers.mediawiki.page_ranges import PAGE_CLOSE, PAGE_OPEN

READ_BYTES = 1 << 20


def _lines(path: str) -> Iterator[bytes]:
    try:
        with open_decompressed(path, detect_compression(path)) as stream:
            yield from stream
    except StreamTruncated as exc:
        raise exc.data_error(path) from exc
    except (EOFError, OSError) as exc:  # what the decompressors raise on a damaged stream
        raise DataError(f"cannot decompress ({exc})", path=path) from exc


@contextlib.contextmanager
def _gzip_file(dest: Path) -> Iterator[BinaryIO]:
    """A gzip stream written to a temporary file renamed to `dest` once complete (the same bytes
    for the same content: no name, time 0)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as raw:
            stream = igzip.IGzipFile(filename="", fileobj=raw, mode="wb", compresslevel=1, mtime=0)  # type: ignore[no-untyped-call]
            with stream:
                yield cast(BinaryIO, stream)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def head_wikidata(path: str, n: int, dest: Path) -> int:
    """The first `n` entities of a Wikidata JSON dump, as a dump, in `dest` (gzip)."""
    kept = 0
    framed: bool | None = None
    with _gzip_file(dest) as out:
        for line in _lines(path):
            text = line.strip()
            if not text:
                continue
            if framed is None:
                framed = text == b"["
                if framed:
                    out.write(b"[\n")
                    continue
            if text == b"]" or kept == n:
                break
            if framed:
                out.write((b",\n" if kept else b"") + text.rstrip(b","))
            else:
                out.write(text + b"\n")
            kept += 1
        if framed:
            out.write(b"\n]\n")
    return kept


def head_mediawiki(path: str, n: int, dest: Path) -> int:
    """The header and first `n` pages of a MediaWiki XML dump, as a dump, in `dest` (gzip)."""
    kept = 0
    with _gzip_file(dest) as out, open_decompressed(path, detect_compression(path)) as stream:
        pending = b""
        in_pages = False
        while kept < n:
            try:
                block = stream.read(READ_BYTES)
            except StreamTruncated as exc:
                raise exc.data_error(path) from exc
            except (EOFError, OSError) as exc:
                raise DataError(f"cannot decompress ({exc})", path=path) from exc
            data = pending + block
            if not in_pages:
                start = data.find(PAGE_OPEN)
                if start < 0:
                    if not block:
                        break  # no page at all
                    keep = len(PAGE_OPEN) - 1
                    out.write(data[: len(data) - keep])
                    pending = data[len(data) - keep :]
                    continue
                in_pages = True
            cut = 0
            while kept < n:
                end = data.find(PAGE_CLOSE, cut)
                if end < 0:
                    break
                cut = end + len(PAGE_CLOSE)
                kept += 1
            if kept == n or not block:
                out.write(data[:cut] if kept == n else data)
                break
            keep = len(PAGE_CLOSE) - 1
            safe = max(cut, len(data) - keep)
            out.write(data[:safe])
            pending = data[safe:]
        if kept == n:
            out.write(b"\n</mediawiki>\n")
    return kept


def head_lines(path: str, n: int, dest: Path) -> int:
    """The first `n` non-empty lines of a (compressed or plain) text file, in `dest` (gzip)."""
    kept = 0
    with _gzip_file(dest) as out:
        for line in _lines(path):
            if kept == n:
                break
            if line.strip():
                out.write(line if line.endswith(b"\n") else line + b"\n")
                kept += 1
    return kept


#: Each kind of dump: the unit a trial build counts, the suffix of its cut, and the function cutting it.
KINDS: dict[str, tuple[str, str, Callable[[str, int, Path], int]]] = {
    "wikidata-json": ("entities", "json.gz", head_wikidata),
    "mediawiki-xml": ("pages", "xml.gz", head_mediawiki),
    "lines": ("lines", "jsonl.gz", head_lines),
}
#: What marks one unit in the decompressed bytes of each kind (counted by `measure_head`).
UNIT_MARKS = {"wikidata-json": b"\n{", "mediawiki-xml": PAGE_OPEN, "lines": b"\n"}
SAMPLE_BYTES = 8 << 20


def cut_head(kind: str, path: str, n: int, dest: Path) -> int:
    """The first `n` units of a dump of `kind` (`KINDS`) in `dest`; how many it holds."""
    return KINDS[kind][2](path, n, dest)


@dataclass(frozen=True)
class HeadSample:
    """What the start of a dump says about the whole: how much its bytes expand when decompressed
    and how many decompressed bytes one unit (entity, page, line) takes."""

    compression: str
    expansion: float  # decompressed bytes per byte on disk
    unit_bytes: float  # decompressed bytes per unit (0 when the sample holds none)
    sampled: int  # decompressed bytes read

    def estimate(self, size: int) -> tuple[int, int]:
        """(decompressed bytes, units) of a dump of `size` bytes on disk like its start."""
        decompressed = int(size * self.expansion)
        return decompressed, int(decompressed / self.unit_bytes) if self.unit_bytes else 0


def _decompressor(compression: str) -> Any:
    if compression == "gzip":
        return zlib.decompressobj(wbits=31)
    if compression == "bz2":
        return bz2.BZ2Decompressor()
    return None


def _sample(path: str, sample_bytes: int) -> tuple[str, bytes, int]:
    """(compression, the first `sample_bytes` or so of the decompressed stream, compressed bytes
    read for them). The compressed bytes are fed in small steps, so the count covers only what the
    sample used: the same file always gives the same sample. A damaged stream is a `DataError`."""
    compression = detect_compression(path)
    parts: list[bytes] = []
    decompressed = consumed = 0
    step = 1 << 16
    with open(path, "rb") as raw:
        engine = _decompressor(compression)
        while decompressed < sample_bytes:
            chunk = raw.read(step)
            if not chunk:
                break
            consumed += len(chunk)
            if engine is None:
                out = chunk
            else:
                try:
                    out = engine.decompress(chunk)
                    while engine.eof and engine.unused_data:  # the next gzip member or bz2 stream
                        rest = engine.unused_data
                        engine = _decompressor(compression)
                        out += engine.decompress(rest)
                except (OSError, EOFError, zlib.error) as exc:
                    raise DataError(f"cannot decompress ({exc})", path=path) from exc
            parts.append(out)
            decompressed += len(out)
    data = b"".join(parts)[:sample_bytes] if engine is None else b"".join(parts)
    return compression, data, consumed


def _expansion(compression: str, decompressed: int, consumed: int) -> float:
    return decompressed / consumed if consumed and compression != "none" else 1.0


def measure_expansion(path: str, sample_bytes: int = SAMPLE_BYTES) -> float:
    """Decompressed bytes per byte on disk of the start of a dump (about `sample_bytes` of it
    decompressed; 1.0 for an uncompressed file): what planning sizes a scan's shards and tasks by."""
    compression, data, consumed = _sample(path, sample_bytes)
    return _expansion(compression, len(data), consumed)


def measure_head(kind: str, path: str, sample_bytes: int = SAMPLE_BYTES) -> HeadSample:
    """Decompress about `sample_bytes` of the start of a dump of `kind` and measure it (`--dry-run`:
    a few MB read, whatever the dump's size)."""
    compression, data, consumed = _sample(path, sample_bytes)
    units = data.count(UNIT_MARKS[kind]) + (kind == "lines" and bool(data) and not data.endswith(b"\n"))
    expansion = _expansion(compression, len(data), consumed)
    return HeadSample(compression, expansion, len(data) / units if units else 0.0, len(data))
