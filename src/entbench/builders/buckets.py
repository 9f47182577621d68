"""Map-side spill files: one Arrow IPC file per (map task, table), batches tagged with their shard.

A map task's rows are appended in batches; each batch belongs to one shard and the task's index
(`<task>.done.json`, written last and atomically) says which batch indices hold which shard. The
coordinator works out once which batches of which task files each shard needs (`shard_inputs`);
a reducer reads just those, one file at a time. A task without its `.done.json` did not finish:
its files are overwritten when it runs again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.builders.shards import atomic_write_text
from entbench.builders.stage import BucketSink
from entbench.builders.stats import Stats

#: Rows buffered per (table, shard) before a batch is written.
FLUSH_ROWS = 32_768


class FileBucketSink(BucketSink):
    """Collects one map task's rows and spills them as shard-tagged batches."""

    def __init__(self, directory: Path, task_id: str, schemas: Mapping[str, pa.Schema], num_shards: int):
        self.directory = directory
        self.task_id = task_id
        self.schemas = dict(schemas)
        self.num_shards = num_shards
        self._pending: dict[tuple[str, int], list[pa.RecordBatch]] = {}
        self._pending_rows: dict[tuple[str, int], int] = {}
        self._writers: dict[str, pa.ipc.RecordBatchFileWriter] = {}
        self._index: dict[str, list[int]] = {name: [] for name in self.schemas}  # batch i -> shard

    def _path(self, table: str) -> Path:
        return self.directory / f"{self.task_id}.{table}.arrow"

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        """Buffer rows of `table` for `shard`; batches are written once enough rows have gathered."""
        if not 0 <= shard < self.num_shards:
            raise ValueError(f"shard {shard} out of range for {self.num_shards} shards")
        schema = self.schemas[table]
        if isinstance(batch, pa.Table):
            batches = batch.cast(schema).to_batches()
        else:
            batches = [batch.cast(schema) if batch.schema != schema else batch]
        key = (table, shard)
        pending = self._pending.setdefault(key, [])
        for b in batches:
            if b.num_rows:
                pending.append(b)
                self._pending_rows[key] = self._pending_rows.get(key, 0) + b.num_rows
        if self._pending_rows.get(key, 0) >= FLUSH_ROWS:
            self._flush(key)

    def _flush(self, key: tuple[str, int]) -> None:
        batches = self._pending.pop(key, [])
        self._pending_rows.pop(key, None)
        if not batches:
            return
        table, shard = key
        writer = self._writers.get(table)
        if writer is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            writer = pa.ipc.new_file(str(self._path(table)), self.schemas[table])
            self._writers[table] = writer
        combined = pa.Table.from_batches(batches, self.schemas[table]).combine_chunks()
        for b in combined.to_batches():
            writer.write_batch(b)
            self._index[table].append(shard)

    def close(self, stats: Stats, extra: Mapping[str, Any] | None = None) -> None:
        """Flush everything and mark the task done (the index file is the completion marker)."""
        for key in sorted(self._pending):
            self._flush(key)
        for writer in self._writers.values():
            writer.close()
        done = {
            "task": self.task_id,
            "stats": stats.sorted(),
            "batches": {table: shards for table, shards in sorted(self._index.items()) if shards},
            "extra": dict(extra or {}),
        }
        atomic_write_text(self.directory / f"{self.task_id}.done.json", json.dumps(done, sort_keys=True))


def read_done(directory: Path, task_id: str) -> dict[str, Any] | None:
    """The completion record of a map task, or None if it did not finish."""
    path = directory / f"{task_id}.done.json"
    if not path.exists():
        return None
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return result


#: What one reduce task reads: (map task id, {table: indices of the batches routed to its shard}).
ShardInput = tuple[str, dict[str, list[int]]]


def shard_inputs(
    done_records: Mapping[str, Mapping[str, Any]], shards: Sequence[int]
) -> dict[int, list[ShardInput]]:
    """For each of `shards`, the finished map tasks holding its rows and which batches, in task id
    order. Computed once by the coordinator: every reduce task re-reading every map task's record
    cost shards x tasks file reads (~10^8 for a full dump)."""
    wanted = set(shards)
    result: dict[int, dict[str, dict[str, list[int]]]] = {shard: {} for shard in shards}
    for task_id in sorted(done_records):
        for table, batch_shards in sorted(done_records[task_id]["batches"].items()):
            for i, shard in enumerate(batch_shards):
                if shard in wanted:
                    result[shard].setdefault(task_id, {}).setdefault(table, []).append(i)
    return {shard: sorted(tasks.items()) for shard, tasks in result.items()}


def gather_bucket(directory: Path, inputs: Sequence[ShardInput], table: str, schema: pa.Schema) -> pa.Table:
    """All rows of `table` in the given map tasks' batches (one shard's `shard_inputs`).

    Each spill file is read and closed in turn: keeping thousands of them memory-mapped at once
    would exhaust the process's map count (vm.max_map_count) on a big dump."""
    batches: list[pa.RecordBatch] = []
    for task_id, tables in inputs:
        indices = tables.get(table)
        if not indices:
            continue
        with pa.OSFile(str(directory / f"{task_id}.{table}.arrow"), "rb") as source:
            reader = pa.ipc.open_file(source)
            batches.extend(reader.get_batch(i) for i in indices)
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches, schema)
