"""The external sort (`engine.external_sort`): a kept table past its stage's `sort_memory_bytes` is sorted
through runs on disk and merged a row group at a time; its shard must be byte for byte the one
the in-memory path writes, and a build killed in the middle of it must resume to the same bytes.
Every golden target through it: tests/engine/test_golden_paths.py."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from entbench.builders.wikidata.stages.scan import WikidataScan
from entbench.engine import external_sort, row_groups, shards, tasks
from entbench.engine.manifest import load_manifest
from entbench.engine.shards import DuplicateKeyError, prepare_rows, write_parquet
from entbench.engine.stage import Stage
from tests.builders.kb.support import shard_hashes
from tests.builders.wikidata.test_wikidata_build import FIXTURES, build
from tests.builds import build as samples_build

SCHEMA = pa.schema(
    [
        ("subject", pa.string()),
        ("ordinal", pa.int32()),
        ("label", pa.string()),
        ("values", pa.list_(pa.struct([("kind", pa.string()), ("amount", pa.float64())]))),
    ]
)
SORT_BY = ("subject", "ordinal")
META = {"entbench.table": "claims"}
#: The runs of the tests' external sorts: ~20 KB of spilled rows.
RUN_BYTES = 20_000
WIKIPEDIA_DUMP = FIXTURES.parent / "wikipedia" / "enwiki-201605.pages-articles1.head-part.xml.bz2"


def claims(rows: int, seed: int = 3) -> pa.Table:
    """`rows` rows with a unique (subject, ordinal) key, in a shuffled order: string keys that sort
    unlike their numbers (Q10 < Q2), repeated labels (a dictionary column), nulls and nested lists."""
    rng = random.Random(seed)
    keys = [(f"Q{rng.randrange(rows // 3 + 1)}", ordinal) for ordinal in range(rows)]
    rng.shuffle(keys)
    return pa.table(
        {
            "subject": [s for s, _ in keys],
            "ordinal": [o for _, o in keys],
            "label": [None if o % 7 == 0 else f"label {o % 5}" for _, o in keys],
            "values": [
                [{"kind": rng.choice("abc"), "amount": rng.random()} for _ in range(o % 3)] for _, o in keys
            ],
        },
        schema=SCHEMA,
    )


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Runs (of `RUN_BYTES`, given to `write_sorted`) read back 50 rows at a time, row groups of 700
    rows; returns, per external sort, how many runs it merged."""
    monkeypatch.setattr(external_sort, "RUN_BATCH_ROWS", 50)
    monkeypatch.setattr(row_groups, "ROW_GROUP_SIZE", 700)
    merged: list[int] = []
    original = external_sort._RunMerger.__init__

    def counting(self: Any, runs: Any, schema: pa.Schema, sort_by: Any) -> None:
        merged.append(len(runs))
        original(self, runs, schema, sort_by)

    monkeypatch.setattr(external_sort._RunMerger, "__init__", counting)
    return merged


def in_memory(table: pa.Table, path: Path) -> bytes:
    rows = shards.cast_rows(table, SCHEMA)
    write_parquet(
        rows, path, schema=SCHEMA, metadata=META, sort_by=SORT_BY, order=shards.sort_order(rows, SORT_BY)
    )
    return path.read_bytes()


def external(table: pa.Table, path: Path, scratch: Path, batch_rows: int = 97) -> bytes:
    external_sort.write_sorted(
        table.to_batches(max_chunksize=batch_rows),
        path,
        schema=SCHEMA,
        metadata=META,
        sort_by=SORT_BY,
        scratch=scratch,
        run_bytes=RUN_BYTES,
    )
    return path.read_bytes()


def test_runs_merged_a_row_group_at_a_time_give_the_in_memory_bytes(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = claims(5_000)
    written = external(table, tmp_path / "external.parquet", tmp_path / "scratch")
    assert written == in_memory(table, tmp_path / "memory.parquet")
    assert small_runs[0] > 5  # many runs, each feeding every row group
    assert pa.parquet.ParquetFile(tmp_path / "external.parquet").metadata.num_row_groups == 8
    assert list((tmp_path / "scratch").iterdir()) == []  # the runs are scratch
    back = pa.parquet.read_table(tmp_path / "external.parquet")
    assert back.equals(prepare_rows(table, SCHEMA, SORT_BY))


def test_one_run_and_one_row_each_give_the_in_memory_bytes(tmp_path: Path, small_runs: list[int]) -> None:
    for rows in (1, 40):
        table = claims(rows, seed=rows)
        assert external(table, tmp_path / f"e{rows}.parquet", tmp_path / "s") == in_memory(
            table, tmp_path / f"m{rows}.parquet"
        )
    assert small_runs == [1, 1]


def test_no_rows_give_the_empty_shard(tmp_path: Path) -> None:
    empty = SCHEMA.empty_table()
    assert external(empty, tmp_path / "e.parquet", tmp_path / "s") == in_memory(empty, tmp_path / "m.parquet")


def test_a_repeated_key_is_refused_and_leaves_no_shard(tmp_path: Path, small_runs: list[int]) -> None:
    # Enough rows for run files beside the last run (kept in memory): they are removed too. The
    # repeated row is in the last run, its first copy in an earlier one: found while merging.
    table = pa.concat_tables([claims(1500), claims(1500).slice(0, 1)])
    with pytest.raises(DuplicateKeyError, match="share a key") as refused:
        external(table, tmp_path / "e.parquet", tmp_path / "s")
    with pytest.raises(DuplicateKeyError) as in_memory_refused:
        in_memory(table, tmp_path / "m.parquet")
    assert str(refused.value) == str(in_memory_refused.value)  # the same count of repeated keys
    assert not (tmp_path / "e.parquet").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".e.parquet")]  # no temp file left
    assert list((tmp_path / "s").iterdir()) == []
    assert small_runs[0] > 1


def test_a_build_killed_while_merging_runs_resumes_to_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_runs: list[int]
) -> None:
    source = FIXTURES / "entities-new.json.bz2"
    reference = shard_hashes(build(tmp_path / "ref", source), files=True)
    monkeypatch.setattr(WikidataScan, "sort_memory_bytes", RUN_BYTES)
    original = external_sort._RunMerger.merged
    windows: list[int] = []

    def dying(self: Any) -> Iterator[pa.Table]:
        for window in original(self):
            windows.append(1)
            if len(windows) == 3:
                raise KeyboardInterrupt
            yield window

    monkeypatch.setattr(external_sort._RunMerger, "merged", dying)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", source)
    incomplete = next((tmp_path / "out" / "normalized" / "wikidata" / ".incomplete").iterdir())
    assert not list(incomplete.rglob("part-*.parquet.tmp*")) and not list(incomplete.rglob(".part-*"))
    monkeypatch.setattr(external_sort._RunMerger, "merged", original)
    assert shard_hashes(build(tmp_path / "out", source), files=True) == reference


KEYED = pa.schema(
    [
        ("page_id", pa.int64()),
        ("ordinal", pa.int32()),
        ("title", pa.string()),
        ("text", pa.string()),
    ]
)
KEYED_SORT = ("page_id", "ordinal")


def keyed_rows(rows: int, layout: str, seed: int = 5) -> pa.Table:
    """Rows keyed (page_id, ordinal) as a scan's links are, in the mapped order `layout` gives:
    `ascending` (a dump's page ids: the runs are disjoint ranges), `shuffled` (every run spans every
    key) or `blocks` (ascending pages whose links come in a shuffled order within each block of
    pages, so consecutive runs overlap at their ends). Some keys are null (sorted last)."""
    rng = random.Random(seed)
    keys: list[tuple[int | None, int | None]] = [(page, o) for page in range(rows // 4) for o in range(4)]
    keys += [(None, 1), (None, None), (7, None)]
    if layout == "shuffled":
        rng.shuffle(keys)
    elif layout == "blocks":
        blocks = [keys[i : i + 300] for i in range(0, len(keys), 300)]
        for block in blocks:
            rng.shuffle(block)
        keys = [key for block in blocks for key in block]
    return pa.table(
        {
            "page_id": [p for p, _ in keys],
            "ordinal": [o for _, o in keys],
            "title": [f"T{p}" for p, _ in keys],
            "text": ["x" * rng.randrange(0, 300) for _ in keys],
        },
        schema=KEYED,
    )


def write_both(
    table: pa.Table, tmp_path: Path, schema: pa.Schema, sort_by: tuple[str, ...], batch_rows: int = 97
) -> tuple[bytes, bytes]:
    """The shard `table` gives through the external sort and through the in-memory path."""
    external_sort.write_sorted(
        table.to_batches(max_chunksize=batch_rows),
        tmp_path / "e.parquet",
        schema=schema,
        metadata=META,
        sort_by=sort_by,
        scratch=tmp_path / "scratch",
        run_bytes=RUN_BYTES,
    )
    rows = shards.cast_rows(table, schema)
    order = shards.sort_order(rows, sort_by)
    write_parquet(rows, tmp_path / "m.parquet", schema=schema, metadata=META, sort_by=sort_by, order=order)
    return (tmp_path / "e.parquet").read_bytes(), (tmp_path / "m.parquet").read_bytes()


@pytest.mark.parametrize("layout", ["ascending", "shuffled", "blocks"])
def test_the_merge_of_many_runs_gives_the_order_of_the_whole_sort(
    tmp_path: Path, small_runs: list[int], monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    # Batches of ~2 KB: ~13 rows each, so a window takes from many batches of many runs.
    monkeypatch.setattr(external_sort, "RUN_BATCH_BYTES", 2_000)
    table = keyed_rows(4_000, layout)
    merged, whole = write_both(table, tmp_path, KEYED, KEYED_SORT)
    assert merged == whole
    assert small_runs[0] > 5
    back = pa.parquet.read_table(tmp_path / "e.parquet")
    assert back.column("page_id").to_pylist()[-2:] == [None, None]  # nulls last, as Arrow sorts them
    assert back.num_rows == table.num_rows


def test_a_key_repeated_within_and_across_runs_is_counted_as_the_whole_sort_counts_it(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = keyed_rows(3_000, "ascending")
    # Ties: a key three times (twice in the first run, once in the last) and the null key twice
    # (nulls are equal, as a sort groups them).
    repeated = pa.concat_tables(
        [table.slice(0, 10), table.slice(5, 1), table.slice(10), table.slice(5, 1), table.slice(3_001, 1)]
    )
    with pytest.raises(DuplicateKeyError) as merged:
        write_both(repeated, tmp_path, KEYED, KEYED_SORT)
    with pytest.raises(DuplicateKeyError) as whole:
        shards.sort_order(repeated, KEYED_SORT)
    assert str(merged.value) == str(whole.value)
    assert str(merged.value).startswith("3 rows share a key")
    assert small_runs[0] > 5
    assert not (tmp_path / "e.parquet").exists()


def test_iter_sorted_gives_the_rows_of_the_whole_sort_in_windows_and_removes_its_runs(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = claims(3_000)
    pieces = (table.slice(start, 211) for start in range(0, table.num_rows, 211))
    windows = list(
        external_sort.iter_sorted(
            pieces, schema=SCHEMA, sort_by=SORT_BY, scratch=tmp_path / "runs", run_bytes=RUN_BYTES
        )
    )
    rows = shards.cast_rows(table, SCHEMA)
    assert pa.concat_tables(windows).equals(rows.take(shards.sort_order(rows, SORT_BY)))
    assert small_runs[0] > 3 and len(windows) > 3  # merged from many runs, a window at a time
    assert list((tmp_path / "runs").iterdir()) == []


def test_iter_sorted_closed_after_its_first_window_removes_its_runs(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = claims(3_000)
    pieces = (table.slice(start, 211) for start in range(0, table.num_rows, 211))
    windows = external_sort.iter_sorted(
        pieces, schema=SCHEMA, sort_by=SORT_BY, scratch=tmp_path / "runs", run_bytes=RUN_BYTES
    )
    first = next(windows)
    assert first.num_rows and list((tmp_path / "runs").iterdir())  # the runs are there while it is read
    windows.close()
    assert list((tmp_path / "runs").iterdir()) == []


def test_iter_sorted_refuses_a_repeated_key_and_removes_its_runs(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = claims(2_000)
    repeated = pa.concat_tables([table, table.slice(1_500, 1)])
    with pytest.raises(DuplicateKeyError, match="share a key"):
        list(
            external_sort.iter_sorted(
                [repeated], schema=SCHEMA, sort_by=SORT_BY, scratch=tmp_path / "runs", run_bytes=RUN_BYTES
            )
        )
    assert list((tmp_path / "runs").iterdir()) == []


def test_float_keys_merge_with_nan_and_null_where_arrow_sorts_them(
    tmp_path: Path, small_runs: list[int]
) -> None:
    schema = pa.schema([("score", pa.float64()), ("name", pa.string())])
    rng = random.Random(11)
    scores: list[float | None] = [rng.uniform(-1e6, 1e6) for _ in range(2_000)]
    scores += [float("nan"), None, -0.5, float("inf"), float("-inf")]
    names = [f"n{i}" for i in range(len(scores))]
    table = pa.table({"score": scores, "name": names}, schema=schema)
    merged, whole = write_both(table, tmp_path, schema, ("score", "name"))
    assert merged == whole
    assert small_runs[0] > 1


def test_a_wikipedia_scan_sorted_on_disk_in_small_runs_writes_the_bytes_of_the_whole_sort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_runs: list[int]
) -> None:
    # The real fixture dump in 1 MB map tasks: each shard's pages and links reach its reducer as
    # several tasks' batches, in dump order (the runs are ranges of page ids that touch at their ends).
    def scan(out: Path) -> dict[str, str]:
        dirs = samples_build(
            "wikipedia",
            out=out,
            sources=[f"wikipedia={WIKIPEDIA_DUMP}"],
            params=["wikipedia.num_shards=2"],
            chunk_mb=1,
            progress=False,
            log=lambda _m: None,
            card=False,
        )
        return shard_hashes(dirs["wikipedia"], files=True)

    monkeypatch.setattr(Stage, "sort_memory_bytes", 1 << 40)
    whole = scan(tmp_path / "whole")
    assert small_runs == []
    monkeypatch.setattr(Stage, "sort_memory_bytes", RUN_BYTES)
    monkeypatch.setattr(external_sort, "RUN_BATCH_BYTES", 20_000)
    assert scan(tmp_path / "merged") == whole
    assert len(small_runs) == 4 and min(small_runs) > 1, small_runs  # pages and links of 2 shards


def test_a_stage_s_declared_sort_memory_sets_which_tables_spill_not_their_bytes_or_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Wikidata scan declares more than the engine's default (its shards sort faster whole);
    # the runner takes each stage's own limit, both to choose the external sort and as its runs.
    assert WikidataScan.sort_memory_bytes > Stage.sort_memory_bytes == external_sort.SORT_MEMORY_BYTES
    source = FIXTURES / "entities-new.json.bz2"
    sorts: list[tuple[str, int]] = []
    original = tasks.write_sorted

    def spying(batches: Any, path: Path, **kwargs: Any) -> Any:
        sorts.append((path.parent.name, kwargs["run_bytes"]))
        return original(batches, path, **kwargs)

    monkeypatch.setattr(tasks, "write_sorted", spying)
    whole = build(tmp_path / "whole", source)  # the declared 32 MB: every shard sorted in memory
    assert sorts == []
    monkeypatch.setattr(WikidataScan, "sort_memory_bytes", RUN_BYTES)
    spilled = build(tmp_path / "spilled", source)
    # Every shard's claims (of the 4) past the small limit, sorted in runs of it.
    assert sorts.count(("truthy_claims", RUN_BYTES)) == 4, sorts
    assert {run_bytes for _, run_bytes in sorts} == {RUN_BYTES}
    assert shard_hashes(spilled, files=True) == shard_hashes(whole, files=True)
    assert load_manifest(spilled)["fingerprint"] == load_manifest(whole)["fingerprint"]
