"""The fast page reader gives mwxml's pages, and refuses what mwxml refuses, on every fixture dump.

mwxml is the reference reader (`ENTBENCH_XML_READER=mwxml`); the fast one
(`entbench.readers.mediawiki.pages`) must yield the same `RawPage`s on every XML dump in
`fixtures/`, read every way the scan reads them: whole, in byte ranges of the plain XML, as the
streams of a multistream `.bz2`, and sequentially through `read_dump`.
"""

from __future__ import annotations

import bz2
import functools
import gc
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from entbench.errors import DataError
from entbench.readers.mediawiki import page_ranges
from entbench.readers.mediawiki import pages as page_parser
from entbench.readers.mediawiki.page_ranges import page_range, read_page_range
from entbench.readers.mediawiki.xml_dump import (
    READER_ENV,
    RawPage,
    iter_pages,
    iter_pages_mwxml,
    read_dump,
    read_stream_offsets,
    read_streams,
    split_header,
    trim_to_pages,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DUMPS = sorted(p for p in FIXTURES.rglob("*.xml*") if p.suffix in (".xml", ".bz2"))
EN_2016 = FIXTURES / "wikipedia" / "enwiki-201605.pages-articles1.head-part.xml.bz2"


def xml_of(path: Path) -> bytes:
    data = path.read_bytes()
    return bz2.decompress(data) if path.suffix == ".bz2" else data


@functools.cache
def reference_read(dump: Path) -> tuple[bytes, bytes, int, bytes, tuple[RawPage, ...]]:
    """A dump's XML, its header, where its pages start, its pages and mwxml's reading of them:
    computed once for the tests that read the same bytes other ways (mwxml takes most of their time)."""
    data = xml_of(dump)
    header, start = split_header(data, "x")
    body = trim_to_pages(data[start:])
    return data, header, start, body, tuple(iter_pages_mwxml(header, body, "x", start))


def test_every_fixture_dump_is_covered() -> None:
    names = {p.name for p in DUMPS}
    # Every XML dump under fixtures/ is found (the glob takes new ones as they are committed).
    assert {
        "enwiki-constructed.xml",
        "zhwiki-fixture.xml.bz2",
        "enwiki-201605.pages-articles1.gensim-head.xml.bz2",
        "enwiki.dbpedia-minidump.part.xml.bz2",
    } <= names
    assert len(DUMPS) >= 7


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_same_pages_whole_and_in_byte_ranges(dump: Path, tmp_path: Path) -> None:
    data, header, start, body, read = reference_read(dump)
    reference = list(read)
    assert reference and list(iter_pages(header, body, "x", start)) == reference
    assert all(isinstance(p, RawPage) for p in reference)
    plain = tmp_path / "dump.xml"
    plain.write_bytes(data)
    for step in (5_000, 100_000):
        ranges = [
            read_page_range(str(plain), p, min(p + step, len(data))) for p in range(start, len(data), step)
        ]
        assert [pg for off, blk in ranges for pg in iter_pages(header, blk, "x", off)] == reference


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_a_range_read_in_chunks_is_the_range_read_whole(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A map task reads its range a chunk at a time (`page_range`); its ends are found by windows
    that here are smaller than most pages, so that pages and needles fall across them."""
    data, header, start, _body, read = reference_read(dump)
    plain = tmp_path / "dump.xml"
    plain.write_bytes(data)
    monkeypatch.setattr(page_ranges, "_SEEK_WINDOW", 97)
    for step in (3_000, 40_000):
        pages, joined = [], []
        for p in range(start, len(data), step):
            offset, chunks = page_range(str(plain), p, min(p + step, len(data)), 1_001)
            parts = list(chunks)
            assert all(len(c) <= 1_001 for c in parts)
            joined.append(b"".join(parts))
            pages += iter_pages(header, joined[-1], "x", offset)
        assert pages == list(read), step
        # the ranges' pages are the dump's pages, each once, in order, with nothing between them lost
        assert b"".join(joined).count(b"<page>") == len(read)


def test_a_range_whose_last_page_is_cut_is_refused_before_it_is_read(tmp_path: Path) -> None:
    data = xml_of(EN_2016)
    _header, start = split_header(data, "x")
    last_open = data.rindex(b"<page>")
    cut = tmp_path / "cut.xml"
    cut.write_bytes(data[: last_open + 200])
    with pytest.raises(DataError, match="never closed") as caught:
        page_range(str(cut), last_open - 10_000, last_open + 1, 4_096)
    assert caught.value.offset == last_open
    # a range before the cut page is whole, and reads as it did
    offset, chunks = page_range(str(cut), start, last_open - 10_000, 4_096)
    assert offset == start and b"".join(chunks).endswith(b"</page>")


def test_a_dump_shortened_while_its_range_is_read_is_refused_where_it_ends(tmp_path: Path) -> None:
    data = xml_of(EN_2016)
    _header, start = split_header(data, "x")
    dump = tmp_path / "dump.xml"
    dump.write_bytes(data)
    offset, chunks = page_range(str(dump), start, len(data), 4_096)
    first = next(chunks)
    short = offset + len(first) + 1_000
    dump.write_bytes(data[:short])  # another process cut the file after the range's ends were found
    with pytest.raises(DataError, match="became shorter") as caught:
        list(chunks)
    assert caught.value.offset == short


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_same_pages_from_a_sequential_read(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_ENV, "mwxml")
    site_mwxml, pages = read_dump(str(dump))
    reference = list(pages)
    monkeypatch.setenv(READER_ENV, "fast")
    site, pages = read_dump(str(dump))
    assert (site, list(pages)) == (site_mwxml, reference)


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_same_pages_from_multistream_streams(dump: Path, tmp_path: Path) -> None:
    _data, header, _start, pages, read = reference_read(dump)
    reference = list(read)
    # Wikimedia's layout: the header alone in the first stream, then streams of (here) 3 pages.
    out, lines, pos = bytearray(bz2.compress(header)), [], 0
    while pos < len(pages):
        cut = pos
        for _ in range(3):
            cut = pages.index(b"</page>", cut) + len(b"</page>")
            if pages.find(b"<page>", cut) < 0:
                cut = len(pages)
                break
        lines += [f"{len(out)}:{p.page_id}:x\n" for p in iter_pages(header, pages[pos:cut], "x", 0)]
        out += bz2.compress(pages[pos:cut])
        pos = cut
    out += bz2.compress(b"\n</mediawiki>\n")
    multi = tmp_path / "wiki-pages-articles-multistream.xml.bz2"
    multi.write_bytes(bytes(out))
    index = tmp_path / "wiki-pages-articles-multistream-index.txt"
    index.write_text("".join(lines), encoding="utf-8")
    bounds = [*read_stream_offsets(str(index), str(multi)), len(out)]
    read = [
        page
        for a, b in itertools.pairwise(bounds)
        for page in iter_pages(header, trim_to_pages(read_streams(str(multi), a, b)), str(multi), a)
    ]
    assert read == reference


# --- what both readers refuse --------------------------------------------------------------------
Mutation = Callable[[bytes], bytes]
FIRST_PAGE_END = b"</page>"


def _after_first(marker: bytes, insert: bytes) -> Mutation:
    return lambda body: body.replace(marker, marker + insert, 1)


REFUSED: dict[str, Mutation] = {
    "unclosed title": lambda body: body.replace(b"</title>", b"", 1),
    "truncated page": lambda body: body[: body.index(b"</text>")],
    "mismatched tags": lambda body: body.replace(b"</ns>", b"</id>", 1),
    "undefined entity": lambda body: body.replace(b"</title>", b"&nbsp;</title>", 1),
    "unknown element in mediawiki": _after_first(FIRST_PAGE_END, b"<logo>x</logo>"),
    "unknown element in page": _after_first(b"</title>", b"<color>red</color>"),
    "page metadata after its revision": lambda body: body.replace(
        FIRST_PAGE_END, b"<title>late</title>" + FIRST_PAGE_END, 1
    ),
    "unknown element in revision": _after_first(b"</timestamp>", b"<weather/>"),
    "unknown element in content": lambda body: body.replace(
        b"</revision>", b"<content><role>main</role><mood>x</mood></content></revision>", 1
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_both_readers_refuse_malformed_dumps(name: str) -> None:
    data = xml_of(EN_2016)
    header, start = split_header(data, "x")
    broken = REFUSED[name](trim_to_pages(data[start:]))
    for reader in (iter_pages_mwxml, iter_pages):
        with pytest.raises(DataError, match="malformed XML") as info:
            list(reader(header, broken, "dump.xml", 1234))
        assert "dump.xml at byte offset 1234" in str(info.value), reader.__name__


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"<ns>0</ns>", b"<ns>main</ns>"),  # mwxml: a bare ValueError
        (b"<id>12</id>", b"<id></id>"),  # mwxml: a bare TypeError
        (b"<title>Anarchism</title>", b""),  # mwxml: AttributeError on the missing title
        # mwxml stops at </mediawiki>: the pages of a second document would be lost silently
        (b"</page>", b"</page></mediawiki><mediawiki>"),
    ],
)
def test_the_fast_reader_names_what_mwxml_let_through_as_a_traceback(old: bytes, new: bytes) -> None:
    data = xml_of(EN_2016)
    header, start = split_header(data, "x")
    broken = trim_to_pages(data[start:]).replace(old, new, 1)
    with pytest.raises(DataError, match="malformed XML"):
        list(iter_pages(header, broken, "dump.xml", 0))


def test_an_unknown_reader_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from entbench.errors import UserError

    monkeypatch.setenv(READER_ENV, "lxml")
    with pytest.raises(UserError, match=READER_ENV):
        list(iter_pages(b"", b"", "x", 0))


def test_a_read_block_leaves_nothing_for_the_gc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Map tasks parse with the GC paused: a reader kept alive by a cycle would hold its last pages
    until the task ended, so each block's reader must be freed by reference counts alone."""
    _data, header, start, body, read = reference_read(EN_2016)
    monkeypatch.setenv(READER_ENV, "fast")
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            assert list(iter_pages(header, body, "x", start)) == list(read)
        # a block cut mid-page is refused, and its reader freed all the same
        with pytest.raises(DataError):
            list(iter_pages(header, body[: len(body) // 2], "x", start))
        readers = [o for o in gc.get_objects() if isinstance(o, page_parser._Reader)]
    finally:
        gc.enable()
    assert readers == []
