"""EntEval task files (Chen et al. 2019; spec §8): the stage `enteval_tasks` over the task stages
(target `enteval-tasks`, registered in `builders.enteval.pipeline`).

    wikient_descriptions, title_qid ─┬─> enteval_kore, enteval_wikisrs, enteval_ert ─┐
    + alias_table ───────────────────┴─> enteval_conll_yago ─────────────────────────┤
    (task files only) ──> enteval_et, enteval_efp, enteval_rare, enteval_cap, enteval_cerp ─┴─> enteval_tasks

Each task stage reads its original source files, named by its parameters (`builders.enteval.stages.sources`:
a task whose files are not named is skipped, never an error), and writes the lines of its files in
the EntEval loaders' formats (`ZeweiChu/EntEval:enteval/*.py`). `enteval_tasks` lists every task as
built or skipped (table `tasks`, stats `tasks_built`, `tasks_skipped`, `skipped:<task>`) and writes
the built tasks' files under `enteval/` in its output directory, laid out as the loaders' `task_path`
expects (`KORE/all.txt`, `wikisrs/…`, `ERT/…`, `conll-yago/…`, `rare/…`, `CAP/same|next/…`, `CERP/…`,
`ET/…`, `EFP/…`: the ten tasks of `ZeweiChu/EntEval:enteval/engine.py`);
they are listed, with their sha256, in its manifest. `entbench export enteval --format tasks` copies
that directory.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.enteval.stages.common import TaskStage
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import enteval as schema

#: Where the task files go inside the `enteval_tasks` output directory.
TASK_DIR = "_enteval"  # `_`: Parquet readers of the stage directory skip the task files
SKIPPED = "skipped_no_source"


@dataclass(eq=False)
class EntEvalTasks(Stage):
    """Collects the task stages: which were built, and their files in the loaders' layout."""

    name = "enteval_tasks"
    version = 2  # 2: the task files under `_enteval/`
    layer = "benchmarks"
    default_num_shards = 1
    shard_key = "task"
    description = "EntEval task files in the loaders' layout; tasks without sources listed as skipped"
    progress_unit = "shard"
    progress_items = "tasks"

    #: The task stages whose files this one gathers (their names are its identity).
    tasks: tuple[TaskStage, ...]
    _: KW_ONLY
    stage_name: str = ""

    def __post_init__(self) -> None:
        self.stage_name = self.stage_name or self.name
        self.inputs = tuple(t.stage_name for t in self.tasks)

    def outputs(self, params: Params) -> list[Output]:
        """One table, `tasks`."""
        return [Output("tasks", schema.TASKS, ("task",), sized_by_data=False)]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """One row per task: built or skipped, its files and line count."""
        stats = Stats()
        rows = []
        for task in self.tasks:
            upstream = ctx.inputs[task.stage_name]
            skipped = SKIPPED in upstream.stats
            lines = 0 if skipped else pq.read_metadata(upstream.files("lines")[0]).num_rows
            rows.append(
                {
                    "task": task.task,
                    "stage": task.stage_name,
                    "status": SKIPPED if skipped else "built",
                    "files": [] if skipped else list(task.files),
                    "lines": lines,
                }
            )
            stats.add("tasks_skipped" if skipped else "tasks_built")
            if skipped:
                stats.add(f"skipped:{task.task}")
        return {"tasks": pa.Table.from_pylist(rows, schema=schema.TASKS)}, stats

    def finalize(self, ctx: StageContext, directory: Path, stats: Stats) -> dict[str, Any]:
        """Write every built task's files (an empty file when a split has no line)."""
        written: list[str] = []
        for task in self.tasks:
            upstream = ctx.inputs[task.stage_name]
            if SKIPPED in upstream.stats:
                continue
            table = pq.read_table(upstream.files("lines")[0])
            by_file: dict[str, list[str]] = {name: [] for name in task.files}
            for name, text in zip(
                table.column("file").to_pylist(), table.column("text").to_pylist(), strict=True
            ):
                by_file[name].append(text)
            for name in task.files:
                lines = by_file[name]
                relative = f"{TASK_DIR}/{name}"
                atomic_write_text(directory / relative, "".join(line + "\n" for line in lines))
                written.append(relative)
        return {"files": written}
