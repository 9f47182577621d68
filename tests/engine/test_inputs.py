"""Work sized from upstream outputs (`engine.inputs`): automatic shard counts, row groups bounded by
bytes, map tasks over spans of row groups, and streamed reads.

The text is real: the Chinese paragraphs of the Hansel corpus fixture, repeated until a shard holds
several row groups' worth, as a Wikipedia scan's `pages` does on a real dump.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.engine import inputs as inputs_module
from entbench.engine.inputs import (
    SPAN_BYTES,
    auto_num_shards,
    columns_bytes,
    iter_span,
    partitions_for,
    read_partition,
    read_span,
    row_group_spans,
    spans_reading,
    upstream_bytes,
)
from entbench.engine.plan import plan_stage
from entbench.engine.row_groups import (
    ROW_GROUP_BYTES,
    ROW_GROUP_SIZE,
    content_bytes,
    row_group_rows,
    rows_per_group,
)
from entbench.engine.shards import shard_of, write_parquet
from entbench.engine.stage import BuildOptions, Output, Params, Stage, UpstreamOutput

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "hansel" / "corpus.jsonl.gz"
PAGES = pa.schema(
    [pa.field("page_id", pa.int64(), nullable=False), pa.field("text", pa.string(), nullable=False)]
)
LINKS = pa.schema(
    [pa.field("page_id", pa.int64(), nullable=False), pa.field("ordinal", pa.int32(), nullable=False)]
)


def real_texts() -> list[str]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle]


def pages(min_bytes: int) -> pa.Table:
    """Real texts as pages with even ids, at least `min_bytes` of text (each numbered, so that no
    two pages repeat and the writer chooses no dictionary, as for a real dump's pages)."""
    texts = real_texts()
    rows: list[str] = []
    total = 0
    while total < min_bytes:
        for text in texts:
            rows.append(f"{len(rows)} {text}")
            total += len(rows[-1].encode("utf-8"))
    return pa.table({"page_id": list(range(0, 2 * len(rows), 2)), "text": rows}, schema=PAGES)


def write(table: pa.Table, path: Path, schema: pa.Schema, sort_by: tuple[str, ...]) -> Path:
    write_parquet(table, path, schema=schema, metadata={}, sort_by=sort_by)
    return path


def test_row_groups_hold_about_row_group_bytes_of_values_and_small_shards_are_cut_as_before(
    tmp_path: Path,
) -> None:
    big = pages(3 * ROW_GROUP_BYTES + 1)
    rows = row_group_rows(big)
    assert content_bytes(big) > 3 * ROW_GROUP_BYTES
    path = write(big, tmp_path / "big.parquet", PAGES, ("page_id",))
    metadata = pq.ParquetFile(path).metadata
    assert metadata.num_row_groups == 4
    assert [metadata.row_group(g).num_rows for g in range(3)] == [rows] * 3
    for g in range(4):
        assert metadata.row_group(g).total_byte_size < 1.5 * ROW_GROUP_BYTES
    # rows of a few bytes: the row count bounds the groups, as it always did
    small = pa.table(
        {"page_id": list(range(ROW_GROUP_SIZE + 10)), "ordinal": [0] * (ROW_GROUP_SIZE + 10)}, LINKS
    )
    assert row_group_rows(small) == ROW_GROUP_SIZE
    # values only, never buffers: the same rows in other chunks are cut the same way
    rechunked = pa.Table.from_batches(big.to_batches(max_chunksize=777))
    assert row_group_rows(rechunked) == rows and content_bytes(rechunked) == content_bytes(big)


def test_the_bound_of_a_tables_values_is_never_below_them_and_cuts_row_groups_the_same() -> None:
    """`content_bytes(bound=True)` (string bytes read off the offsets) is at least the exact count
    whatever the chunks, slices, nesting and large types; a null holding bytes counts only there."""
    words = pa.array(["alpha", None, "", "ζήτα", "omega" * 40] * 300)
    # the second value is null but its offsets span 3 bytes: the exact count skips them
    odd = pa.Array.from_buffers(
        pa.string(),
        3,
        [
            pa.py_buffer(bytes([0b101])),
            pa.py_buffer(np.array([0, 2, 5, 6], np.int32).tobytes()),
            pa.py_buffer(b"abxyzc"),
        ],
        null_count=1,
    )
    table = pa.table(
        {
            "sliced": words.slice(7, 900),
            "chunked": pa.chunked_array([words.slice(0, 400), words.slice(400, 500), words.slice(0, 0)]),
            "large": words.slice(3, 900).cast(pa.large_string()),
            "nested": pa.array([[{"w": "ab", "n": 1}], None, [], [{"w": None, "n": None}]] * 225),
            "odd": pa.chunked_array([odd] * 300),
        }
    )
    exact, bound = content_bytes(table), content_bytes(table, bound=True)
    assert bound == exact + 300 * 3
    big = pages(3 * ROW_GROUP_BYTES + 1)
    assert content_bytes(big, bound=True) >= content_bytes(big)
    assert row_group_rows(big) == rows_per_group(big.num_rows, content_bytes(big)) < ROW_GROUP_SIZE


def test_spans_cover_every_row_group_once_with_their_key_ranges(tmp_path: Path) -> None:
    files = [
        str(write(pages(2 * ROW_GROUP_BYTES + 1), tmp_path / "a.parquet", PAGES, ("page_id",))),
        str(write(PAGES.empty_table(), tmp_path / "empty.parquet", PAGES, ("page_id",))),
        str(write(pages(10_000), tmp_path / "b.parquet", PAGES, ("page_id",))),
    ]
    spans = row_group_spans(files, ROW_GROUP_BYTES, key="page_id")
    assert [(s.file, s.row_groups) for s in spans] == [(0, (0,)), (0, (1,)), (0, (2,)), (2, (0,))]
    assert len({s.task_id for s in spans}) == len(spans)
    for span in spans:
        table = read_span(files[span.file], span.row_groups)
        ids = table.column("page_id").to_pylist()
        assert (span.first, span.last) == (ids[0], ids[-1]) and span.rows == len(ids)
        streamed = list(iter_span(files[span.file], span.row_groups, ["page_id"], batch_rows=100))
        assert max(b.num_rows for b in streamed) <= 100
        assert [i for b in streamed for i in b.column(0).to_pylist()] == ids
    # one span per file when the budget holds them all
    assert [s.row_groups for s in row_group_spans(files, 1 << 40)] == [(0, 1, 2), (0,)]


def test_spans_of_a_task_that_reads_some_columns_are_sized_by_what_it_reads(tmp_path: Path) -> None:
    """A task reading the ids of a span of text-heavy pages, and the links of those pages: its spans
    hold about SPAN_BYTES of what it reads (ids plus its share of the links), not of text."""
    page_file = str(write(pages(3 * ROW_GROUP_BYTES), tmp_path / "pages.parquet", PAGES, ("page_id",)))
    ids = pq.read_table(page_file, columns=["page_id"]).column("page_id").to_pylist()
    links = pa.table(
        {"page_id": [p for p in ids for _ in range(40)], "ordinal": [o for _ in ids for o in range(40)]},
        LINKS,
    )
    link_file = str(write(links, tmp_path / "links.parquet", LINKS, ("page_id", "ordinal")))
    metadata = pq.ParquetFile(page_file).metadata
    id_bytes = [
        metadata.row_group(g).column(0).total_uncompressed_size for g in range(metadata.num_row_groups)
    ]
    assert columns_bytes([page_file], ["page_id"]) == sum(id_bytes)
    assert columns_bytes([page_file], ["page_id", "text"]) == sum(
        metadata.row_group(g).total_byte_size for g in range(metadata.num_row_groups)
    )
    by_text = row_group_spans([page_file], key="page_id")
    assert len(by_text) == metadata.num_row_groups  # a task per row group of text
    tasks = spans_reading([page_file], ["page_id"], ([link_file], ["page_id", "ordinal"]), key="page_id")
    read = columns_bytes([page_file], ["page_id"]) + columns_bytes([link_file], ["page_id", "ordinal"])
    assert len(tasks) < len(by_text) and len(tasks) == -(-read // SPAN_BYTES)
    # every row group once, in order, with the key ranges the links are read by
    assert [g for t in tasks for g in t.meta["row_groups"]] == list(range(metadata.num_row_groups))
    assert tasks[0].meta["first"] == ids[0] and tasks[-1].meta["last"] == ids[-1]


def test_a_repeated_key_is_read_by_exactly_one_span(tmp_path: Path) -> None:
    """A key whose rows straddle row groups (a subject's statements) belongs to the span it ends
    in's predecessor: `(after, last]` ranges are disjoint and cover every row."""
    texts = real_texts()
    rows = [
        (i // 7, t)
        for i, t in enumerate(texts * (3 * ROW_GROUP_BYTES // sum(len(t.encode()) for t in texts) + 1))
    ]
    table = pa.table(
        {"page_id": [r[0] for r in rows], "text": [f"{r[1]}{i}" for i, r in enumerate(rows)]}, PAGES
    )
    path = str(write(table, tmp_path / "repeated.parquet", PAGES, ("page_id", "text")))
    spans = row_group_spans([path], ROW_GROUP_BYTES, key="page_id")
    assert len(spans) >= 3
    seen: list[int] = []
    for span in spans:
        part = pq.read_table(path, filters=span.key_filters("page_id")).column("page_id").to_pylist()
        assert not set(part) & set(seen)
        seen += part
    assert sorted(seen) == table.column("page_id").to_pylist()


@dataclass(frozen=True)
class AutoParams(Params):
    num_shards: int = 0


class AutoStage(Stage):
    """A downstream stage sized from one upstream table."""

    name = "auto"
    params_type = AutoParams
    default_num_shards = 0
    shard_input_bytes = 1000
    inputs = ("up",)

    def outputs(self, params: Params) -> list[Output]:
        return [Output("t", LINKS, ("page_id",))]

    def shard_inputs(self, params: Params) -> tuple[tuple[str, str], ...]:
        return (("up", "pages"),)


def upstream(sizes: tuple[int, ...]) -> UpstreamOutput:
    return UpstreamOutput(
        "up", "/nowhere", "f" * 64, "m" * 64, {"pages": ("a",) * len(sizes)}, sizes={"pages": sizes}
    )


@pytest.mark.parametrize(
    ("sizes", "expected"), [((), 1), ((10,), 1), ((1000,), 1), ((600, 401), 2), ((2500, 2500), 5)]
)
def test_automatic_shard_count_from_the_upstream_manifest_sizes(
    tmp_path: Path, sizes: tuple[int, ...], expected: int
) -> None:
    up = {"up": upstream(sizes)}
    assert upstream_bytes(up, [("up", "pages")]) == sum(sizes)
    assert auto_num_shards(sum(sizes), 1000) == expected
    plan = plan_stage(AutoStage(), AutoParams(), {}, up, tmp_path, BuildOptions())
    assert plan.ctx.num_shards == expected
    # the count enters the parameters, hence the fingerprint, as a number
    assert (
        plan.ctx.params == AutoParams(num_shards=expected) and plan.fingerprint_doc["num_shards"] == expected
    )
    fixed = plan_stage(AutoStage(), AutoParams(num_shards=3), {}, up, tmp_path, BuildOptions())
    assert fixed.ctx.num_shards == 3


@pytest.mark.parametrize("partitions", [1, 2, 3, 4, 8, 12])
def test_read_partition_gives_each_partition_its_keys_whatever_the_shard_count(
    tmp_path: Path, partitions: int
) -> None:
    """A table of 4 shards routed by `shard_of(title)`: the partitions of any count together hold
    every row once, each only keys of its own hash; with a divisor or a multiple of 4 partitions
    only the shards that can hold a partition's keys are read, and a shard holding several
    partitions has its keys read and hashed once, not once per partition."""
    titles = sorted({text[:12] for text in real_texts()})[:400]
    rows = pa.table({"title": titles, "n": list(range(len(titles)))})
    files = []
    for shard in range(4):
        mine = rows.filter(pa.array([shard_of(t, 4) == shard for t in titles]))
        path = tmp_path / f"part-{shard}.parquet"
        pq.write_table(mine, path)
        files.append(str(path))
    upstream = UpstreamOutput("titles", str(tmp_path), "f", "m", {"rows": tuple(files)})
    read_files: list[str] = []
    original = pq.read_table

    def counting_read(source: object, *args: object, **kwargs: object) -> pa.Table:
        read_files.extend([source] if isinstance(source, str) else list(source))  # type: ignore[arg-type]
        return original(source, *args, **kwargs)

    hashed: list[int] = []
    original_column_shards = inputs_module.column_shards

    def counting_column_shards(keys: pa.ChunkedArray, num_shards: int) -> np.ndarray:
        hashed.append(len(keys))
        return original_column_shards(keys, num_shards)

    seen: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pq, "read_table", counting_read)
        patch.setattr(inputs_module, "column_shards", counting_column_shards)
        for partition in range(partitions):
            part = read_partition(upstream, "rows", "title", partition, partitions, ["n", "title"])
            assert all(shard_of(t, partitions) == partition for t in part["title"].to_pylist())
            seen.extend(part["n"].to_pylist())
    assert sorted(seen) == list(range(len(titles)))
    if 4 % partitions == 0:  # whole shards: nothing to hash
        assert len(read_files) == 4 and not hashed
    elif partitions % 4 == 0:  # each partition's shard, and every shard's keys once
        assert len(read_files) == partitions + 4 and sum(hashed) == len(titles)
    else:  # every shard for each partition, and every shard's keys once
        assert len(read_files) == 4 * partitions + 4 and sum(hashed) == len(titles)
    assert partitions_for(4, partitions) % 4 == 0 and partitions_for(4, partitions) >= partitions
