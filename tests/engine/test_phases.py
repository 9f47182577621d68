"""Stage phases (`Stage.phases`): a repartition join as a phase, then the stage's own shuffle.

The toy: documents' words (sharded by document) meet a dictionary (sharded by word). The phase
routes the words by word into the dictionary's partitions, each reducer joining one shard of the
dictionary; the stage then routes the joined rows by document and counts each document's known
words. What it must show: the bytes do not depend on the workers, the phase's rows never reach the
output directory, the stage can report its stats, a build killed after the phase resumes
without running it again, and a stage may add phases the data calls for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.engine import tasks
from entbench.engine.config import BuildConfig
from entbench.engine.executors import make_executor
from entbench.engine.inputs import Span, read_partition, read_span, row_group_spans
from entbench.engine.runner import Builder
from entbench.engine.shards import shard_of
from entbench.engine.stage import (
    BucketSink,
    BuildOptions,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
    UpstreamOutput,
)
from entbench.engine.stats import Stats

DOCS = {d: [f"w{(d * 7 + i * 3) % 23}" for i in range(d % 5 + 2)] for d in range(40)}
MEANINGS = {f"w{i}": f"meaning of w{i}" for i in range(0, 23, 2)}  # the even words only
WORDS = pa.schema(
    [pa.field("doc", pa.int64(), nullable=False), pa.field("word", pa.string(), nullable=False)]
)
DICTIONARY = pa.schema(
    [pa.field("word", pa.string(), nullable=False), pa.field("meaning", pa.string(), nullable=False)]
)
JOINED = pa.schema([*WORDS, pa.field("meaning", pa.string(), nullable=False)])
COUNTS = pa.schema(
    [pa.field("doc", pa.int64(), nullable=False), pa.field("known", pa.int64(), nullable=False)]
)
CALLS: dict[str, int] = {}


@dataclass(frozen=True)
class CountParams(Params):
    num_shards: int = 3


class Source(Stage):
    """A shard stage writing `rows` by the stable hash of `key` (as the real scans route theirs)."""

    def __init__(
        self, name: str, rows: list[dict[str, Any]], schema: pa.Schema, key: str, shards: int
    ) -> None:
        super().__init__(name)
        self.rows, self.schema, self.key, self.shards = rows, schema, key, shards
        self.default_num_shards = shards

    def outputs(self, params: Params) -> list[Output]:
        return [Output("rows", self.schema, tuple(self.schema.names))]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        mine = [r for r in self.rows if shard_of(str(r[self.key]), ctx.num_shards) == shard]
        return {"rows": pa.Table.from_pylist(mine, schema=self.schema)}, Stats()


class ByWord(Stage):
    """The phase: words routed by word into the dictionary's partitions, joined there."""

    shard_key = "word"
    params_type = CountParams

    def outputs(self, params: Params) -> list[Output]:
        return [Output("joined", JOINED, ("doc", "word"))]

    def map_schemas(self, params: Params) -> dict[str, pa.Schema]:
        return {"_words": WORDS}

    def map_tasks(self, ctx: StageContext) -> Iterator[MapTask]:
        for span in row_group_spans(ctx.inputs["words"].files("rows")):
            yield MapTask(span.task_id, span.meta())

    def map(self, ctx: StageContext, task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        CALLS["phase_map"] = CALLS.get("phase_map", 0) + 1
        span = Span.from_meta(task.meta)
        rows = read_span(ctx.inputs["words"].files("rows")[span.file], span.row_groups)
        sink.emit_by_key("_words", rows, "word", ctx.num_shards)
        return Stats({"words_routed": rows.num_rows})

    def reduce(
        self, ctx: StageContext, shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        dictionary = read_partition(
            ctx.inputs["dictionary"], "rows", "word", shard, ctx.num_shards, ["word", "meaning"]
        )
        joined = tables["_words"].join(dictionary, "word", join_type="inner", use_threads=False)
        return {"joined": joined.select(JOINED.names).cast(JOINED)}, Stats(
            {"words_unknown": tables["_words"].num_rows - joined.num_rows}
        )


class CountKnown(Stage):
    """Known words per document: the phase's joined rows routed by document."""

    params_type = CountParams
    shard_key = "doc"
    inputs = ("words", "dictionary")

    def phases(self, ctx: StageContext) -> list[tuple[Stage, Params]]:
        partitions = len(ctx.inputs["dictionary"].files("rows"))
        return [(ByWord("count_known.by_word"), CountParams(num_shards=partitions))]

    def outputs(self, params: Params) -> list[Output]:
        return [Output("counts", COUNTS, ("doc",))]

    def map_schemas(self, params: Params) -> dict[str, pa.Schema]:
        return {"_joined": JOINED}

    def map_tasks(self, ctx: StageContext) -> Iterator[MapTask]:
        for span in row_group_spans(ctx.phases["count_known.by_word"].files("joined")):
            yield MapTask(span.task_id, span.meta())

    def map(self, ctx: StageContext, task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        span = Span.from_meta(task.meta)
        rows = read_span(ctx.phases["count_known.by_word"].files("joined")[span.file], span.row_groups)
        docs = rows.column("doc").to_pylist()
        sink.emit_sharded(
            "_joined", rows, pa.array([shard_of(str(d), ctx.num_shards) for d in docs]).to_numpy()
        )
        return Stats()

    def finalize(self, ctx: StageContext, directory: Path, stats: Stats) -> dict[str, Any]:
        return dict(ctx.phases["count_known.by_word"].stats)  # what the phase counted

    def reduce(
        self, ctx: StageContext, shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        counted = tables["_joined"].group_by("doc").aggregate([("word", "count")])
        return {"counts": pa.table([counted["doc"], counted["word_count"]], schema=COUNTS)}, Stats()


def build(out: Path, workers: int = 1, stage: Stage | None = None) -> UpstreamOutput:
    """The two sources, then the counting stage (or `stage`), with `workers`."""
    words = [{"doc": d, "word": w} for d, ws in DOCS.items() for w in sorted(set(ws))]
    dictionary = [{"word": w, "meaning": m} for w, m in MEANINGS.items()]
    sources = [
        Source("words", words, WORDS, "doc", 2),
        Source("dictionary", dictionary, DICTIONARY, "word", 4),
    ]
    builder = Builder(out, BuildConfig(sources={}, params={}), BuildOptions(workers=workers, progress=False))
    executor = make_executor("local", workers)
    try:
        upstream = {s.stage_name: builder.run(builder.plan(s, {}), executor) for s in sources}
        main = stage or CountKnown("count_known")
        return builder.run(builder.plan(main, upstream), executor)
    finally:
        executor.close()


def expected_counts() -> dict[int, int]:
    return {d: n for d, ws in DOCS.items() if (n := sum(w in MEANINGS for w in set(ws)))}


def read_counts(result: UpstreamOutput) -> dict[int, int]:
    table = pa.concat_tables(pq.read_table(f) for f in result.files("counts"))
    return dict(zip(table["doc"].to_pylist(), table["known"].to_pylist(), strict=True))


def file_bytes(result: UpstreamOutput) -> list[bytes]:
    return [Path(f).read_bytes() for f in result.files("counts")]


def test_a_phase_joins_partition_by_partition_and_the_bytes_do_not_depend_on_workers(tmp_path: Path) -> None:
    one = build(tmp_path / "one", workers=1)
    two = build(tmp_path / "two", workers=2)
    assert read_counts(one) == expected_counts()
    assert file_bytes(one) == file_bytes(two)
    final = Path(one.directory)
    assert not (final / "_phases").exists() and not list(final.parent.glob(".incomplete"))
    manifest = json.loads((final / "_MANIFEST.json").read_text())
    words = sum(len(set(ws)) for ws in DOCS.values())
    assert manifest["stats"]["words_routed"] == words  # the phase's map stats, reported by finalize
    assert manifest["stats"]["words_unknown"] == words - sum(expected_counts().values())  # its reduce's
    assert "count_known.by_word" not in manifest["inputs"]  # a phase is no input: not in the fingerprint


def test_a_build_killed_after_its_phase_resumes_without_running_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = build(tmp_path / "reference")
    original = tasks.map_task

    def dies_in_the_stage_itself(stage: Stage, *args: Any, **kwargs: Any) -> Any:
        if stage.stage_name == "count_known":
            raise KeyboardInterrupt("simulated kill in the stage's own map")
        return original(stage, *args, **kwargs)

    monkeypatch.setattr(tasks, "map_task", dies_in_the_stage_itself)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out")
    monkeypatch.setattr(tasks, "map_task", original)
    CALLS.clear()
    resumed = build(tmp_path / "out")
    assert CALLS == {}  # the finished phase was found complete
    assert file_bytes(resumed) == file_bytes(reference)


class Rounds(Stage):
    """A stage whose phases depend on the data: each round halves the numbers left, until none is."""

    params_type = CountParams
    inputs = ("words",)

    def phases(self, ctx: StageContext) -> list[tuple[Stage, Params]]:
        listed: list[tuple[Stage, Params]] = [(Halve("rounds.r1", None), CountParams(num_shards=2))]
        for n in range(1, len(ctx.phases) + 1):
            if pq.ParquetDataset(ctx.phases[f"rounds.r{n}"].files("left")).read().num_rows:
                listed.append((Halve(f"rounds.r{n + 1}", f"rounds.r{n}"), CountParams(num_shards=2)))
        return listed

    def outputs(self, params: Params) -> list[Output]:
        return [Output("counts", COUNTS, ("doc",))]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        rounds = len(ctx.phases) if shard == 0 else 0
        return {"counts": pa.table({"doc": [shard], "known": [rounds]}, schema=COUNTS)}, Stats()


class Halve(Stage):
    """One round: the documents' numbers halved (from the words' docs, or the last round's)."""

    params_type = CountParams
    shard_key = "doc"

    def __init__(self, name: str, previous: str | None) -> None:
        super().__init__(name)
        self.previous = previous

    def outputs(self, params: Params) -> list[Output]:
        return [Output("left", COUNTS, ("doc",), may_be_empty=True)]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        if self.previous is None:
            values = sorted({d for d in DOCS if shard_of(str(d), ctx.num_shards) == shard})
        else:
            values = pq.read_table(ctx.inputs[self.previous].files("left")[shard])["known"].to_pylist()
        left = [v // 2 for v in values if v // 2]
        return {"left": pa.table({"doc": list(range(len(left))), "known": left}, schema=COUNTS)}, Stats()


def test_a_stage_may_add_phases_the_data_calls_for(tmp_path: Path) -> None:
    result = build(tmp_path, stage=Rounds("rounds"))
    rounds = pq.read_table(result.files("counts")[0])["known"].to_pylist()
    assert rounds == [max(DOCS).bit_length()]  # 39 -> 19 -> 9 -> 4 -> 2 -> 1 -> 0: six rounds
