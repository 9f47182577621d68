"""Byte ranges of an uncompressed dump: every line is read exactly once, by the range it starts in."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entbench.readers.compressed.dumps import byte_ranges, iter_line_pieces, iter_range_pieces, range_bounds


def read_range(path: str, start: int, end: int) -> tuple[int, bytes]:
    """The lines whose first byte lies in [start, end), read in one piece, and their offset."""
    begin, stop = range_bounds(path, start, end)
    with open(path, "rb") as f:
        f.seek(begin)
        return begin, f.read(max(0, stop - begin))


LINES = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")), max_size=30)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LINES, final_newline=st.booleans(), chunk=st.integers(min_value=1, max_value=60))
def test_ranges_cover_the_file_once_in_order(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], final_newline: bool, chunk: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    path = tmp_path_factory.mktemp("ranges") / "dump.json"
    path.write_bytes(data)
    position = 0
    for start, end in byte_ranges(len(data), chunk):
        begin, block = read_range(str(path), start, end)
        if block:
            assert begin == position  # contiguous: nothing skipped, nothing read twice
            assert begin == 0 or data[begin - 1 : begin] == b"\n"  # starts at a line start
            assert start <= begin < end  # owned by the range its first byte falls in
            position += len(block)
    assert position == len(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=LINES,
    final_newline=st.booleans(),
    chunk=st.integers(min_value=1, max_value=60),
    piece=st.integers(min_value=1, max_value=50),
)
def test_range_pieces_are_the_range_in_whole_lines(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], final_newline: bool, chunk: int, piece: int
) -> None:
    """A range read a piece at a time gives the range's bytes, each piece whole lines at its offset."""
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    path = tmp_path_factory.mktemp("pieces") / "dump.json"
    path.write_bytes(data)
    longest = max((len(line) + 1 for line in lines), default=0)
    for start, end in byte_ranges(len(data), chunk):
        begin, block = read_range(str(path), start, end)
        parts = []
        for offset, buffer, length in iter_range_pieces(str(path), start, end, piece):
            part = bytes(buffer[:length])
            assert data[offset : offset + length] == part
            assert offset + length == len(data) or part.endswith(b"\n")  # whole lines
            assert length <= piece + longest  # a piece and at most one line more
            assert parts or offset == begin
            parts.append(part)
        assert b"".join(parts) == block


@settings(max_examples=300, deadline=None)
@given(
    lines=LINES,
    final_newline=st.booleans(),
    start=st.integers(min_value=0, max_value=400),
    length=st.integers(min_value=0, max_value=400),
    piece=st.integers(min_value=1, max_value=50),
)
def test_line_pieces_skip_the_line_in_progress_and_finish_the_last(
    lines: list[bytes], final_newline: bool, start: int, length: int, piece: int
) -> None:
    """`skip_partial` and `finish_line`: the lines whose preceding newline lies in the range (the
    first line belongs to a range at 0), as a `.gz` range task reads them."""
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    start = min(start, len(data))
    end = min(start + length, len(data))
    stream = io.BytesIO(data)
    stream.seek(start)
    pieces = iter_line_pieces(stream, start, end - start, piece, skip_partial=start > 0, finish_line=True)
    got = [(offset, bytes(buffer[:size])) for offset, buffer, size in pieces]
    line_starts = [0] if start == 0 and data else []
    line_starts += [i + 1 for i in range(len(data)) if data[i : i + 1] == b"\n" and start <= i < end]
    line_starts = [s for s in line_starts if s < len(data)]
    if not line_starts:
        assert got == []
        return
    last = line_starts[-1]
    newline = data.find(b"\n", last)
    expected = data[line_starts[0] : len(data) if newline < 0 else newline + 1]
    assert b"".join(part for _offset, part in got) == expected
    position = line_starts[0]
    for offset, part in got:
        assert offset == position
        position += len(part)
