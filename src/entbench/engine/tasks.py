"""The task functions workers run: a map task, a merge task, a shard task.

They are module-level functions with picklable arguments and a `progress` keyword, so the same
functions run inline, in a local pool's worker processes or on a dask cluster (`executors`). Each
writes its files under the stage's work directory and its completion record last, so a killed
build resumes exactly the unfinished tasks (`runner`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.engine.executors.base import resident_bytes, trim_heap
from entbench.engine.external_sort import write_sorted
from entbench.engine.in_order import write_in_order
from entbench.engine.plan import table_rel_path
from entbench.engine.shards import (
    WrittenShard,
    atomic_write_text,
    cast_rows,
    durable_in_background,
    sort_order,
    write_parquet,
)
from entbench.engine.shuffle import (
    FileBucketSink,
    GatheredTables,
    ShardInput,
    ShuffleLayout,
    merge_group,
    read_done,
)
from entbench.engine.stage import InOrder, MapTask, Output, ProgressFn, Stage, StageContext
from entbench.engine.stats import Stats


def map_task(
    stage: Stage,
    ctx: StageContext,
    task: MapTask,
    schemas: Mapping[str, pa.Schema],
    layout: ShuffleLayout,
    map_dir: str,
    *,
    progress: ProgressFn,
) -> dict[str, Any]:
    """Run one map task: its rows into its spill file, its record (`<task>.done.json`) last."""
    sink = FileBucketSink(Path(map_dir), task.task_id, schemas, layout, task.digest())
    stats = stage.map(ctx, task, sink, progress)
    sink.close(stats)
    done = read_done(Path(map_dir), task.task_id)
    assert done is not None
    return done


def merge_task(
    work_dir: str,
    task_ids: Sequence[str],
    group: int,
    layout: ShuffleLayout,
    schemas: Mapping[str, pa.Schema],
    *,
    progress: ProgressFn,
) -> int:
    """Regroup spill group `group` of every map task by shard (the merge pass, past 64 shards)."""
    work = Path(work_dir)
    merge_group(work / "_map", work / "_merge", task_ids, group, layout, schemas)
    progress(1, 1)
    return group


def shard_task(
    stage: Stage,
    ctx: StageContext,
    shard: int,
    outputs: Sequence[Output],
    meta: Mapping[str, str],
    spill_dir: str,
    inputs: Sequence[ShardInput],
    *,
    progress: ProgressFn,
) -> int:
    """Build output shard `shard`: reduce its gathered buckets (or run the shard stage), sort,
    write each table, then the shard's record (`_shards/part-SSSSS.json`)."""
    work = Path(ctx.workdir)
    started_with = resident_bytes()
    gathered: GatheredTables | None = None
    if stage.is_map_reduce:
        gathered = GatheredTables(work / spill_dir, inputs, stage.map_schemas(ctx.params))
        reduced, stats = stage.reduce(ctx, shard, gathered)
        gathered.forget()  # `reduced` holds what is still needed
    else:
        reduced, stats = stage.shard(ctx, shard)
    tables = {name: table for name, table in reduced.items() if not isinstance(table, InOrder)}
    in_order = {name: table for name, table in reduced.items() if isinstance(table, InOrder)}
    del reduced
    rels = {output.name: table_rel_path(outputs, output.name, shard, ctx.num_shards) for output in outputs}

    # What each output holds: the reduce's table, or the spilled bytes of one it left as mapped.
    held = {
        output.name: tables[output.name].nbytes
        if output.name in tables
        else gathered.spilled_bytes(output.name)
        if gathered is not None and output.name in gathered
        else 0
        for output in outputs
    }
    # Tables left as mapped that are large enough for the external sort (past the stage's limit).
    # They are written after the others, not beside them: they would add those tables to a memory
    # the external sort keeps flat (+25 MiB on a Wikidata scan's worker).
    sort_memory = stage.sort_memory_bytes
    on_disk = [
        output
        for output in outputs
        if output.name in in_order
        or (output.name not in tables and output.sort_by and held[output.name] > sort_memory)
    ]
    in_memory = [output for output in outputs if output not in on_disk]

    def write(output: Output) -> WrittenShard:
        # Taken out of `tables` (or read from the spills only now, for an output the reduce left
        # as it was mapped) and freed once written: the shard's peak is about its largest table
        # and that table sorted, not every table twice.
        table = tables.pop(output.name, None)
        rel = rels[output.name]
        metadata = {**meta, "entbench.table": output.name}
        if output.name in in_order:
            return write_in_order(
                in_order.pop(output.name).pieces,
                work / rel,
                schema=output.schema,
                metadata=metadata,
                sort_by=output.sort_by,
                scratch=ctx.scratch / "in_order" / f"{output.name}-{shard:05d}",
            )
        if table is None and gathered is not None and output.name in gathered:
            if output in on_disk:
                return write_sorted(
                    gathered.batches(output.name),
                    work / rel,
                    schema=output.schema,
                    metadata=metadata,
                    sort_by=output.sort_by,
                    scratch=ctx.scratch / "sort" / f"{output.name}-{shard:05d}",
                    run_bytes=sort_memory,
                )
            table = gathered.take(output.name)
        rows_out = cast_rows(output.schema.empty_table() if table is None else table, output.schema)
        del table
        return write_parquet(
            rows_out,
            work / rel,
            schema=output.schema,
            metadata=metadata,
            sort_by=output.sort_by,
            order=sort_order(rows_out, output.sort_by),
        )

    def write_group(group: list[Output]) -> list[WrittenShard]:
        enough = sum(held[output.name] for output in group) >= THREADED_WRITE_MIN_BYTES
        threads = writer_threads(ctx, len(group)) if enough else 1
        if threads == 1:
            return [write(output) for output in group]
        # Fewer shards than workers (a scan of a small dump: one shard), so the other workers would
        # idle through this reduce: its tables are written side by side (Parquet encoding and the
        # sorts run outside the GIL). Each file's bytes are the same either way.
        with ThreadPoolExecutor(threads, thread_name_prefix="entbench-shard") as pool:
            return list(pool.map(write, group))

    with durable_in_background():  # all in place before the shard's record
        written = write_group(in_memory) + write_group(on_disk)
    entries = {
        output.name: {**shard_file.to_json(), "file": rels[output.name]}
        for output, shard_file in zip(in_memory + on_disk, written, strict=True)
    }
    rows = sum(shard_file.rows for shard_file in written)
    record = {"shard": shard, "tables": entries, "stats": Stats(stats).sorted()}
    atomic_write_text(work / "_shards" / f"part-{shard:05d}.json", json.dumps(record, sort_keys=True))
    trim_if_grown(started_with)
    progress(1, rows)
    return shard


#: A shard task that leaves its process this much larger than it found it hands the freed heap
#: pages back (`trim_if_grown`).
TRIM_GROWTH_BYTES = 16 << 20


def trim_if_grown(started_with: int | None) -> None:
    """`trim_heap` when this process grew by `TRIM_GROWTH_BYTES` since it held `started_with`.

    A shard's reduce and writes free nearly all they built, but into malloc's heaps, which keep the
    pages; the next shard's task, in the same process, builds tables of other sizes beside them. On
    one worker a Wikipedia scan's second shard of a 1 GB dump started ~40 MiB above the first, so
    the stage's peak grew with its shard count (1 -> 2 shards: 194 -> 214 MiB); trimmed, both start
    alike (~115 MiB). Shards of small stages never grow that much, so they skip it (a few ms)."""
    if started_with is not None and (resident_bytes() or 0) - started_with > TRIM_GROWTH_BYTES:
        trim_heap()


#: Tables of a shard write side by side only when they hold at least this much: below it their
#: writes take a fraction of a second, and each thread's own malloc arena costs more memory than
#: that saves (measured: +20-25 MiB on a 2-worker Wikidata scan whose tables hold ~10 MB).
THREADED_WRITE_MIN_BYTES = 32 << 20


def writer_threads(ctx: StageContext, tables: int) -> int:
    """Threads a shard task writes its `tables` tables with: the cores its stage's shards leave
    idle (`--workers` over the shards running at once), at most one per table."""
    workers = ctx.options.workers
    running = max(1, min(workers, ctx.num_shards))
    return max(1, min(tables, workers // running))
