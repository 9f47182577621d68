"""Blocks of a decompressed dump reuse their buffers only once nothing refers to them."""

from __future__ import annotations

import bz2
import io
from pathlib import Path

from entbench.readers.compressed.dumps import iter_blocks

FIXTURE = (
    Path(__file__).resolve().parents[2] / "fixtures" / "wikidata" / "latest-all.2017-03.head-part.json.bz2"
)
BLOCK = 64 << 10


def _dump() -> bytes:
    return bz2.decompress(FIXTURE.read_bytes())


def test_blocks_that_are_held_keep_their_bytes() -> None:
    data = _dump()
    held = list(iter_blocks(io.BytesIO(data), BLOCK, read_bytes=4096))
    assert len(held) > 8
    assert len({id(block) for _, block in held}) == len(held)  # no buffer handed out twice
    assert b"".join(block for _, block in held) == data
    for offset, block in held:
        assert data[offset : offset + len(block)] == block
        assert block.endswith(b"\n") or offset + len(block) == len(data)


def test_released_blocks_are_refilled_and_read_the_same() -> None:
    data = _dump()
    buffers: set[int] = set()
    pieces: list[bytes] = []
    for offset, block in iter_blocks(io.BytesIO(data), BLOCK, read_bytes=4096):
        assert data[offset : offset + len(block)] == block
        buffers.add(id(block))
        pieces.append(bytes(block))
        del block  # the consumer is done: the reader may fill this buffer again
    assert len(pieces) > 8
    assert len(buffers) < len(pieces)  # buffers were reused...
    assert b"".join(pieces) == data  # ...without changing what any block read


def test_a_view_of_a_block_keeps_it_from_being_refilled() -> None:
    data = _dump()
    views: list[tuple[int, memoryview]] = []
    for offset, block in iter_blocks(io.BytesIO(data), BLOCK, read_bytes=4096):
        views.append((offset, memoryview(block)))  # only a view survives the loop
        del block
    for offset, view in views:
        assert data[offset : offset + len(view)] == view.tobytes()
