"""Blocks of a decompressed dump reuse their buffers only once nothing refers to them."""

from __future__ import annotations

import bz2
import gzip
import io
from pathlib import Path

import pytest
from isal import igzip

from entbench.readers.compressed.dumps import StreamTruncated, _direct_readinto, iter_blocks

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


def test_a_consumer_holding_its_block_while_it_reads_on_needs_two_buffers() -> None:
    """The block being worked on and the one read next: the reader takes no buffer for the block
    after that before it is asked for it (a one-worker scan held three 16 MB buffers)."""
    data = _dump()
    buffers: set[int] = set()
    pieces: list[bytes] = []
    held: bytearray | None = None
    for offset, block in iter_blocks(io.BytesIO(data), BLOCK, read_bytes=4096):
        assert data[offset : offset + len(block)] == block
        buffers.add(id(block))
        pieces.append(bytes(block))
        held = block  # kept while the next block is read, as a task that is still mapping it
        del block
    assert held is not None
    assert len(pieces) > 8
    assert len(buffers) == 2
    assert b"".join(pieces) == data


def test_a_view_of_a_block_keeps_it_from_being_refilled() -> None:
    data = _dump()
    views: list[tuple[int, memoryview]] = []
    for offset, block in iter_blocks(io.BytesIO(data), BLOCK, read_bytes=4096):
        views.append((offset, memoryview(block)))  # only a view survives the loop
        del block
    for offset, view in views:
        assert data[offset : offset + len(view)] == view.tobytes()


class _ReadOnly:
    """A stream with `read` only: `iter_blocks` falls back to reads and copies."""

    def __init__(self, stream: io.BufferedIOBase) -> None:
        self.read = stream.read


def _blocks_and_end(stream: object) -> tuple[list[tuple[int, bytes]], int | None]:
    blocks: list[tuple[int, bytes]] = []
    try:
        for offset, block in iter_blocks(stream, BLOCK, read_bytes=4096):  # type: ignore[arg-type]
            blocks.append((offset, bytes(block)))
    except StreamTruncated as exc:
        return blocks, exc.offset
    return blocks, None


@pytest.mark.parametrize("cut", [None, 0.5, 0.93])
def test_a_gzip_file_reads_into_the_blocks_as_its_reads_would(tmp_path: Path, cut: float | None) -> None:
    """isal's `IGzipFile` is read through its buffered reader's own `readinto` (no copy): the
    same blocks as its `read`, and a stream cut short ends at the same offset after the same blocks."""
    data = _dump()
    compressed = gzip.compress(data, 6, mtime=0)
    path = tmp_path / "dump.json.gz"
    path.write_bytes(compressed if cut is None else compressed[: int(len(compressed) * cut)])
    assert _direct_readinto(igzip.open(path, "rb")) is not None
    with igzip.open(path, "rb") as direct, igzip.open(path, "rb") as copied:
        assert _blocks_and_end(direct) == _blocks_and_end(_ReadOnly(copied))
    blocks, end = _blocks_and_end(igzip.open(path, "rb"))
    assert (end is None) == (cut is None)
    assert b"".join(block for _, block in blocks) == (data if cut is None else data[: end or 0])
