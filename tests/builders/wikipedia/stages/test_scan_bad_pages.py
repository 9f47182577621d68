"""The Wikipedia scan's bad pages under `--max-bad-lines` (`engine.dump_scan`), on the real fixture dump
with two pages damaged, in every input layout: a page whose XML cannot be parsed and a page that is
not an export's shape are counted by reason and listed with their offsets; past the limit the build
stops naming the file and the first one's offset; a cut dump stays an error whatever the limit."""

from __future__ import annotations

import bz2
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from entbench.errors import DataError
from entbench.readers.mediawiki.xml_dump import split_header, trim_to_pages
from tests.builders.wikipedia.stages.test_scan import EN_2016, read, run

#: (title, what breaks it, reason)
DAMAGE = (
    ("Albedo", (b"<title>Albedo</title>", b"<title>Albedo"), "malformed_xml"),
    ("Altruism", (b"<id>336</id>", b"<id>x336</id>"), "malformed_page"),
)
BAD_IDS = {39, 336}


def damaged_xml() -> bytes:
    data = bz2.decompress(EN_2016.read_bytes())
    for _title, (old, new), _reason in DAMAGE:
        assert data.count(old) == 1
        data = data.replace(old, new)
    return data


def page_offset(data: bytes, title: str) -> int:
    match = re.search(rb"<page>\n    <title>" + re.escape(title.encode()), data)
    assert match is not None
    return match.start()


def write_multistream(data: bytes, tmp: Path) -> tuple[Path, list[int]]:
    """`data` as a multistream `.bz2` of 7 pages per stream with its index; the stream offsets."""
    header, start = split_header(data, "x")
    pages = trim_to_pages(data[start:])
    out = bytearray(bz2.compress(header))
    lines, offsets, pos = [], [], 0
    while pos < len(pages):
        cut = pos
        for _ in range(7):
            nxt = pages.find(b"</page>", cut)
            cut = nxt + len(b"</page>") if nxt >= 0 else cut
        first_id = re.search(rb"<id>x?(\d+)</id>", pages[pos:cut])
        assert first_id is not None
        lines.append(f"{len(out)}:{int(first_id.group(1))}:t\n")
        offsets.append(len(out))
        out += bz2.compress(pages[pos:cut])
        pos = cut
    out += bz2.compress(b"\n</mediawiki>\n")
    path = tmp / "enwiki-bad-pages-articles-multistream.xml.bz2"
    path.write_bytes(bytes(out))
    (tmp / "enwiki-bad-pages-articles-multistream-index.txt").write_text("".join(lines), encoding="utf-8")
    return path, offsets


def write_dump(kind: str, data: bytes, tmp: Path) -> tuple[Path, list[int]]:
    """`data` in the layout `kind`; the bz2 stream offsets of a multistream dump (else none)."""
    if kind == "multistream":
        return write_multistream(data, tmp)
    path = tmp / {"plain": "enwiki-bad.xml", "bz2": "enwiki-bad.xml.bz2", "gz": "enwiki-bad.xml.gz"}[kind]
    compress = {"plain": bytes, "bz2": bz2.compress, "gz": gzip.compress}[kind]
    path.write_bytes(compress(data))
    return path, []


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return read(run(tmp_path_factory.mktemp("clean"), chunk_mb=1), "pages")


@pytest.mark.parametrize("kind", ["plain", "bz2", "gz", "multistream"])
def test_bad_pages_are_counted_by_reason_and_listed(
    tmp_path: Path, kind: str, clean: list[dict[str, Any]]
) -> None:
    data = damaged_xml()
    dump, streams = write_dump(kind, data, tmp_path)
    stage = run(tmp_path / "out", sources=(f"wikipedia={dump}",), chunk_mb=1, max_bad_lines=2)
    stats = json.loads((stage / "_MANIFEST.json").read_text())["stats"]
    assert stats["rejected_total"] == 2
    assert stats["rejected_malformed_xml"] == stats["rejected_malformed_page"] == 1
    assert stats["pages_seen"] == 84 - 2
    # Every other page is read as from the undamaged dump.
    assert read(stage, "pages") == [p for p in clean if p["page_id"] not in BAD_IDS]
    rejects = [json.loads(line) for line in (stage / "_rejects.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in rejects] == [reason for _t, _d, reason in DAMAGE]
    assert {r["file"] for r in rejects} == {str(dump)}
    if kind == "multistream":
        assert all(r["offset"] in streams and "of these streams" in r["detail"] for r in rejects)
    else:  # the offset of the page's `<page>`, in the (decompressed) dump
        assert [r["offset"] for r in rejects] == [page_offset(data, title) for title, _d, _r in DAMAGE]
        assert rejects[0]["head"].startswith("<page>\n    <title>Albedo")


@pytest.mark.parametrize("kind", ["plain", "bz2"])
def test_bad_pages_past_the_limit_stop_the_build_at_the_first(tmp_path: Path, kind: str) -> None:
    data = damaged_xml()
    dump, _ = write_dump(kind, data, tmp_path)
    with pytest.raises(
        DataError, match=r"2 bad page\(s\), more than --max-bad-lines 1; first: malformed_xml"
    ) as info:
        run(tmp_path / "out", sources=(f"wikipedia={dump}",), chunk_mb=1, max_bad_lines=1)
    assert f"{dump} at byte offset {page_offset(data, 'Albedo')}:" in str(info.value)


def test_without_max_bad_lines_one_bad_page_is_an_error(tmp_path: Path) -> None:
    data = bz2.decompress(EN_2016.read_bytes()).replace(b"<id>336</id>", b"<id>x336</id>")
    dump, _ = write_dump("plain", data, tmp_path)
    with pytest.raises(
        DataError, match=r"1 bad page\(s\), more than --max-bad-lines 0; first: malformed_page"
    ):
        run(tmp_path / "out", sources=(f"wikipedia={dump}",))


@pytest.mark.parametrize("kind", ["plain", "gz"])
def test_a_cut_dump_is_an_error_whatever_the_limit(tmp_path: Path, kind: str) -> None:
    data = bz2.decompress(EN_2016.read_bytes())
    if kind == "plain":  # cut in the middle of a page: never a page short
        dump = tmp_path / "enwiki-cut.xml"
        dump.write_bytes(data[: page_offset(data, "Albedo") + 100])
        match = "never closed"
    else:  # the compressed stream ends early
        dump = tmp_path / "enwiki-cut.xml.gz"
        packed = gzip.compress(data)
        dump.write_bytes(packed[: len(packed) // 2])
        match = "compressed stream ends early"
    with pytest.raises(DataError, match=match) as info:
        run(tmp_path / "out", sources=(f"wikipedia={dump}",), chunk_mb=1, max_bad_lines=1000)
    assert str(dump) in str(info.value) and "byte offset" in str(info.value)
