"""How a map phase starts: a resumed build takes a finished map task's rows only for the work that
task did (a record left under the same task id by a plan cut differently runs again), and a map whose
workers would not fit in memory is announced with a worker count that fits."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.engine import tasks
from entbench.engine.config import BuildConfig
from entbench.engine.executors.local import InlineExecutor
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
)
from entbench.engine.stats import Stats
from tests.builders.kb.support import die_after

SCHEMA = pa.schema([pa.field("value", pa.int64(), nullable=False)])
ROWS = 12


@dataclass(frozen=True)
class RangeParams(Params):
    num_shards: int = 2


class RangeStage(Stage):
    """Emits 0..ROWS-1 in map tasks of `task_size` values each, named by where they start (as
    span tasks are named by their first row group)."""

    name = "ranges"
    params_type = RangeParams
    default_num_shards = 2
    task_size = 3

    def outputs(self, params: Params) -> list[Output]:
        return [Output("rows", SCHEMA, ("value",))]

    def map_tasks(self, ctx: StageContext) -> Iterator[MapTask]:
        for lo in range(0, ROWS, self.task_size):
            yield MapTask(f"from-{lo:03d}", {"lo": lo, "hi": min(ROWS, lo + self.task_size)})

    def map(self, ctx: StageContext, task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        for value in range(task.meta["lo"], task.meta["hi"]):
            sink.emit("rows", shard_of(str(value), ctx.num_shards), pa.table({"value": [value]}, SCHEMA))
        return Stats({"emitted": task.meta["hi"] - task.meta["lo"]})


def build(out: Path) -> list[int]:
    builder = Builder(out, BuildConfig(sources={}, params={}), BuildOptions(progress=False))
    result = builder.run(builder.plan(RangeStage(), {}), InlineExecutor())
    manifest = json.loads((Path(result.directory) / "_MANIFEST.json").read_text())
    assert manifest["stats"]["emitted"] == ROWS
    return sorted(v for f in result.files("rows") for v in pq.read_table(f).column("value").to_pylist())


def finished_tasks(out: Path) -> list[str]:
    """The map tasks of an unfinished build that left a completion record."""
    return sorted(path.name.removesuffix(".done.json") for path in out.glob("**/_map/*.done.json"))


def test_a_finished_task_of_another_plan_under_the_same_id_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = die_after(monkeypatch, "map_task", 2)
    monkeypatch.setattr(RangeStage, "task_size", 2)  # from-000 = [0, 2), from-002 = [2, 4)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path)
    assert finished_tasks(tmp_path) == ["from-000", "from-002"]
    # Resumed with tasks of 4 values: from-000 is now [0, 4), and from-004 [4, 8)... The record
    # of the old from-000 covers [0, 2) only: taking it would lose 2 and 3.
    monkeypatch.setattr(tasks, "map_task", original)
    monkeypatch.setattr(RangeStage, "task_size", 4)
    assert build(tmp_path) == list(range(ROWS))


class HeavyRangeStage(RangeStage):
    """`RangeStage` whose tasks each need a table of 3 GB."""

    def worker_memory_estimate(self, ctx: StageContext) -> int | None:
        return 3 * 10**9


def test_a_map_whose_workers_would_not_fit_in_memory_is_announced_with_a_worker_count_that_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from entbench.engine import runner

    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 7 * 10**9)
    logged: list[str] = []
    options = BuildOptions(progress=False, workers=4)
    builder = Builder(tmp_path, BuildConfig(sources={}, params={}), options, log=logged.append)
    builder.run(builder.plan(HeavyRangeStage(), {}), InlineExecutor())
    warnings = [m for m in logged if "warning" in m]
    assert warnings == [
        "ranges: warning: each worker holds ~3.0 GB for this stage; 4 worker(s) need ~12.0 GB and 7.0 GB "
        "are available: the system may kill workers for memory; --workers 2 would fit"
    ]
    logged.clear()
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 13 * 10**9)
    roomy = Builder(tmp_path / "b", BuildConfig(sources={}, params={}), options, log=logged.append)
    roomy.run(roomy.plan(HeavyRangeStage(), {}), InlineExecutor())
    assert not [m for m in logged if "warning" in m]


def test_mention_stats_estimates_one_parts_automaton_or_the_whole_vocabularys() -> None:
    from entbench.builders.alias.stages.mention_stats import (
        PARTITION_MENTIONS,
        WORKER_BYTES_PER_MENTION,
        MentionStats,
        MentionStatsParams,
    )
    from entbench.engine.stage import UpstreamOutput

    stage = MentionStats("mention_stats", alias_table="alias_table")
    upstream = UpstreamOutput("alias_table", "/nowhere", "fp", "sha", {}, stats={"mentions": 15_000_000})
    ctx = StageContext(
        "mention_stats", MentionStatsParams(), 1, {}, {"alias_table": upstream}, "/nowhere", BuildOptions()
    )
    # by default the vocabulary is matched in parts: a worker holds one part's automaton
    assert stage.worker_memory_estimate(ctx) == PARTITION_MENTIONS * WORKER_BYTES_PER_MENTION  # ~80 MB
    whole = dataclasses.replace(ctx, params=MentionStatsParams(partition_mentions=0))
    assert stage.worker_memory_estimate(whole) == 15_000_000 * WORKER_BYTES_PER_MENTION  # ~5 GB


def test_a_resume_with_the_same_plan_runs_only_the_unfinished_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = die_after(monkeypatch, "map_task", 2)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path)
    assert finished_tasks(tmp_path) == ["from-000", "from-003"]
    ran: list[str] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        ran.append(args[2].task_id)
        return original(*args, **kwargs)

    monkeypatch.setattr(tasks, "map_task", recording)
    assert build(tmp_path) == list(range(ROWS))
    assert ran == ["from-006", "from-009"]  # the finished two are taken as they are
