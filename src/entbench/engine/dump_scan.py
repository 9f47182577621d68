"""One base for the stages that scan a raw dump (the Wikidata JSON dump, a MediaWiki XML dump, a
corpus of JSON lines): how the dump is cut into map tasks, how many shards it gets, how progress
is counted, what a damaged stream is, and what happens to a record that cannot be read.

* **Tasks.** An uncompressed dump is cut into byte ranges that workers read themselves
  (`range_tasks`); a compressed one is decompressed here, in order, a couple of blocks ahead in a
  thread (the decoders release the GIL), into blocks of whole records that the workers parse
  (`block_tasks`). A task holds about `task_bytes` of input: `--chunk-mb`, but small enough that
  a dump has `MIN_TASKS` (never depending on `--workers`: a resumed build must find the same tasks).
* **Shards.** `num_shards` if given, else one per `auto_shard_bytes` of decompressed input,
  estimated before reading from the file's size times its expansion, measured on the first 8 MB
  of the decompressed stream (`sampled_expansion`): dumps of one format compress anywhere from 4x
  to 15x, so a fixed ratio per format would give a dump several times too few shards. The sample
  depends on the file's bytes only, so the same file always gets the same shard count (which
  enters the fingerprint) and the same tasks, whatever `--workers`; the format's `expansion` is
  only the fallback for a file that cannot be sampled here. The measure is kept in the per-user
  cache under the file's path, size, mtime and inode (as `engine.sources` keeps its hash), so the
  next process planning the same dump does not decompress its head again (the demo world's
  enwiki.xml.bz2: ~0.3 CPU s in every build, dry run or test process that plans its scan).
* **Progress.** Bytes of the file on disk. A block's share of a compressed file is estimated from
  its decompressed length and an empty closing task takes the remainder (`compressed_delta`):
  decoders report different compressed positions with their thread counts, and a build resumed
  with another worker count must record the same stats (`input_progress_bytes`).
* **Damage.** A compressed stream that ends early is a `DataError` naming the file and the offset
  in the decompressed stream, whatever `--max-bad-lines` says: a cut dump never looks like a
  smaller complete one. A block is handed out only once the next one (or the clean end) is read,
  so the error names the cut stream, not the partial record before it.
* **Bad records.** A record that cannot be read (a malformed line or page) is counted under
  `rejected_total` and `rejected_<reason>` and kept with its offset in the task's rejects file;
  past `--max-bad-lines` the build stops with a `DataError` naming the file and the first bad
  record's offset; `finalize_rejects` gathers every reject into `_rejects.jsonl`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import MapTask, P, ProgressFn, SourceInfo, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.errors import DataError
from entbench.readers.cache import default_cache_dir
from entbench.readers.compressed.dumps import StreamTruncated, byte_ranges, detect_compression
from entbench.readers.compressed.prefetch import InlineBlocks, Prefetched, usable_cpus
from entbench.readers.head import SAMPLE_BYTES, measure_expansion

#: Aim for at least this many map tasks (`task_bytes`), so that workers finish together...
MIN_TASKS = 8
#: ...but never tasks smaller than this.
MIN_TASK_BYTES = 8 << 20
#: At most this many decompressed bytes per task of blocks decompressed here (`block_task_bytes`).
MAX_BLOCK_TASK_BYTES = 16 << 20
#: Finished blocks that wait while the next is decompressed (`block_tasks`, with a core to spare;
#: `Prefetched`'s depth): none, the next block is decompressed while the last one taken waits as
#: the pending task, which keeps a worker fed as two waiting blocks did, 32 MB less in memory.
READ_AHEAD_BLOCKS = 0
#: Bytes of a bad record kept in its reject record.
HEAD_BYTES = 200
#: Every rejected record with its offset and reason; `_` keeps Parquet readers of the directory off it.
REJECTS_FILE = "_rejects.jsonl"

Block = bytes | bytearray


def task_bytes(ctx: StageContext, input_bytes: int) -> int:
    """Decompressed bytes per map task: `--chunk-mb`, but small enough for `MIN_TASKS` tasks.

    In 64 MB tasks a dump of a few hundred MB leaves one of two workers idle for most of a task
    at the end. The size depends on the input only, never on `--workers`: a build resumed with
    another worker count must find the same tasks (their ids name their spills and rejects).
    """
    return min(ctx.options.chunk_bytes, max(MIN_TASK_BYTES, input_bytes // MIN_TASKS))


def sampled_expansion(path: str, sha256: str = "") -> float | None:
    """Decompressed bytes per byte on disk of the start of the local file `path` (about
    `SAMPLE_BYTES` decompressed, rounded to 3 decimals), or None when it cannot be sampled here (not
    a local file, or damaged: the scan itself then reports where). Read once per file version:
    its content's `sha256` when known (a copy elsewhere is not read again), else its path and stat."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    version = [sha256] if sha256 else [os.path.abspath(path), info.st_size, info.st_mtime_ns, info.st_ino]
    return _sampled_expansion(path, json.dumps([_SAMPLE_VERSION, SAMPLE_BYTES, *version]))


#: Bump when what `_sampled_expansion` measures changes: it is part of a kept measure's key.
_SAMPLE_VERSION = 1


@functools.lru_cache(maxsize=64)
def _sampled_expansion(path: str, version: str) -> float | None:
    key = hashlib.sha256(version.encode("utf-8")).hexdigest()
    kept = default_cache_dir() / "head-expansion" / f"{key}.json"
    with contextlib.suppress(OSError, ValueError):
        known = json.loads(kept.read_text(encoding="utf-8"))
        if isinstance(known, float):
            return known
    try:
        measured = round(measure_expansion(path), 3)
    except (DataError, OSError):
        return None  # not kept: the scan reports the damage
    # Not durable: a record a power cut empties is measured again; a read-only cache measures each time.
    with contextlib.suppress(OSError):
        atomic_write_text(kept, json.dumps(measured), durable=False)
    return measured


def reject_record(label: str, offset: int, reason: str, detail: str, head: bytes) -> dict[str, Any]:
    """One line of `_rejects.jsonl`: the file, the record's offset, why, and the record's head."""
    return {
        "file": label,
        "offset": offset,
        "reason": reason,
        "detail": detail[:500],
        "head": head[:HEAD_BYTES].decode("utf-8", "backslashreplace"),
    }


def rejects_text(rejects: list[dict[str, Any]]) -> str:
    """Reject records as JSON lines."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rejects)


def write_rejects(path: Path, rejects: list[dict[str, Any]]) -> None:
    """Write reject records as JSON lines (atomically)."""
    atomic_write_text(path, rejects_text(rejects))


def first_reject(map_dir: Path) -> dict[str, Any] | None:
    """The reject of lowest offset among the map tasks' reject files, if any."""
    first: dict[str, Any] | None = None
    for path in map_dir.glob("*.rejects.jsonl"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                if first is None or record["offset"] < first["offset"]:
                    first = record
                break  # each file is in offset order
    return first


#: Reasons a JSON line that runs to the end of the stream without a newline is taken for a cut tail.
TRUNCATION_REASONS = frozenset({"malformed_json", "invalid_utf8"})


def runs_to_the_end(start: int, line: bytes, block: Block) -> bool:
    """Whether the line at `start` of `block` has no newline after it. Blocks and byte ranges end
    after a newline except the stream's very last one, so such a line is the dump's last: one that
    cannot be read there is a cut tail (an error), not a bad line."""
    return start + len(line) >= len(block) and not block.endswith(b"\n")


class Rejects:
    """The bad records of one map task: counted in its stats, kept for its rejects file."""

    def __init__(self, label: str, stats: Stats) -> None:
        self.label = label
        self.stats = stats
        self.records: list[dict[str, Any]] = []

    def add(self, offset: int, reason: str, detail: str, head: bytes) -> None:
        """Count one bad record under `rejected_total` and `rejected_<reason>` and keep it."""
        self.records.append(reject_record(self.label, offset, reason, detail, head))
        self.stats.add("rejected_total")
        self.stats.add(f"rejected_{reason}")

    def text(self) -> str:
        """The task's rejects file: its records as JSON lines, in offset order."""
        return rejects_text(sorted(self.records, key=lambda r: (r["offset"], r["reason"])))

    def write(self, ctx: StageContext, task: MapTask) -> None:
        """The task's rejects file; none when the task had no bad record (a full dump has
        thousands of tasks, nearly all clean), so a task run again leaves no stale file."""
        path = Path(ctx.workdir) / "_map" / f"{task.task_id}.rejects.jsonl"
        if self.records:
            atomic_write_text(path, self.text())
        else:
            path.unlink(missing_ok=True)


class DumpScan(Stage[P]):
    """A map/reduce stage over one raw dump source (`self.sources[0]`); see the module docstring."""

    #: Decompressed/compressed size ratio of the format, per compression: the fallback for a dump
    #: whose own ratio cannot be measured (`expansion_of`).
    expansion: ClassVar[Mapping[str, int]] = {"none": 1, "gzip": 4, "bz2": 5}
    #: Target decompressed bytes per output shard when `num_shards` is 0 (automatic).
    auto_shard_bytes: ClassVar[int] = 256 << 20
    #: The stats counter of items read (entities, pages, texts): the bar's second figure.
    items_stat: ClassVar[str] = "items"
    #: What a bad record is called in the `--max-bad-lines` error ("line", "page").
    record_noun: ClassVar[str] = "line"
    #: Whether `_rejects.jsonl` is written when nothing was rejected.
    always_write_rejects: ClassVar[bool] = False
    progress_unit = "B"

    def dump(self, ctx: StageContext) -> SourceInfo:
        """The dump this stage scans."""
        return ctx.sources[self.sources[0]]

    def expansion_of(self, src: SourceInfo) -> float:
        """Decompressed bytes per byte on disk of the dump: measured on its start
        (`sampled_expansion`), else the format's `expansion`."""
        compression = detect_compression(src.path)
        if compression == "none":
            return 1.0
        # A trial build's cut dump is not the file its sha256 names: known by its stat only.
        measured = sampled_expansion(src.path, "" if src.limit else src.sha256)
        return measured if measured else float(self.expansion[compression])

    def input_bytes(self, src: SourceInfo) -> int:
        """Estimated decompressed bytes of the dump (its size times `expansion_of`)."""
        return int(src.size * self.expansion_of(src))

    def resolve_num_shards(self, params: P, sources: Mapping[str, SourceInfo]) -> int:
        """`num_shards` if given, else one shard per `auto_shard_bytes` of decompressed input."""
        requested = getattr(params, "num_shards", 0)
        if requested:
            return int(requested)
        return max(1, math.ceil(self.input_bytes(sources[self.sources[0]]) / self.auto_shard_bytes))

    def task_bytes(self, ctx: StageContext) -> int:
        """Decompressed bytes per map task for this dump (`task_bytes`)."""
        return task_bytes(ctx, self.input_bytes(self.dump(ctx)))

    def block_task_bytes(self, ctx: StageContext) -> int:
        """Decompressed bytes per task of blocks decompressed here (`block_tasks`): `task_bytes`,
        but at most `MAX_BLOCK_TASK_BYTES`.

        Such a task carries its block, and a block is held whole while it waits in the read-ahead,
        in a pool's queue of tasks in flight and in the worker that maps it: some six blocks per
        process at once. Blocks of a fixed size keep that memory the same whatever the dump's size
        (a Wikidata scan of 350 MB of JSON on one worker: 44 MB blocks peaked at ~480 MiB, 16 MB
        ones at ~217, 8 MB ones at ~177, with two finished blocks waiting). 16 MB, with none
        waiting (`READ_AHEAD_BLOCKS`): 8 MB blocks made twice the tasks, and each task's own work
        (its tables, spills, record; the reducers reading one more spill each) cost a Wikidata scan
        of 320 MB of JSON pinned to one CPU 4% more CPU. A task that reads its own range (a byte
        range, a range of an indexed `.gz`) reads it a piece at a time instead, whatever its size.
        """
        return min(self.task_bytes(ctx), MAX_BLOCK_TASK_BYTES)

    def progress_total(self, ctx: StageContext[P]) -> int | None:
        """Progress is measured in bytes of the file on disk (compressed bytes for .gz/.bz2)."""
        return self.dump(ctx).size

    def on_map_done(self, ctx: StageContext[P], done: Mapping[str, Any], progress: ProgressFn) -> None:
        """Advance the bar over tasks finished by an earlier run."""
        stats = done["stats"]
        progress(int(stats.get("input_progress_bytes", 0)), int(stats.get(self.items_stat, 0)))

    # --- planning ----------------------------------------------------------------------------
    def range_tasks(self, size: int, chunk: int, meta: Mapping[str, Any]) -> Iterator[MapTask]:
        """Byte ranges of an uncompressed dump, `r<start>`, each read by its worker."""
        for start, end in byte_ranges(size, chunk):
            yield MapTask(f"r{start:015d}", {**meta, "start": start, "end": end})

    def block_tasks(
        self,
        ctx: StageContext,
        blocks: Iterator[tuple[int, Block]],
        *,
        compression: str,
        end: int = 0,
        meta: Callable[[Block], Mapping[str, Any]] = lambda _block: {},
    ) -> Iterator[MapTask]:
        """Tasks `b<n>` of `blocks` (offset, whole records) read in order from a decompressor, then
        an empty closing task at `end` (or after the last block) with the rest of the file's bytes.

        `meta(block)` adds to each task's meta (called once per task in order, b"" for the closing
        one). A `StreamTruncated` from the decompressor becomes the user's `DataError`."""
        src = self.dump(ctx)
        ahead = Prefetched(blocks, depth=READ_AHEAD_BLOCKS) if usable_cpus() > 1 else InlineBlocks(blocks)
        expansion = self.expansion_of(src)
        consumed = index = 0
        pending: MapTask | None = None
        try:
            for offset, block in ahead:
                if pending is not None:
                    yield pending
                share = min(src.size - consumed, int(len(block) / expansion))
                consumed += share
                end = offset + len(block)
                task_meta = {**meta(block), "offset": offset, "compressed_delta": share}
                pending = MapTask(f"b{index:08d}", task_meta, block)
                index += 1
            if pending is not None:
                yield pending
            closing = {**meta(b""), "offset": end, "compressed_delta": src.size - consumed}
            yield MapTask(f"b{index:08d}", closing, b"")
        except StreamTruncated as exc:
            raise exc.data_error(src.label) from exc
        finally:
            ahead.close()

    # --- bad records -------------------------------------------------------------------------
    def rejects(self, ctx: StageContext, stats: Stats) -> Rejects:
        """A collector of one map task's bad records (write it with `Rejects.write`)."""
        return Rejects(self.dump(ctx).label, stats)

    def check_map_stats(self, ctx: StageContext[P], stats: Stats, map_dir: Path) -> None:
        """Stop as soon as more records were rejected than `--max-bad-lines` allows."""
        bad = stats.get("rejected_total", 0)
        limit = ctx.options.max_bad_lines
        if bad <= limit:
            return
        first = first_reject(map_dir)
        reason = "unknown"
        if first is not None:
            reason = first["reason"] + (f" ({first['detail'][:120]})" if first["detail"] else "")
        raise DataError(
            f"{bad} bad {self.record_noun}(s), more than --max-bad-lines {limit}; first: {reason}; "
            f"see rejects in {map_dir}",
            path=self.dump(ctx).label,
            offset=int(first["offset"]) if first else None,
        )

    def finalize_rejects(self, directory: Path, more: Iterable[Path] = ()) -> dict[str, Any]:
        """Gather the rejects of this run's map tasks (and the files in `more`) into `_rejects.jsonl`;
        the `finalize` fields that list it (`files`, `rejects_lines`), or none when there is nothing
        to write."""
        # The rejects of this run's map tasks only: a run killed and resumed with another
        # --chunk-mb leaves the first run's task files behind, and their records are in these too.
        map_dir = directory / "_map"
        task_ids: list[str] = json.loads((map_dir / "_TASKS.json").read_text(encoding="utf-8"))
        task_rejects = [map_dir / f"{task_id}.rejects.jsonl" for task_id in sorted(task_ids)]
        rejects: list[dict[str, Any]] = []
        for path in [p for p in task_rejects if p.exists()] + list(more):
            with open(path, encoding="utf-8") as f:
                rejects.extend(json.loads(line) for line in f if line.strip())
        if not rejects and not self.always_write_rejects:
            return {}
        rejects.sort(key=lambda r: (r["offset"], r["reason"]))
        write_rejects(directory / REJECTS_FILE, rejects)
        return {"files": [REJECTS_FILE], "rejects_lines": len(rejects)}
