"""Byte ranges of an uncompressed dump: every line is read exactly once, by the range it starts in."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entbench.readers.compressed.dumps import byte_ranges, read_range

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
