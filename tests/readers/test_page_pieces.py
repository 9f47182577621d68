"""A map task's pages in bounded pieces: incremental bz2 streams and page-aligned pieces give the
bytes a whole read gives (issue 33: a task's memory is a piece's, not its range's)."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from entbench.errors import DataError
from entbench.readers.mediawiki.multistream import iter_streams
from entbench.readers.mediawiki.xml_dump import (
    PAGE_OPEN,
    iter_pages,
    page_pieces,
    read_streams,
    split_header,
    trim_to_pages,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikipedia"
EN_2016 = FIXTURES / "enwiki-201605.pages-articles1.head-part.xml.bz2"


def real_dump() -> tuple[bytes, bytes]:
    """The fixture's header and its pages (a real enwiki dump's head)."""
    xml = bz2.decompress(EN_2016.read_bytes())
    header, start = split_header(xml, "x")
    return header, xml[start:]


def multistream(tmp_path: Path, header: bytes, pages: bytes, per_stream: int) -> tuple[Path, int]:
    """A multistream dump (header stream, streams of `per_stream` pages, footer stream) and the
    offset of its first page stream."""
    out = bytearray(bz2.compress(header))
    first = len(out)
    spans = pages.split(b"</page>")
    for i in range(0, len(spans) - 1, per_stream):
        out += bz2.compress(b"</page>".join(spans[i : i + per_stream]) + b"</page>")
    out += bz2.compress(spans[-1] + b"</mediawiki>\n")
    path = tmp_path / "dump-multistream.xml.bz2"
    path.write_bytes(bytes(out))
    return path, first


@pytest.mark.parametrize("piece_bytes", [300, 50_000, 10 << 20])
def test_pieces_of_streams_are_the_trimmed_streams_cut_at_pages(tmp_path: Path, piece_bytes: int) -> None:
    header, pages = real_dump()
    path, first = multistream(tmp_path, header, pages, per_stream=3)
    size = path.stat().st_size
    whole = trim_to_pages(read_streams(str(path), first, size))
    pieces = list(page_pieces(iter_streams(str(path), first, size, piece_bytes), piece_bytes, trim=True))
    assert b"".join(p for _, p in pieces) == whole
    assert [position for position, _ in pieces] == [
        sum(len(p) for _, p in pieces[:i]) for i in range(len(pieces))
    ]
    for _, piece in pieces:  # whole pages only, none larger than a piece unless it is one page
        assert piece.lstrip().startswith(PAGE_OPEN) and piece.endswith(b"</page>")
        assert len(piece) <= piece_bytes or piece.count(PAGE_OPEN) == 1
    ids = [p.page_id for _, piece in pieces for p in iter_pages(header, piece, "x", 0)]
    assert ids == [p.page_id for p in iter_pages(header, whole, "x", 0)]
    if piece_bytes == 50_000:
        assert len(pieces) > 3


def test_pieces_of_a_block_keep_its_positions() -> None:
    _, pages = real_dump()
    block = b"\n  " + trim_to_pages(pages)  # as `iter_page_blocks` cuts after a `</page>`
    pieces = list(page_pieces([block[:7], block[7:70_000], block[70_000:]], 30_000, trim=False))
    assert b"".join(p for _, p in pieces) == block
    for position, piece in pieces:
        assert block[position : position + len(piece)] == piece


def test_a_stream_cut_short_is_a_data_error_at_the_range_start(tmp_path: Path) -> None:
    header, pages = real_dump()
    path, first = multistream(tmp_path, header, pages, per_stream=3)
    cut = tmp_path / "cut-multistream.xml.bz2"
    data = path.read_bytes()
    cut.write_bytes(data[: len(data) - 40])
    with pytest.raises(DataError, match="cannot decompress the bz2 streams here") as info:
        list(iter_streams(str(cut), first, len(data) - 40))
    assert f"at byte offset {first}" in str(info.value)
    corrupt = tmp_path / "corrupt-multistream.xml.bz2"
    corrupt.write_bytes(data[:first] + b"not bz2 at all" + data[first:])
    with pytest.raises(DataError, match="cannot decompress"):
        list(iter_streams(str(corrupt), first, len(data)))
