"""Runs stages: fingerprint, skip what is complete, resume what is not, write shards and manifests.

Layout of one stage's output (`<out>/<layer>/<stage>/`):

    v<version>-<fp12>/                    complete: renamed into place last
        part-SSSSS-of-NNNNN.parquet       (or <table>/part-… when a stage has several tables)
        _MANIFEST.json  _RUN.json  [extra files such as rejects.jsonl]
    .incomplete/v<version>-<fp12>/        while building
        _map/<task>.spill, <task>.done.json              map spill + per-task completion marker
        _map/_TASKS.json, _LAYOUT.json                   the map's task ids; its task size and layout
        _merge/g<group>.spill, .done.json                past 64 shards: the spills regrouped by shard
        _shards/part-SSSSS.json                          per-shard completion marker (rows, sha256, stats)
        _scratch/                                        the stage's own temporary files

Every file is written to a temp name and renamed; a marker is written only after what it marks.
So a killed build leaves nothing that looks complete, and a re-run redoes exactly the unfinished
tasks. With a store (`--out s3://…`, `engine.store`) that directory is the work directory and each
complete stage is then published to the store, its manifest last.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench import __version__
from entbench.engine import registry
from entbench.engine.build_out import build_lock
from entbench.engine.config import BuildConfig, make_params
from entbench.engine.executors import Executor, make_executor
from entbench.engine.manifest import (
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    RUN_NAME,
    canonical_json,
    check_complete,
    file_stamps,
    load_manifest,
    upstream_from_manifest,
)
from entbench.engine.progress import StageBar
from entbench.engine.shards import (
    atomic_write_text,
    cast_rows,
    file_sha256,
    shard_file_name,
    sort_order,
    write_parquet,
)
from entbench.engine.shuffle import (
    FileBucketSink,
    GatheredTables,
    ShardInput,
    ShuffleLayout,
    merge_group,
    merge_task_id,
    read_done,
    shard_inputs,
    shuffle_layout,
)
from entbench.engine.sources import identify_source
from entbench.engine.stage import (
    BuildOptions,
    MapTask,
    Output,
    ProgressFn,
    SourceInfo,
    Stage,
    StageContext,
    UpstreamOutput,
)
from entbench.engine.stats import Stats
from entbench.engine.store import Store
from entbench.errors import UserError
from entbench.schemas.base import schema_hash, schema_to_json


@dataclass(frozen=True)
class StagePlan:
    """A stage with its parameters resolved and its fingerprint computed."""

    stage: Stage
    ctx: StageContext
    outputs: tuple[Output, ...]
    fingerprint: str
    final_dir: Path
    work_dir: Path
    fingerprint_doc: Mapping[str, Any]


def table_rel_path(outputs: Sequence[Output], table: str, shard: int, num_shards: int) -> str:
    """Where a table's shard lives inside the stage directory."""
    name = shard_file_name(shard, num_shards)
    return name if len(outputs) == 1 else f"{table}/{name}"


class Builder:
    """Builds targets into an output directory."""

    def __init__(
        self,
        out: str | Path,
        config: BuildConfig,
        options: BuildOptions,
        log: Any = None,
        store: Store | None = None,
    ) -> None:
        """`out` is the build directory; with `store` it is the work directory whose complete
        stages are published to the store (and found there by later builds)."""
        self.out = Path(out)
        self.config = config
        self.options = options
        self.store = store
        #: whether this build ran any stage (rather than finding every one up to date)
        self.built_any = False
        self._log = log or (lambda msg: print(msg, file=sys.stderr))
        self._sources: dict[str, SourceInfo] = {}
        # stages found complete in the store but not (yet) here: resolved local dir -> its path in the store
        self._only_in_store: dict[str, str] = {}

    # --- public ------------------------------------------------------------------------------
    def build(self, target: str, *, force: bool = False) -> dict[str, Path]:
        """Build every stage of `target` in DAG order; returns stage name -> output directory."""
        # The pool starts first: its workers' interpreter start-up and imports (about half a
        # second each) overlap the coordinator loading every stage module and planning, instead
        # of delaying the first map tasks.
        if self.store is not None:
            self._log(f"building in {self.out}, publishing to {self.store.url}")
        with self._executor() as executor:
            spec = registry.get_target(target)
            order = registry.stage_order(spec.stages)
            executor.prepare(sorted({type(stage).__module__ for stage in order}))
            self._check_params(order)
            self._check_sources(order)
            self.out.mkdir(parents=True, exist_ok=True)
            dirs = self._build_stages(order, executor, force=force)
        target_doc = {
            "target": target,
            "stages": {name: os.path.relpath(path, self.out) for name, path in sorted(dirs.items())},
        }
        listing = self.out / "targets" / f"{target}.json"
        atomic_write_text(listing, json.dumps(target_doc, indent=2) + "\n")
        if self.store is not None:
            self.store.publish_file(listing, f"targets/{target}.json")
        return dirs

    def fetch_from_store(self, directories: Sequence[Path]) -> None:
        """Download those of `directories` that this build found complete only in the store."""
        for directory in directories:
            rel = self._only_in_store.pop(str(directory.resolve()), None)
            if rel is not None and self.store is not None:
                self.store.fetch_stage(rel, directory, self._log, progress=self.options.progress)

    def _build_stages(self, order: Sequence[Stage], executor: Executor, *, force: bool) -> dict[str, Path]:
        results: dict[str, UpstreamOutput] = {}
        dirs: dict[str, Path] = {}
        with build_lock(self.out, self._log):
            for stage in order:
                upstream = {name: results[name] for name in stage.inputs}
                plan = self.plan(stage, upstream)
                results[stage.stage_name] = self.run(plan, executor, force=force)
                dirs[stage.stage_name] = plan.final_dir
        return dirs

    def plan(self, stage: Stage, upstream: Mapping[str, UpstreamOutput]) -> StagePlan:
        """Resolve parameters and shard count, compute the fingerprint and the output directories."""
        params = make_params(
            stage.params_type, stage.stage_name, self.config.params.get(stage.stage_name, {})
        )
        sources = {name: self._source(name) for name in stage.sources}
        num_shards = stage.resolve_num_shards(params, sources)
        if hasattr(params, "num_shards"):
            params = replace(params, **{"num_shards": num_shards})
        outputs = tuple(stage.outputs(params))
        # The stage's identity is what it declares (name, version, parameters, instance arguments,
        # output schemas) and what it reads, never the module its class lives in: moving code
        # must not change every output directory and shard hash when no row changes.
        doc = {
            "format": MANIFEST_FORMAT,
            "stage": stage.stage_name,
            "version": stage.version,
            "params": params.to_json(),
            "instance": stage.fingerprint_extra(),
            "num_shards": num_shards,
            "outputs": {
                o.name: {"schema_hash": schema_hash(o.schema), "sort_by": list(o.sort_by)} for o in outputs
            },
            "inputs": {name: upstream[name].fingerprint for name in sorted(upstream)},
            "sources": {name: sources[name].identity() for name in sorted(sources)},
        }
        fingerprint = hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()
        stage_dir = self.out / stage.layer / stage.stage_name
        version_name = f"v{stage.version}-{fingerprint[:12]}"
        work_dir = stage_dir / ".incomplete" / version_name
        ctx = StageContext(
            stage=stage.stage_name,
            params=params,
            num_shards=num_shards,
            sources=sources,
            inputs=dict(upstream),
            workdir=str(work_dir),
            options=self.options,
        )
        return StagePlan(stage, ctx, outputs, fingerprint, stage_dir / version_name, work_dir, doc)

    def run(self, plan: StagePlan, executor: Executor, *, force: bool = False) -> UpstreamOutput:
        """Run one planned stage, unless an identical complete output already exists."""
        name = plan.stage.stage_name
        self._remove_stale_trash(plan)
        if self.store is not None and not force and not plan.final_dir.exists():
            rel = self._store_path(plan)
            raw = self.store.read_manifest(rel)
            if raw is not None:
                self._log(f"{name}: up to date ({self.store.location(rel)})")
                self._only_in_store[str(plan.final_dir.resolve())] = rel
                if plan.work_dir.exists():  # a run here was cut short; the store has the stage now
                    shutil.rmtree(plan.work_dir)
                return upstream_from_manifest(plan.final_dir, raw)
        if plan.final_dir.exists():
            if force:
                shutil.rmtree(plan.final_dir)
            else:
                bad = check_complete(plan.final_dir)
                if not bad:
                    self._log(f"{name}: up to date ({plan.final_dir})")
                    self._publish(plan, replace=False)
                    return upstream_from_manifest(plan.final_dir)
                self._log(f"{name}: {bad}; rebuilding the damaged shards")
                self._demote(plan)
        elif force and plan.work_dir.exists():
            shutil.rmtree(plan.work_dir)
        self.built_any = True
        self.fetch_from_store([Path(up.directory) for up in plan.ctx.inputs.values()])
        started = time.time()
        timings: dict[str, float] = {}
        plan.work_dir.mkdir(parents=True, exist_ok=True)
        manifest_path = plan.work_dir / MANIFEST_NAME
        if not (manifest_path.exists() and not check_complete(plan.work_dir)):
            map_stats = Stats()
            todo_shards = self._todo_shards(plan)
            spill_dir, inputs = "", dict[int, list[ShardInput]]()
            if plan.stage.is_map_reduce:
                if todo_shards or not self._map_records_complete(plan):
                    self._warn_if_short_of_scratch(plan)
                    t0 = time.monotonic()
                    map_stats, task_ids = self._run_map_phase(plan, executor)
                    timings["map_seconds"] = round(time.monotonic() - t0, 3)
                else:
                    map_stats, task_ids = self._load_map_records(plan)
                if todo_shards:
                    t0 = time.monotonic()
                    spill_dir, inputs = self._shuffle(plan, executor, task_ids, todo_shards)
                    timings["shuffle_seconds"] = round(time.monotonic() - t0, 3)
            t0 = time.monotonic()
            self._run_shard_phase(plan, executor, todo_shards, spill_dir, inputs)
            timings["shard_seconds"] = round(time.monotonic() - t0, 3)
            self._write_manifest(plan, map_stats)
        self._write_run_record(plan, started, timings)
        self._promote(plan)
        self._log(f"{name}: wrote {plan.final_dir}")
        self._publish(plan, replace=True)
        return upstream_from_manifest(plan.final_dir)

    def _store_path(self, plan: StagePlan) -> str:
        return plan.final_dir.relative_to(self.out).as_posix()

    def _publish(self, plan: StagePlan, *, replace: bool) -> None:
        """Copy a complete stage to the store, unless (with `replace` false) it is there already."""
        if self.store is None:
            return
        rel = self._store_path(plan)
        if replace or self.store.read_manifest(rel) is None:
            self.store.publish_stage(plan.final_dir, rel, self._log, progress=self.options.progress)

    # --- phases ------------------------------------------------------------------------------
    def _run_map_phase(self, plan: StagePlan, executor: Executor) -> tuple[Stats, list[str]]:
        stage, ctx = plan.stage, plan.ctx
        map_dir = plan.work_dir / "_map"
        layout = self._layout(plan)
        _forget_map_of_another_layout(
            map_dir, plan.work_dir / "_merge", _map_layout_doc(ctx.options.chunk_bytes, layout), self._log
        )
        schemas = stage.map_schemas(ctx.params)
        task_ids: list[str] = []
        # Only the running sum of the tasks' stats stays in memory (a task's batch index is read
        # again where needed): counters add up in any order, and keeping every task's dict cost
        # ~630 bytes a task (~60 MB for a full dump in 16 MB tasks).
        stats = Stats()
        total = stage.progress_total(ctx)
        bar = StageBar(
            f"{stage.stage_name} [map]",
            total=total,
            unit=stage.progress_unit,
            items=stage.progress_items,
            enabled=self.options.progress,
        )

        def pending() -> Generator[tuple[Any, ...], None, None]:
            planned = stage.map_tasks(ctx)
            try:
                for task in planned:
                    task_ids.append(task.task_id)
                    done = read_done(map_dir, task.task_id)
                    if done is not None:
                        stats.merge(done["stats"])
                        stage.on_map_done(ctx, done, bar.update)
                        continue
                    yield (stage, ctx, task, schemas, layout, str(map_dir))
            finally:
                # A planner may hold a decompressor with threads (rapidgzip): stop it now, not at
                # interpreter exit, where a running decoder thread aborts the process.
                close = getattr(planned, "close", None)
                if close is not None:
                    close()

        tasks = pending()
        try:
            for done in executor.run(_map_task, tasks, bar):
                stats.merge(done["stats"])
                stage.check_map_stats(ctx, stats, map_dir)
        finally:
            tasks.close()
            bar.close()
        if len(set(task_ids)) != len(task_ids):
            raise RuntimeError(f"{stage.stage_name}: map task ids are not unique")
        stage.check_map_stats(ctx, stats, map_dir)
        atomic_write_text(map_dir / "_TASKS.json", json.dumps(task_ids))
        return stats, task_ids

    def _map_records_complete(self, plan: StagePlan) -> bool:
        return (plan.work_dir / "_map" / "_TASKS.json").exists()

    def _load_map_records(self, plan: StagePlan) -> tuple[Stats, list[str]]:
        map_dir = plan.work_dir / "_map"
        task_ids: list[str] = json.loads((map_dir / "_TASKS.json").read_text())
        stats = Stats()
        for task_id in task_ids:
            done = read_done(map_dir, task_id)
            if done is None:
                raise RuntimeError(f"map record {task_id} missing")
            stats.merge(done["stats"])
        return stats, task_ids

    def _warn_if_short_of_scratch(self, plan: StagePlan) -> None:
        """Say up front when the spills will likely not fit, rather than hours into a full dump."""
        estimate = plan.stage.spill_bytes_estimate(plan.ctx)
        if estimate is None:
            return
        need = estimate * (2 if self._layout(plan).merged else 1)  # both copies during the merge
        free = shutil.disk_usage(plan.work_dir).free
        if need > free:
            self._log(
                f"{plan.stage.stage_name}: warning: the map may need ~{need / 1e9:,.1f} GB of scratch under "
                f"{plan.work_dir}, and {free / 1e9:,.1f} GB are free; a build stopped by a full "
                "disk resumes where it stopped once space is made"
            )

    def _layout(self, plan: StagePlan) -> ShuffleLayout:
        return shuffle_layout(plan.ctx.num_shards, self.options.shuffle_groups)

    def _shuffle(
        self, plan: StagePlan, executor: Executor, task_ids: Sequence[str], shards: Sequence[int]
    ) -> tuple[str, dict[int, list[ShardInput]]]:
        """Where the reducers of `shards` read from (`_map` or `_merge`) and which batches.

        With more shards than spill groups, first the merge pass: one task per group holding a
        shard still to build (a resumed build merges only those), each skipped if already done."""
        layout = self._layout(plan)
        if not layout.merged:
            return "_map", shard_inputs(plan.work_dir / "_map", task_ids, shards)
        merge_dir = plan.work_dir / "_merge"
        groups = sorted({layout.group(shard) for shard in shards})
        todo = [g for g in groups if read_done(merge_dir, merge_task_id(g)) is None]
        if todo:
            schemas = plan.stage.map_schemas(plan.ctx.params)
            bar = StageBar(
                f"{plan.stage.stage_name} [merge]",
                total=len(todo),
                unit="group",
                items="groups",
                enabled=self.options.progress,
            )
            tasks = ((str(plan.work_dir), list(task_ids), g, layout, schemas) for g in todo)
            _run_all(executor, _merge_task, tasks, bar)
        if all(read_done(merge_dir, merge_task_id(g)) is not None for g in range(layout.num_groups)):
            # Every group is regrouped: the map's spills are a second copy of the data (hundreds
            # of GB for a full dump). Its records stay, so a resumed build knows the map is done.
            for spill in (plan.work_dir / "_map").glob("*.spill"):
                spill.unlink()
        return "_merge", shard_inputs(merge_dir, [merge_task_id(g) for g in groups], shards)

    def _todo_shards(self, plan: StagePlan) -> list[int]:
        todo = []
        for shard in range(plan.ctx.num_shards):
            record_path = plan.work_dir / "_shards" / f"part-{shard:05d}.json"
            if not record_path.exists():
                todo.append(shard)
                continue
            record = json.loads(record_path.read_text(encoding="utf-8"))
            for entry in record["tables"].values():
                path = plan.work_dir / entry["file"]
                if not path.exists() or path.stat().st_size != entry["bytes"]:
                    todo.append(shard)
                    break
        return todo

    def _run_shard_phase(
        self,
        plan: StagePlan,
        executor: Executor,
        shards: list[int],
        spill_dir: str,
        inputs: Mapping[int, Sequence[ShardInput]],
    ) -> None:
        if not shards:
            return
        stage = plan.stage
        bar = StageBar(
            f"{stage.stage_name} [{'reduce' if stage.is_map_reduce else 'shards'}]",
            total=len(shards),
            unit="shard",
            items="rows",
            enabled=self.options.progress,
        )
        meta = {
            "entbench.stage": stage.stage_name,
            "entbench.fingerprint": plan.fingerprint,
            "entbench.version": str(stage.version),
        }
        tasks = (
            (stage, plan.ctx, shard, plan.outputs, meta, spill_dir, inputs.get(shard, ())) for shard in shards
        )
        _run_all(executor, _shard_task, tasks, bar)

    def _write_manifest(self, plan: StagePlan, map_stats: Stats) -> None:
        ctx, work = plan.ctx, plan.work_dir
        records = []
        for shard in range(ctx.num_shards):
            path = work / "_shards" / f"part-{shard:05d}.json"
            records.append(json.loads(path.read_text(encoding="utf-8")))
        stats = Stats().merge(map_stats)
        for record in records:
            stats.merge(record["stats"])
        extra = plan.stage.finalize(ctx, work, stats)
        outputs: dict[str, Any] = {}
        for output in plan.outputs:
            shards = [record["tables"][output.name] for record in records]
            outputs[output.name] = {
                "schema": schema_to_json(output.schema),
                "schema_hash": schema_hash(output.schema),
                "sort_by": list(output.sort_by),
                "shard_key": plan.stage.shard_key,
                "num_shards": ctx.num_shards,
                "rows": sum(s["rows"] for s in shards),
                "shards": shards,
            }
        files = {}
        for extra_file in sorted(extra.pop("files", [])):
            path = work / extra_file
            files[extra_file] = {"bytes": path.stat().st_size, "sha256": file_sha256(path)}
        manifest = {
            "format": MANIFEST_FORMAT,
            "stage": plan.stage.stage_name,
            "layer": plan.stage.layer,
            "version": plan.stage.version,
            "fingerprint": plan.fingerprint,
            "description": plan.stage.description,
            "params": ctx.params.to_json(),
            "num_shards": ctx.num_shards,
            "inputs": {
                name: {"fingerprint": up.fingerprint, "manifest_sha256": up.manifest_sha256}
                for name, up in sorted(ctx.inputs.items())
            },
            "sources": {
                name: {"path": src.label, "size": src.size, "sha256": src.sha256}
                for name, src in sorted(ctx.sources.items())
            },
            "outputs": outputs,
            "files": files,
            "stats": {**stats.sorted(), **{k: extra[k] for k in sorted(extra)}},
            "map_stats": map_stats.sorted(),
            "shard_stats": [record["stats"] for record in records],
        }
        atomic_write_text(work / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True) + "\n")

    def _write_run_record(self, plan: StagePlan, started: float, timings: dict[str, float]) -> None:
        run = {
            "entbench": __version__,
            "python": platform.python_version(),
            "packages": {name: _package_version(name) for name in ("pyarrow", "duckdb", "msgspec", "isal")},
            "executor": self.options.executor,
            "workers": self.options.workers,
            "started_unix": round(started, 3),
            "seconds": round(time.time() - started, 3),
            **timings,
            # lets a re-run skip re-hashing files untouched since (`manifest.check_complete`)
            "file_stamps": file_stamps(plan.work_dir),
        }
        atomic_write_text(plan.work_dir / RUN_NAME, json.dumps(run, indent=2, sort_keys=True) + "\n")

    def _promote(self, plan: StagePlan) -> None:
        """Move the finished directory into place; scratch is moved aside first and deleted after."""
        trash = plan.work_dir.parent / f".trash-{plan.work_dir.name}-{os.getpid()}"
        trash.mkdir(parents=True, exist_ok=True)
        for name in ("_map", "_merge", "_shards", "_scratch"):
            path = plan.work_dir / name
            if path.exists():
                os.rename(path, trash / name)
        # Temp files of a killed earlier run (`.<name>.tmp-<pid>`, never renamed into place) must
        # not reach the output directory: they are not in the manifest and may be large.
        for tmp in plan.work_dir.rglob(".*.tmp-*"):
            tmp.unlink()
        if plan.final_dir.exists():
            shutil.rmtree(plan.final_dir)
        os.rename(plan.work_dir, plan.final_dir)
        shutil.rmtree(trash, ignore_errors=True)
        with contextlib.suppress(OSError):
            plan.work_dir.parent.rmdir()

    def _remove_stale_trash(self, plan: StagePlan) -> None:
        """Delete what a build killed while promoting this stage left aside (`.trash-*`); under the
        build lock no live build owns them. The run may otherwise find the stage up to date and
        never reach `_promote`, leaving a copy of the whole map spill behind."""
        incomplete = plan.work_dir.parent
        if not incomplete.is_dir():
            return
        for stale in incomplete.glob(f".trash-{plan.work_dir.name}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        with contextlib.suppress(OSError):
            incomplete.rmdir()

    def _demote(self, plan: StagePlan) -> None:
        """Turn a damaged complete directory back into a resumable incomplete one."""
        try:
            manifest = load_manifest(plan.final_dir)
        except UserError:
            # An unreadable manifest vouches for no shard: rebuild the stage from scratch (a user
            # error here would leave the build stuck on a damaged directory).
            shutil.rmtree(plan.final_dir)
            return
        if plan.work_dir.exists():
            shutil.rmtree(plan.work_dir)
        plan.work_dir.parent.mkdir(parents=True, exist_ok=True)
        os.rename(plan.final_dir, plan.work_dir)
        (plan.work_dir / MANIFEST_NAME).unlink()
        shard_dir = plan.work_dir / "_shards"
        shard_dir.mkdir(exist_ok=True)
        for shard in range(manifest["num_shards"]):
            tables = {name: out["shards"][shard] for name, out in manifest["outputs"].items()}
            intact = all(
                (plan.work_dir / e["file"]).exists() and file_sha256(plan.work_dir / e["file"]) == e["sha256"]
                for e in tables.values()
            )
            if intact:
                record = {"shard": shard, "tables": tables, "stats": manifest["shard_stats"][shard]}
                atomic_write_text(shard_dir / f"part-{shard:05d}.json", json.dumps(record, sort_keys=True))
            else:
                for e in tables.values():
                    with contextlib.suppress(FileNotFoundError):
                        (plan.work_dir / e["file"]).unlink()

    # --- helpers -----------------------------------------------------------------------------
    def _check_params(self, order: Sequence[Stage]) -> None:
        all_names = set(registry.stages())
        for name in self.config.params:
            if name not in all_names:
                raise UserError(
                    f"parameters given for unknown stage {name!r}; stages: {', '.join(sorted(all_names))}"
                )
        for stage in order:
            make_params(stage.params_type, stage.stage_name, self.config.params.get(stage.stage_name, {}))

    def _check_sources(self, order: Sequence[Stage]) -> None:
        for stage in order:
            for name in stage.sources:
                if name not in self.config.sources:
                    raise UserError(
                        f"stage {stage.stage_name} needs source {name!r}: pass --source {name}=PATH "
                        "or add it to [sources] in the config"
                    )
                self._source(name)

    def _source(self, name: str) -> SourceInfo:
        if name not in self._sources:
            self._sources[name] = identify_source(
                name,
                self.config.sources[name],
                self.config.source_labels.get(name, self.config.sources[name]),
                progress=self.options.progress,
            )
        return self._sources[name]

    @contextlib.contextmanager
    def _executor(self) -> Iterator[Executor]:
        executor = make_executor(
            self.options.executor, self.options.workers, self.options.dask_address, preload=(__name__,)
        )
        try:
            yield executor
        finally:
            executor.close()


def _run_all(
    executor: Executor, fn: Callable[..., Any], tasks: Iterator[tuple[Any, ...]], bar: StageBar
) -> None:
    """Run every task for its side effects (its files); the bar is closed whatever happens."""
    try:
        for _ in executor.run(fn, tasks, bar):
            pass
    finally:
        bar.close()


# --- task functions (module level: they run in worker processes) --------------------------------
def _map_task(
    stage: Stage,
    ctx: StageContext,
    task: MapTask,
    schemas: Mapping[str, pa.Schema],
    layout: ShuffleLayout,
    map_dir: str,
    *,
    progress: ProgressFn,
) -> dict[str, Any]:
    sink = FileBucketSink(Path(map_dir), task.task_id, schemas, layout)
    stats = stage.map(ctx, task, sink, progress)
    sink.close(stats)
    done = read_done(Path(map_dir), task.task_id)
    assert done is not None
    return done


def _merge_task(
    work_dir: str,
    task_ids: Sequence[str],
    group: int,
    layout: ShuffleLayout,
    schemas: Mapping[str, pa.Schema],
    *,
    progress: ProgressFn,
) -> int:
    work = Path(work_dir)
    merge_group(work / "_map", work / "_merge", task_ids, group, layout, schemas)
    progress(1, 1)
    return group


def _shard_task(
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
    work = Path(ctx.workdir)
    gathered: GatheredTables | None = None
    if stage.is_map_reduce:
        gathered = GatheredTables(work / spill_dir, inputs, stage.map_schemas(ctx.params))
        tables, stats = stage.reduce(ctx, shard, gathered)
        gathered.forget()  # `tables` holds what is still needed
    else:
        tables, stats = stage.shard(ctx, shard)
    tables = dict(tables)
    entries = {}
    rows = 0
    for output in outputs:
        # Taken out of `tables` (or read from the spills only now, for an output the reduce left
        # as it was mapped): each table is freed once written, so the shard's peak is about its
        # largest table and that table sorted, not every table twice.
        table = tables.pop(output.name, None)
        if table is None and gathered is not None and output.name in gathered:
            table = gathered.take(output.name)
        rows_out = cast_rows(output.schema.empty_table() if table is None else table, output.schema)
        del table
        order = sort_order(rows_out, output.sort_by)
        rel = table_rel_path(outputs, output.name, shard, ctx.num_shards)
        written = write_parquet(
            rows_out,
            work / rel,
            schema=output.schema,
            metadata={**meta, "entbench.table": output.name},
            sort_by=output.sort_by,
            order=order,
        )
        del rows_out, order
        entries[output.name] = {**written.to_json(), "file": rel}
        rows += written.rows
    record = {"shard": shard, "tables": entries, "stats": Stats(stats).sorted()}
    atomic_write_text(work / "_shards" / f"part-{shard:05d}.json", json.dumps(record, sort_keys=True))
    progress(1, rows)
    return shard


#: Records how a map phase spilled: its task size (`--chunk-mb`) and its shuffle layout.
MAP_LAYOUT_NAME = "_LAYOUT.json"


def _map_layout_doc(chunk_bytes: int, layout: ShuffleLayout) -> dict[str, Any]:
    return {"chunk_bytes": chunk_bytes, "shuffle": layout.to_json()}


def _forget_map_of_another_layout(
    map_dir: Path, merge_dir: Path, layout_doc: Mapping[str, Any], log: Callable[[str], None]
) -> None:
    """Start the map (and the merge pass) afresh when it was begun with another `--chunk-mb` or
    shuffle layout.

    Map task ids name where a task starts (`r<offset>`, `b<index>`), not how much it reads: a
    finished task of a run with 1 MB tasks would be taken for the first task of a resumed run with
    3 MB tasks, and the bytes in between never read; spills grouped another way would be read with
    the wrong index. Finished shards stay valid (their rows depend on neither); only the map's own
    records and spills are dropped.
    """
    marker = map_dir / MAP_LAYOUT_NAME
    begun = map_dir.exists() and any(map_dir.iterdir())
    if begun and (not marker.exists() or json.loads(marker.read_text(encoding="utf-8")) != layout_doc):
        log(f"{map_dir.parent.name}: the map was begun with another --chunk-mb or layout; running it again")
        shutil.rmtree(map_dir)
        shutil.rmtree(merge_dir, ignore_errors=True)
    map_dir.mkdir(parents=True, exist_ok=True)
    if not marker.exists():
        atomic_write_text(marker, json.dumps(layout_doc, sort_keys=True))


def _package_version(name: str) -> str:
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return "not installed"
