"""Fuzzing both C extensions against their Python references, on whole inputs rather than lines.

tests/builders/wikidata/test_native.py mutates one entity line between fixed neighbours and
tests/readers/test_wikitext_native.py renders token soups; here the inputs are what the scan and the
renderer really get, mutated:

- blocks of a Wikidata dump: real lines, mutated lines, framing and blank lines, trailing commas,
  stray spaces and carriage returns, with or without a last newline, cut into scanner calls of any
  size, under every language/site configuration and shard count: the native path plus its
  fallbacks must give what the reference path alone gives (tables, stats, rejects, errors);
- arbitrary bytes mixed with real lines, scanned from and to any offsets by one scanner or several
  routed ones: the line accounting must match a model of the scan's line rules, and every line the
  scanner keeps must be JSON whose id it read;
- windows of real wiki pages, mutated: the C renderer, template spans and template names must give
  what the Python ones give.

`make sanitize` runs these under AddressSanitizer and UndefinedBehaviorSanitizer too, where they
are a memory-safety fuzz of the C code. Budgets: tests/fuzz/budget.py (ENTBENCH_FUZZ_SCALE).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.wikidata.native import _wdscan, native_available
from entbench.readers.wikitext import markup as wikitext_markup
from entbench.readers.wikitext import native as wikitext_native
from entbench.readers.wikitext.markup import template_spans_python
from entbench.readers.wikitext.render import RenderConfig
from tests.builders.wikidata.native_support import assert_paths_equal, scan_both
from tests.builders.wikidata.test_native import CONFIGS, mutated_lines, pool
from tests.fuzz.budget import fuzz_settings
from tests.fuzz.test_wikitext_mutation_fuzz import mutated_pages
from tests.readers.test_wikitext_native import both

pytestmark = pytest.mark.skipif(
    not (native_available() and wikitext_native.native_available()),
    reason="the native extensions are not built (no C compiler at install)",
)

#: Lines a dump has besides entities: its framing, blank lines, whitespace the scan strips.
FRAMING = [b"[", b"]", b"\xef\xbb\xbf[", b"", b" ", b"\t\x0b\x0c ", b"\r"]
#: bytes.strip()'s whitespace: what the scan strips around a line.
SPACE = b" \t\n\r\x0b\x0c"
BOM_OPEN = b"\xef\xbb\xbf["


# --- dump blocks: native + fallbacks == reference ------------------------------------------------------
@st.composite
def dump_blocks(draw: st.DrawFn) -> bytes:
    """Lines of a dump block: real, mutated or framing, with the quirks a dump's layout allows."""
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["real", "real", "mutated", "framing"]))
        if kind == "framing":
            lines.append(draw(st.sampled_from(FRAMING)))
            continue
        line = draw(st.sampled_from(pool())) if kind == "real" else draw(mutated_lines())
        if draw(st.booleans()):
            line += b","
        before, after = draw(st.sampled_from([b"", b" "])), draw(st.sampled_from([b"", b" ", b"\t", b"\r"]))
        lines.append(before + line + after)
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"\r\n", b""]))


@fuzz_settings(100)
@given(
    block=dump_blocks(),
    config=st.sampled_from(sorted(CONFIGS)),
    num_shards=st.integers(1, 6),
    piece_bytes=st.one_of(st.none(), st.integers(1, 3000)),
    base=st.integers(0, 1 << 40),
)
def test_dump_blocks_scan_the_same_both_ways(
    block: bytes, config: str, num_shards: int, piece_bytes: int | None, base: int
) -> None:
    languages, sites = CONFIGS[config]
    pair = scan_both(
        block, languages=languages, sites=sites, num_shards=num_shards, base=base, piece_bytes=piece_bytes
    )
    assert_paths_equal(pair, f"{config}, {num_shards} shards, pieces of {piece_bytes} bytes")


# --- arbitrary bytes: the scanner's line accounting ----------------------------------------------------
@cache
def small_lines() -> list[bytes]:
    """Real lines small enough to mix many into one input."""
    return sorted((line for line in pool() if len(line) <= 4000), key=len)[:20]


@st.composite
def byte_soups(draw: st.DrawFn) -> tuple[bytes, int, int]:
    """Real lines, random bytes and line structure mixed; a [start, end) range of it to scan."""
    pieces = draw(
        st.lists(
            st.one_of(
                st.sampled_from(small_lines()),
                st.binary(max_size=40),
                st.sampled_from([*FRAMING, b"\n", b"\n", b",", b"{", b'"', b"\\", b"\xff"]),
            ),
            max_size=12,
        )
    )
    data = b"".join(pieces)
    start = draw(st.integers(0, len(data)))
    end = draw(st.integers(start, len(data)))
    return data, start, end


Line = tuple[int, int, int]  # (source offset, start, end) of a line in the scanned bytes


def expected_lines(data: bytes, base: int, start: int, end: int) -> tuple[int, int, list[Line]]:
    """By the scan's rules: (framing opens, framing closes, every other non-blank line) of
    data[start:end]."""
    opens = closes = 0
    lines = []
    pos = start
    while pos < end:
        newline = data.find(b"\n", pos, end)
        line_end = end if newline < 0 else newline
        stripped = data[pos:line_end].strip(SPACE)
        if stripped in (b"[", BOM_OPEN):
            opens += 1
        elif stripped == b"]":
            closes += 1
        elif stripped:
            lines.append((base + pos, pos, line_end))
        pos = line_end + 1
    return opens, closes, lines


def _kept_rows(scanner: Any) -> list[tuple[int, str]]:
    """(source offset, id) of every entity row of a scanner, in row order."""
    columns = scanner.columns()
    n, _nulls, _valid, offsets, data = columns["e.id"][1:]
    ends = memoryview(offsets).cast("i")
    ids = bytes(memoryview(data))
    row_offsets = memoryview(columns["e.offset"][4]).cast("q")
    return [(row_offsets[i], ids[ends[i] : ends[i + 1]].decode("utf-8")) for i in range(n)]


@fuzz_settings(300)
@given(soup=byte_soups(), base=st.integers(0, 1 << 40), routes=st.integers(1, 4), shards=st.integers(1, 7))
def test_any_bytes_in_any_range_are_lines_kept_or_handed_back(
    soup: tuple[bytes, int, int], base: int, routes: int, shards: int
) -> None:
    data, start, end = soup
    scanners = [_wdscan.Scanner(("en", "zh"), ("enwiki",)) for _ in range(routes)]
    if routes == 1:
        result = scanners[0].scan(data, base, start, end)
    else:
        result = _wdscan.scan_routed(scanners, shards, 2, data, base, start, end)
    entities, lines, opens, closes, fallbacks = result
    want_opens, want_closes, want_lines = expected_lines(data, base, start, end)
    assert (lines, opens, closes) == (len(want_lines), want_opens, want_closes)
    assert entities + len(fallbacks) == lines
    # Fallbacks are whole lines of the range, in order; the kept lines are all the others.
    handed_back = [tuple(line) for line in fallbacks]
    assert handed_back == [line for line in want_lines if line in set(handed_back)]
    assert set(handed_back) <= set(want_lines)
    kept = [line for line in want_lines if line not in set(handed_back)]
    rows = sorted(row for scanner in scanners for row in _kept_rows(scanner))
    assert [offset for offset, _ in rows] == sorted(offset for offset, _, _ in kept)
    by_offset = {offset: (a, b) for offset, a, b in kept}
    for offset, ident in rows:
        a, b = by_offset[offset]
        text = data[a:b].strip(SPACE)
        parsed = json.loads(text[:-1] if text.endswith(b",") else text)  # a kept line is JSON
        assert parsed["id"] == ident


def test_a_range_outside_the_block_is_refused() -> None:
    scanner = _wdscan.Scanner(("en",), ("enwiki",))
    for start, end in [(-1, 2), (0, 4), (3, 2)]:
        with pytest.raises(ValueError, match="range outside the block"):
            scanner.scan(b"[\n]", 0, start, end)


# --- wiki pages: native renderer == Python renderer ----------------------------------------------------
@fuzz_settings(100)
@given(mutated_pages())
def test_mutated_real_pages_render_the_same_both_ways(page: tuple[str, RenderConfig]) -> None:
    text, config = page
    both(text, config)
    assert wikitext_native.native_template_spans(text) == template_spans_python(text)
    assert wikitext_native.native_template_names(text) == wikitext_markup._TEMPLATE_NAME.findall(text)
