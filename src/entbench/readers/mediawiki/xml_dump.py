"""Reading MediaWiki XML dumps (`pages-articles`, spec §3) with mwxml, in parallel where possible.

A dump is `<mediawiki><siteinfo>…</siteinfo><page>…</page>…</mediawiki>`. Page text is
XML-escaped, so the byte strings `<page>` and `</page>` never occur inside a page's content: a
dump can be cut into blocks of whole pages at those markers and each block parsed on its own by
mwxml, wrapped in the dump's own header and a closing `</mediawiki>`. That is how work is split:

* uncompressed XML: byte ranges (a page belongs to the range its `<page>` starts in);
* `pages-articles-multistream.xml.bz2` with its `…-index.txt[.bz2]` next to it: the index lists the
  byte offset of every bz2 stream (100 pages each), so workers decompress their own streams;
* any other `.bz2` or `.gz`: decompressed sequentially, cut into page-aligned blocks that workers
  parse in parallel.

`<siteinfo>` gives the namespace names; `namespace_table` adds the canonical and well-known local
aliases (`readers.mediawiki.namespaces`) that wikitext may use instead.

Pages are read by the fast page reader (`readers.mediawiki.pages`: the same parser, the same
records and the same shape checks as mwxml, without mwxml's per-element Python objects); mwxml
stays the reference reader: `ENTBENCH_XML_READER=mwxml` reads pages with it instead (outputs are
identical, `tests/readers/test_page_readers.py`). `<siteinfo>` is always read by mwxml.
"""

from __future__ import annotations

import bz2
import io
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol
from xml.etree.ElementTree import ParseError
from xml.parsers import expat

import mwxml
from mwxml.errors import MalformedXML

from entbench.errors import DataError, UserError
from entbench.readers.compressed.dumps import detect_compression, open_decompressed
from entbench.readers.mediawiki.interwiki import INTERWIKI_PREFIXES, WIKIPEDIA_LANGUAGES
from entbench.readers.mediawiki.multistream import iter_streams
from entbench.readers.mediawiki.namespaces import link_trail, namespace_aliases
from entbench.readers.mediawiki.page_ranges import PAGE_CLOSE, PAGE_OPEN
from entbench.readers.mediawiki.pages import FEED_BYTES, MalformedPage, PageRecord, iter_page_records
from entbench.readers.wikitext.titles import NamespaceTable, fold_prefix

FOOTER = b"</mediawiki>"
#: A header longer than this without `</siteinfo>` is not a MediaWiki dump.
MAX_HEADER_BYTES = 4 << 20
_LANG_ATTR = re.compile(rb'xml:lang="([A-Za-z0-9-]+)"')
#: Which reader parses pages: `fast` (default) or `mwxml` (the reference; same pages, slower).
READER_ENV = "ENTBENCH_XML_READER"
READERS = ("fast", "mwxml")


@dataclass(frozen=True)
class SiteInfo:
    """What `<siteinfo>` says about the wiki, plus the language from `<mediawiki xml:lang>`."""

    dbname: str
    language: str
    case: str
    namespaces: tuple[tuple[int, str, str], ...]  # (id, name, case)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (written next to the scan's shards as `_siteinfo.json`)."""
        return {
            "dbname": self.dbname,
            "language": self.language,
            "case": self.case,
            "namespaces": [list(ns) for ns in self.namespaces],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SiteInfo:
        """Inverse of `to_json`."""
        return cls(
            dbname=str(data["dbname"]),
            language=str(data["language"]),
            case=str(data["case"]),
            namespaces=tuple((int(n[0]), str(n[1]), str(n[2])) for n in data["namespaces"]),
        )

    def namespace_table(self) -> NamespaceTable:
        """Namespace prefixes from `<siteinfo>`, canonical names and the wiki's known aliases."""
        names: dict[str, int] = {}
        for alias, ns in namespace_aliases(self.language).items():
            names[fold_prefix(alias)] = ns
        display: dict[int, str] = {}
        case: dict[int, str] = {}
        for ns, name, ns_case in self.namespaces:
            case[ns] = ns_case or self.case
            if name:
                names[fold_prefix(name)] = ns  # the dump's own names win over aliases
                display[ns] = name
        return NamespaceTable(
            names=names,
            display=display,
            case=case,
            interwiki=INTERWIKI_PREFIXES - set(names),
            languages=WIKIPEDIA_LANGUAGES - set(names),
            language=self.language,
            linktrail=link_trail(self.language),
        )


#: One `<page>` as mwxml reads it (the last revision when there are several): page_id, title, ns,
#: redirect, revision_id, text.
RawPage = PageRecord


def page_reader() -> str:
    """The page reader `ENTBENCH_XML_READER` selects (`fast` unless set)."""
    reader = os.environ.get(READER_ENV, "") or "fast"
    if reader not in READERS:
        raise UserError(f"{READER_ENV}={reader!r}: expected one of {', '.join(READERS)}")
    return reader


def split_header(data: bytes, path: str) -> tuple[bytes, int]:
    """The dump header (everything before the first `<page>`) and the offset where pages start."""
    end = data.find(b"</siteinfo>")
    if end < 0:
        raise DataError("no </siteinfo> in the first bytes: not a MediaWiki XML dump", path=path, offset=0)
    start = data.find(PAGE_OPEN, end)
    if start < 0:
        start = data.find(FOOTER, end)
        if start < 0:
            start = len(data)
    return data[:start], start


def read_header(path: str) -> bytes:
    """The header of a dump (any compression): bytes up to the first `<page>`."""
    compression = detect_compression(path)
    data = b""
    try:
        with open_decompressed(path, compression) as stream:
            while b"</siteinfo>" not in data and len(data) < MAX_HEADER_BYTES:
                chunk = stream.read(64 << 10)
                if not chunk:
                    break
                data += chunk
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot decompress the start of the dump ({exc})", path=path, offset=0) from exc
    if not data.lstrip().startswith(b"<"):
        raise DataError("not an XML file (expected a MediaWiki XML export)", path=path, offset=0)
    return split_header(data, path)[0]


def parse_siteinfo(header: bytes, path: str) -> SiteInfo:
    """Parse `<siteinfo>` from a dump header with mwxml."""
    try:
        dump = mwxml.Dump.from_file(io.BytesIO(header + FOOTER))
    except (ParseError, MalformedXML, AssertionError) as exc:
        raise DataError(f"malformed <siteinfo>: {exc}", path=path, offset=0) from exc
    info = dump.site_info
    m = _LANG_ATTR.search(header[:2048])
    dbname = info.dbname or ""
    language = m.group(1).decode("ascii") if m else (dbname[:-4] if dbname.endswith("wiki") else "en")
    namespaces = tuple(
        sorted(
            (int(ns.id), ns.name or "", ns.case or info.case or "first-letter")
            for ns in info.namespaces or ()
        )
    )
    return SiteInfo(dbname=dbname, language=language, case=info.case or "first-letter", namespaces=namespaces)


def iter_pages(header: bytes, body: bytes, path: str, offset: int) -> Iterator[RawPage]:
    """Pages of a block of whole `<page>` elements, parsed inside the dump's header.

    Both readers raise on tags they do not expect inside `<page>`/`<revision>` (mwxml records that
    assumption itself); either that or broken XML becomes a `DataError` naming the block offset.
    """
    if page_reader() == "mwxml":
        yield from iter_pages_mwxml(header, body, path, offset)
        return
    try:
        yield from iter_page_records((header, body, FOOTER))
    except MalformedPage as exc:
        raise DataError(
            f"malformed XML in the block of pages starting here: {exc}", path=path, offset=offset
        ) from exc


def iter_pages_mwxml(header: bytes, body: bytes, path: str, offset: int) -> Iterator[RawPage]:
    """`iter_pages` with mwxml, the reference reader."""
    try:
        dump = mwxml.Dump.from_file(io.BytesIO(header + body + FOOTER))
        for page in dump:
            yield _raw_page(page)

    except (ParseError, MalformedXML) as exc:
        raise DataError(
            f"malformed XML in the block of pages starting here: {exc}", path=path, offset=offset
        ) from exc


class BadPage(NamedTuple):
    """A page that cannot be read (`iter_pages_or_bad`): where its `<page>` starts, why, its bytes' head."""

    offset: int
    reason: str  # malformed_xml (the XML parser refused it) | malformed_page (not an export's shape)
    detail: str
    head: bytes


def _parse_block(header: bytes, body: bytes) -> Iterator[RawPage]:
    """The pages of `body` by the selected reader; raises `_Unreadable` on a malformed block."""
    if page_reader() == "mwxml":
        try:
            yield from map(_raw_page, mwxml.Dump.from_file(io.BytesIO(header + body + FOOTER)))
        except ParseError as exc:
            raise _Unreadable("malformed_xml", str(exc)) from exc
        except MalformedXML as exc:
            raise _Unreadable("malformed_page", str(exc)) from exc
        return
    try:
        yield from iter_page_records((header, body, FOOTER))
    except MalformedPage as exc:
        reason = "malformed_xml" if isinstance(exc.__cause__, expat.ExpatError) else "malformed_page"
        raise _Unreadable(reason, str(exc)) from exc


class _Unreadable(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def page_spans(body: bytes) -> list[tuple[int, int]]:
    """[start, end) of each `<page>` of a block, up to the next `<page>` (or the block's end): a page
    whose `</page>` is missing or broken stays one span, and the pages after it their own."""
    starts = []
    at = body.find(PAGE_OPEN)
    while at >= 0:
        starts.append(at)
        at = body.find(PAGE_OPEN, at + len(PAGE_OPEN))
    return list(zip(starts, [*starts[1:], len(body)], strict=True))


def iter_pages_or_bad(header: bytes, body: bytes, offset: int) -> Iterator[RawPage | BadPage]:
    """`iter_pages`, but a page that cannot be read is a `BadPage` (offset `offset` + its place in
    `body`) and the pages after it are still read.

    The block is parsed whole; only when that fails are its pages parsed one at a time from the
    first one not yet given (the parser gives pages in order, so those given are the first spans)."""
    given = 0
    try:
        for page in _parse_block(header, body):
            yield page
            given += 1
        return
    except _Unreadable as exc:
        whole = exc
    found = False
    for start, end in page_spans(body)[given:]:
        span = body[start:end]
        try:
            pages = list(_parse_block(header, span))
        except _Unreadable as exc:
            found = True
            yield BadPage(offset + start, exc.reason, exc.detail, span[:256])
            continue
        yield from pages
    if not found:  # every page reads alone: the damage is between pages (the block's own offset)
        yield BadPage(offset, whole.reason, f"between pages: {whole.detail}", body[:256])


def read_dump(path: str) -> tuple[SiteInfo, Iterator[RawPage]]:
    """A whole dump read sequentially (any compression): its site info and its pages, streamed."""
    site = parse_siteinfo(read_header(path), path)

    def pages() -> Iterator[RawPage]:
        with open_decompressed(path, detect_compression(path)) as stream:
            try:
                if page_reader() == "mwxml":
                    yield from map(_raw_page, mwxml.Dump.from_file(stream))
                else:
                    yield from iter_page_records(iter(lambda: stream.read(FEED_BYTES), b""))
            except (ParseError, MalformedXML, MalformedPage) as exc:
                raise DataError(f"malformed XML: {exc}", path=path) from exc
            except (OSError, EOFError) as exc:
                raise DataError(f"cannot decompress ({exc})", path=path) from exc

    return site, pages()


def _raw_page(page: Any) -> RawPage:
    """mwxml's page as a `RawPage`."""
    text = ""
    revision_id: int | None = None
    for revision in page:  # pages-articles has one revision; with several, the last one wins
        revision_id = revision.id
        text = revision.text or ""
    return RawPage(
        page_id=int(page.id),
        title=page.title,
        ns=int(page.namespace),
        redirect=page.redirect,
        revision_id=revision_id,
        text=text,
    )


def page_block_end(data: bytes) -> int:
    """End of the last complete `</page>` in `data` (0 when there is none)."""
    cut = data.rfind(PAGE_CLOSE)
    return 0 if cut < 0 else cut + len(PAGE_CLOSE)


def trim_to_pages(data: bytes) -> bytes:
    """The `<page>…</page>` elements of a decompressed block (header or footer bytes dropped)."""
    start = data.find(PAGE_OPEN)
    if start < 0:
        return b""
    return data[start : page_block_end(data)]


def dump_tail_problem(tail: bytes) -> tuple[str, int] | None:
    """What is wrong with the last bytes of a dump, and where in `tail`, or None when they end it
    properly: only `</mediawiki>` may follow the last `</page>`. A dump cut short, even inside an
    intact compressed stream, must be an error, never a smaller dump."""
    rest_start = page_block_end(tail)
    rest = tail[rest_start:]
    opened = rest.find(PAGE_OPEN)
    if opened >= 0:
        return "a <page> is never closed (truncated dump?)", rest_start + opened
    if FOOTER not in rest:
        return "the dump ends without </mediawiki> (truncated dump?)", len(tail)
    return None


def check_dump_tail(tail: bytes, path: str, tail_offset: int) -> None:
    """Raise `DataError` if `tail`, the last bytes of a dump from `tail_offset`, does not end it."""
    problem = dump_tail_problem(tail)
    if problem is not None:
        raise DataError(problem[0], path=path, offset=tail_offset + problem[1])


def check_multistream_end(path: str, label: str, last_stream: int, size: int) -> None:
    """Raise `DataError` unless the bz2 streams from the index's last offset to the end of a
    multistream dump end it properly: a dump cut after its index was written."""
    problem = dump_tail_problem(read_streams(path, last_stream, size))
    if problem is not None:
        raise DataError(f"in the bz2 streams starting here: {problem[0]}", path=label, offset=last_stream)


def read_plain_tail(path: str, size: int, tail_bytes: int = 1 << 16) -> tuple[int, bytes]:
    """The last `tail_bytes` of an uncompressed file and their offset."""
    start = max(0, size - tail_bytes)
    with open(path, "rb") as f:
        f.seek(start)
        return start, f.read()


class ByteStream(Protocol):
    """What `iter_page_blocks` reads: `read(n)` gives at most n bytes, b"" at the end."""

    def read(self, n: int, /) -> bytes: ...


def iter_page_blocks(
    stream: ByteStream, header_len: int, block_bytes: int, path: str
) -> Iterator[tuple[int, bytes]]:
    """Page-aligned blocks of a decompressed stream after the header: (offset, bytes); a stream
    that does not end the dump properly raises `DataError` after the last whole page."""
    stream.read(header_len)
    offset = header_len
    carry = b""
    while True:
        data = stream.read(block_bytes)
        if not data:
            break
        buf = carry + data if carry else data
        cut = page_block_end(buf)
        if cut == 0:
            carry = buf
            continue
        yield offset, buf[:cut]
        offset += cut
        carry = buf[cut:]
    rest = trim_to_pages(carry)
    if rest:
        yield offset + carry.find(PAGE_OPEN), rest
    check_dump_tail(carry, path, offset)


def multistream_index_path(path: str) -> str | None:
    """The index next to a multistream dump (Wikimedia naming), or None.

    `enwiki-20240101-pages-articles-multistream.xml.bz2` ->
    `enwiki-20240101-pages-articles-multistream-index.txt.bz2` (or `.txt`).
    """
    if not path.endswith(".xml.bz2"):
        return None
    stem = path[: -len(".xml.bz2")]
    for candidate in (stem + "-index.txt.bz2", stem + "-index.txt"):
        if os.path.isfile(candidate):
            return candidate
    return None


def read_stream_offsets(index_path: str, dump_path: str) -> list[int]:
    """Distinct stream offsets from a multistream index (`offset:page_id:title` lines), sorted."""
    offsets: set[int] = set()
    with bz2.open(index_path, "rb") if index_path.endswith(".bz2") else open(index_path, "rb") as f:
        for n, line in enumerate(f, 1):
            head, sep, _ = line.partition(b":")
            if not sep or not head.strip().isdigit():
                raise DataError(f"multistream index line {n} is not offset:page_id:title", path=index_path)
            offsets.add(int(head))
    size = os.path.getsize(dump_path)
    result = sorted(offsets)
    if result and (result[0] <= 0 or result[-1] >= size):
        raise DataError("multistream index offsets do not fit the dump file", path=index_path)
    return result


def read_streams(path: str, start: int, end: int) -> bytes:
    """Decompress the concatenated bz2 streams in [start, end) of a multistream dump."""
    return b"".join(iter_streams(path, start, end))


def page_pieces(chunks: Iterable[bytes], piece_bytes: int, *, trim: bool) -> Iterator[tuple[int, bytes]]:
    """Blocks of whole `<page>` elements of about `piece_bytes` (a page larger than that is one
    piece) from consecutive byte chunks, and where each starts: (position, bytes).

    `trim`: the chunks are decompressed streams (`trim_to_pages`' input): what precedes the first
    `<page>` and follows the last `</page>` is dropped and positions count from the first `<page>`,
    so the pieces put together are `trim_to_pages` of the whole. Otherwise the chunks are already
    a block of whole pages (`iter_page_blocks`' or `read_page_range`'s) and positions count from
    its first byte."""
    buf = b""
    at = 0  # buf[:at] is yielded already; cutting it off at each piece would copy the rest again
    position = 0  # of buf[at] in the (trimmed) block
    started = not trim
    for chunk in chunks:
        buf = buf[at:] + chunk if at < len(buf) else chunk
        at = 0
        if not started:
            first = buf.find(PAGE_OPEN)
            if first < 0:
                buf = buf[-(len(PAGE_OPEN) - 1) :]  # a `<page>` may be cut across chunks
                continue
            buf, started = buf[first:], True
        while len(buf) - at >= piece_bytes:
            close = buf.rfind(PAGE_CLOSE, at, at + piece_bytes)
            if close < 0:
                close = buf.find(PAGE_CLOSE, at)  # a page larger than a piece is a piece
                if close < 0:
                    break  # no whole page yet: read on
            cut = close + len(PAGE_CLOSE)
            yield position, buf[at:cut]
            position += cut - at
            at = cut
    if not started:
        return
    rest = buf[at:]
    last = page_block_end(rest) if trim else len(rest)
    if last:
        yield position, rest[:last]
