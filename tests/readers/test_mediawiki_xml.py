"""Reading real MediaWiki XML dumps: siteinfo, namespace aliases, page blocks, multistream index."""

from __future__ import annotations

import bz2
import io
import itertools
from pathlib import Path

import pytest

from entbench.errors import DataError
from entbench.readers.mediawiki.page_ranges import read_page_range
from entbench.readers.mediawiki.xml_dump import (
    READER_ENV,
    BadPage,
    dump_tail_problem,
    iter_page_blocks,
    iter_pages,
    iter_pages_or_bad,
    multistream_index_path,
    parse_siteinfo,
    read_dump,
    read_header,
    read_stream_offsets,
    read_streams,
    split_header,
    trim_to_pages,
)
from entbench.readers.wikitext.titles import LinkKind, classify_target

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikipedia"
EN_2016 = FIXTURES / "enwiki-201605.pages-articles1.head-part.xml.bz2"
ZH_2018 = FIXTURES / "zhwiki-201807.wiki-dump-reader.part1.xml.bz2"


def xml_bytes(path: Path) -> bytes:
    return bz2.decompress(path.read_bytes())


def test_siteinfo_of_real_dumps() -> None:
    en = parse_siteinfo(read_header(str(EN_2016)), str(EN_2016))
    zh = parse_siteinfo(read_header(str(ZH_2018)), str(ZH_2018))
    assert (en.dbname, en.language, en.case) == ("enwiki", "en", "first-letter")
    assert (zh.dbname, zh.language) == ("zhwiki", "zh")
    assert (14, "Category", "first-letter") in zh.namespaces
    assert (828, "模块", "first-letter") in zh.namespaces  # the one localised name in this header


@pytest.mark.parametrize(
    ("target", "kind", "ns"),
    [
        ("分类:数学", LinkKind.CATEGORY, 14),
        ("分類:數學", LinkKind.CATEGORY, 14),
        ("Category:数学", LinkKind.CATEGORY, 14),
        ("文件:A.png", LinkKind.FILE, 6),
        ("檔案:A.png", LinkKind.FILE, 6),
        ("图像:A.png", LinkKind.FILE, 6),
        ("Image:A.png", LinkKind.FILE, 6),
        (":分類:數學", LinkKind.NAMESPACE, 14),
        ("維基百科:新手入門", LinkKind.NAMESPACE, 4),
        ("WP:用户页", LinkKind.NAMESPACE, 4),
        ("模組:String", LinkKind.NAMESPACE, 828),
        ("user_talk:Chou0416", LinkKind.NAMESPACE, 3),
        ("ky:Help:Contents", LinkKind.INTERLANGUAGE, 0),
        ("wikt:", LinkKind.INTERWIKI, 0),
        ("m:首页", LinkKind.INTERWIKI, 0),
        ("数学", LinkKind.ARTICLE, 0),
        ("Star Trek: Voyager", LinkKind.ARTICLE, 0),
    ],
)
def test_zhwiki_namespace_names_and_aliases(target: str, kind: LinkKind, ns: int) -> None:
    # Targets as written in the real zhwiki pages (e.g. "[[分類:北大西洋公約組織會員國首都]]",
    # "[[user_talk:Chou0416|…]]", "[[ky:Help:Contents]]"); `<siteinfo>` lists only English names.
    table = parse_siteinfo(read_header(str(ZH_2018)), str(ZH_2018)).namespace_table()
    result = classify_target(target, table)
    assert (result.kind, result.ns) == (kind, ns)


@pytest.mark.parametrize(
    ("target", "kind", "title"),
    [
        # the current interwiki map's prefixes: a handle is another site, not an article
        ("hdl:10125/27463", LinkKind.INTERWIKI, "hdl:10125/27463"),
        ("arxiv:1305.3647", LinkKind.INTERWIKI, "arxiv:1305.3647"),
        ("doom_wiki:Imp", LinkKind.INTERWIKI, "doom wiki:Imp"),
        # the wiki's own language is a local interwiki: an article link, as with a leading colon
        (":en:God", LinkKind.ARTICLE, "God"),
        ("en:god", LinkKind.ARTICLE, "God"),
        ("en:Category:Gods", LinkKind.NAMESPACE, "Category:Gods"),
        (":de:Gott", LinkKind.INTERWIKI, "de:Gott"),
        ("de:Gott", LinkKind.INTERLANGUAGE, "de:Gott"),
        ("HDL: Hardware", LinkKind.INTERWIKI, "HDL: Hardware"),
    ],
)
def test_interwiki_prefixes_and_the_local_language(target: str, kind: LinkKind, title: str) -> None:
    table = parse_siteinfo(read_header(str(EN_2016)), str(EN_2016)).namespace_table()
    result = classify_target(target, table)
    assert (result.kind, result.title) == (kind, title)


def test_title_normalisation() -> None:
    table = parse_siteinfo(read_header(str(EN_2016)), str(EN_2016)).namespace_table()
    cases = {
        "anarchy": "Anarchy",
        "Assistive_technology": "Assistive technology",
        "  Berlin  Wall ": "Berlin Wall",
        "AT&amp;T Inc.": "AT&T Inc.",
        "Caf%C3%A9": "Café",
        "Berlin#History": "Berlin",
        "category:Berlin": "Category:Berlin",
        "ß": "ß",  # upper-casing it would change its length: kept, as MediaWiki does
    }
    for raw, expected in cases.items():
        assert classify_target(raw, table).title == expected, raw


def test_page_blocks_cover_every_page_once() -> None:
    data = xml_bytes(EN_2016)
    header, start = split_header(data, "x")
    whole = [p.page_id for p in iter_pages(header, trim_to_pages(data[start:]), "x", start)]
    assert len(whole) == 84
    blocks = list(iter_page_blocks(io.BytesIO(data), len(header), 100_000, "x"))
    assert len(blocks) > 5
    pieced = [p.page_id for off, block in blocks for p in iter_pages(header, block, "x", off)]
    assert pieced == whole
    for offset, block in blocks:
        assert data[offset : offset + len(block)] == block


@pytest.mark.parametrize("keep", [0.5, 0.999])
def test_a_stream_cut_short_is_an_error_after_its_whole_pages(keep: float) -> None:
    data = xml_bytes(EN_2016)
    header, _ = split_header(data, "x")
    cut = data[: int(len(data) * keep)]
    blocks: list[tuple[int, bytes]] = []
    with pytest.raises(DataError, match=r"truncated dump\?") as info:
        for block in iter_page_blocks(io.BytesIO(cut), len(header), 100_000, "x"):
            blocks.append(block)
    assert blocks and all(data[o : o + len(b)] == b for o, b in blocks)
    assert "x at byte offset" in str(info.value)


def test_a_dump_ending_between_pages_without_its_footer_is_an_error() -> None:
    data = xml_bytes(EN_2016)
    last_page_end = data.rindex(b"</page>") + len(b"</page>")
    assert dump_tail_problem(data[-4096:]) is None
    problem = dump_tail_problem(data[:last_page_end] + b"\n")
    assert problem is not None and "without </mediawiki>" in problem[0]


def test_byte_ranges_take_each_page_once(tmp_path: Path) -> None:
    data = xml_bytes(EN_2016)
    path = tmp_path / "dump.xml"
    path.write_bytes(data)
    header, start = split_header(data, str(path))
    expected = [p.page_id for p in iter_pages(header, trim_to_pages(data[start:]), "x", 0)]
    for step in (7_000, 333_333):
        ids = []
        for pos in range(start, len(data), step):
            offset, body = read_page_range(str(path), pos, min(pos + step, len(data)))
            ids += [p.page_id for p in iter_pages(header, body, str(path), offset)]
        assert ids == expected, step


def test_multistream_index_and_streams(tmp_path: Path) -> None:
    data = xml_bytes(EN_2016)
    header, start = split_header(data, "x")
    pages = trim_to_pages(data[start:])
    dump = tmp_path / "enwiki-test-pages-articles-multistream.xml.bz2"
    index = tmp_path / "enwiki-test-pages-articles-multistream-index.txt"
    # Wikimedia layout: the header alone in the first stream, then streams of (here) 10 pages.
    chunks, pos = [], 0
    while pos < len(pages):
        cut = pos
        for _ in range(10):
            nxt = pages.find(b"</page>", cut)
            if nxt < 0:
                break
            cut = nxt + len(b"</page>")
        chunks.append(pages[pos:cut])
        pos = cut
    out = bytearray(bz2.compress(header))
    lines = []
    for chunk in chunks:
        offset = len(out)
        for page in iter_pages(header, chunk, "x", 0):
            lines.append(f"{offset}:{page.page_id}:{page.title}\n")
        out += bz2.compress(chunk)
    out += bz2.compress(b"\n</mediawiki>\n")
    dump.write_bytes(bytes(out))
    index.write_text("".join(lines), encoding="utf-8")
    assert multistream_index_path(str(dump)) == str(index)
    offsets = read_stream_offsets(str(index), str(dump))
    assert len(offsets) == len(chunks)
    bounds = [*offsets, len(out)]
    ids = []
    for a, b in itertools.pairwise(bounds):
        body = trim_to_pages(read_streams(str(dump), a, b))
        ids += [p.page_id for p in iter_pages(header, body, str(dump), a)]
    _, whole = read_dump(str(dump))
    assert ids == [p.page_id for p in whole]


def test_malformed_xml_is_a_data_error() -> None:
    data = xml_bytes(EN_2016)
    header, start = split_header(data, "x")
    body = trim_to_pages(data[start:])
    broken = body.replace(b"</title>", b"", 1)
    with pytest.raises(DataError, match="malformed XML") as info:
        list(iter_pages(header, broken, "dump.xml", 1234))
    assert "dump.xml at byte offset 1234" in str(info.value)


@pytest.mark.parametrize("reader", ["fast", "mwxml"])
def test_a_bad_page_is_reported_and_the_pages_after_it_are_read(
    reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_ENV, reader)
    data = xml_bytes(EN_2016)
    header, start = split_header(data, "x")
    body = trim_to_pages(data[start:])
    good = [p.page_id for p in iter_pages(header, body, "x", 0)]
    broken = body.replace(b"<title>Albedo</title>", b"<title>Albedo", 1)
    out = list(iter_pages_or_bad(header, broken, 1000))
    bad = [p for p in out if isinstance(p, BadPage)]
    assert [(b.offset, b.reason) for b in bad] == [
        (1000 + broken.index(b"<page>\n    <title>Albedo"), "malformed_xml")
    ]
    assert bad[0].head.startswith(b"<page>\n    <title>Albedo")
    assert [p.page_id for p in out if not isinstance(p, BadPage)] == [i for i in good if i != 39]


def test_damage_after_a_page_makes_it_a_bad_page() -> None:
    data = xml_bytes(EN_2016)
    header, start = split_header(data, "x")
    body = trim_to_pages(data[start:])
    good = [p.page_id for p in iter_pages(header, body, "x", 0)]
    # A second document after the first page: not a page of its own, but nothing may pass unnoticed
    # (the first page's span holds it, so that page is the bad one, at the block's first byte).
    cut = body.index(b"</page>") + len(b"</page>")
    broken = body[:cut] + b"</mediawiki><mediawiki>" + body[cut:]
    out = list(iter_pages_or_bad(header, broken, 1000))
    assert [p.page_id for p in out if not isinstance(p, BadPage)] == good[1:]
    bad = [p for p in out if isinstance(p, BadPage)]
    assert [(b.offset, b.reason) for b in bad] == [(1000, "malformed_xml")]


def test_not_a_dump_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "x.xml"
    path.write_text('{"id": "Q1"}\n')
    with pytest.raises(DataError, match="not an XML file"):
        read_header(str(path))
    path.write_text("<mediawiki><page></page></mediawiki>")
    with pytest.raises(DataError, match="siteinfo"):
        read_header(str(path))
