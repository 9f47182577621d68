"""Runs stages: fingerprint, skip what is complete, resume what is not, write shards and manifests.

Layout of one stage's output (`<out>/<layer>/<stage>/`):

    v<version>-<fp12>/                    complete: renamed into place last
        part-SSSSS-of-NNNNN.parquet       (or <table>/part-… when a stage has several tables)
        _MANIFEST.json  _RUN.json  [extra files such as _rejects.jsonl]
    .incomplete/v<version>-<fp12>/        while building
        _map/<task>.spill, <task>.done.json              map spill + per-task completion marker
        _map/_TASKS.json, _LAYOUT.json                   the map's task ids; its task size and layout
        _merge/g<group>.spill, .done.json                past 64 shards: the spills regrouped by shard
        _shards/part-SSSSS.json                          per-shard completion marker (rows, sha256, stats)
        _scratch/                                        the stage's own temporary files
        _phases/<layer>/<phase>/v…/                      its phases (`Stage.phases`), each laid out so

Every file is written to a temp name and renamed; a marker is written only after what it marks.
So a killed build leaves nothing that looks complete, and a re-run redoes exactly the unfinished
tasks. With a store (`--out s3://…`, `engine.store`) that directory is the work directory and each
complete stage is then published to the store, its manifest last.

Here: the order of a build (plan, skip, map, shuffle, shards, promote, publish). A stage's plan and
fingerprint are `engine.plan`'s; the functions workers run are `engine.tasks`'; the work
directory's records, manifest and promotion are `engine.workdir`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from entbench.engine import registry, tasks, workdir
from entbench.engine.build_out import VARIANTS_DIR, build_lock, record_variant
from entbench.engine.config import BuildConfig, resolve_aliases
from entbench.engine.duck import release_idle_database
from entbench.engine.executors import Executor, make_executor
from entbench.engine.executors.base import trim_heap
from entbench.engine.manifest import MANIFEST_NAME, check_complete, upstream_from_manifest
from entbench.engine.plan import StagePlan, plan_stage
from entbench.engine.process import raise_lost_interrupt
from entbench.engine.progress import StageBar
from entbench.engine.shards import atomic_write_text
from entbench.engine.shuffle import (
    ShardInput,
    ShuffleLayout,
    merge_task_id,
    read_done,
    shard_inputs,
    shuffle_layout,
)
from entbench.engine.sources import LIMITED_DIR, check_sources, human_bytes, identify_source, limit_sources
from entbench.engine.stage import BuildOptions, SourceInfo, Stage, UpstreamOutput
from entbench.engine.stats import Stats
from entbench.engine.store import Store
from entbench.errors import UserError


class Builder:
    """Builds targets into an output directory."""

    def __init__(
        self,
        out: str | Path,
        config: BuildConfig,
        options: BuildOptions,
        log: Any = None,
        store: Store | None = None,
        limit: int | None = None,
    ) -> None:
        """`out` is the build directory; with `store` it is the work directory whose complete
        stages are published to the store (and found there by later builds). `limit`: a trial
        build from the first `limit` entities, pages or lines of each source (`build --limit`)."""
        self.out = Path(out)
        self.config = config
        self.options = options
        self.store = store
        self.limit = limit
        #: whether this build ran any stage (rather than finding every one up to date)
        self.built_any = False
        self._log = log or (lambda msg: print(msg, file=sys.stderr))
        self._sources: dict[str, SourceInfo] = {}
        # stages found complete in the store but not (yet) here: resolved local dir -> its path in the store
        self._only_in_store: dict[str, str] = {}

    # --- public ------------------------------------------------------------------------------
    def build(self, target: str, *, force: bool = False) -> dict[str, Path]:
        """Build every stage of `target` in DAG order; returns stage name -> output directory."""
        # A local pool starts when the first stage to run is found (`run`), not here: a build
        # whose stages are all done starts none. Its workers' start-up (about half a second
        # each) then overlaps that stage's own set-up instead of delaying its first map tasks.
        if self.store is not None:
            self._log(f"building in {self.out}, publishing to {self.store.url}")
        with self._executor() as executor:
            registry.configure_sources(self.config.sources)
            spec = registry.get_target(target)
            order = registry.stage_order(spec.stages)
            executor.prepare(sorted({type(stage).__module__ for stage in order}))
            self.config = resolve_aliases(self.config, registry.aliases())
            self._check_params(order)
            self._check_sources(target, order)
            self.out.mkdir(parents=True, exist_ok=True)
            dirs = self._build_stages(order, executor, force=force)
        target_doc = {
            "target": target,
            "stages": {name: os.path.relpath(path, self.out) for name, path in sorted(dirs.items())},
        }
        listing = self.out / "targets" / f"{target}.json"
        text = json.dumps(target_doc, indent=2) + "\n"
        if not (listing.is_file() and listing.read_text(encoding="utf-8") == text):  # a no-op writes nothing
            self._record_variants(target, listing, text)
            atomic_write_text(listing, text)
        if self.store is not None:
            self.store.publish_file(listing, f"targets/{target}.json")
        return dirs

    def _record_variants(self, target: str, listing: Path, text: str) -> None:
        """Keep the listing about to be replaced as a variant (with the new one), and say which one
        the commands reading this build now read: a variant built into the same --out silently
        replaced what `summary`, the card and `export` showed."""
        new = record_variant(self.out, target, text)
        if self.store is not None:
            rel = f"{VARIANTS_DIR}/{target}/{new}.json"
            self.store.publish_file(self.out / rel, rel)
        if not listing.is_file():
            return
        try:
            old = record_variant(self.out, target, listing.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # an unreadable listing is replaced, as before
        if old != new:
            self._log(
                f"{target}: {self.out} held variant {old} of {target}; summary, card and export now "
                f"read this build, variant {new} (`--variant {old}` reads the other)"
            )

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
                raise_lost_interrupt()
                upstream = {name: results[name] for name in stage.inputs}
                plan = self.plan(stage, upstream)
                results[stage.stage_name] = self.run(plan, executor, force=force)
                dirs[stage.stage_name] = plan.final_dir
        return dirs

    def plan(self, stage: Stage, upstream: Mapping[str, UpstreamOutput]) -> StagePlan:
        """Resolve parameters and shard count, compute the fingerprint and the output directories."""
        params = self.config.params_for(stage.params_type, stage.stage_name)
        sources = {name: self._source(name) for name in stage.sources}
        return plan_stage(stage, params, sources, upstream, self.out, self.options)

    def run(self, plan: StagePlan, executor: Executor, *, force: bool = False) -> UpstreamOutput:
        """Run one planned stage, unless an identical complete output already exists."""
        name = plan.stage.stage_name
        workdir.remove_stale_trash(plan)
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
                workdir.demote(plan)
        elif force and plan.work_dir.exists():
            shutil.rmtree(plan.work_dir)
        self.built_any = True
        executor.start()
        self.fetch_from_store([Path(up.directory) for up in plan.ctx.inputs.values()])
        self._execute(plan, executor)
        # What the stage's inline tasks (one worker) left resident goes before the next stage starts
        # on top of it: the idle DuckDB database of its queries, then the heap pages that freed.
        # Measured after every stage of one-worker Hansel builds (harness zh worlds): `internal_filter`
        # started at 200 / 206 MiB at 256 MB / 1 GB instead of 204 / 222 (the trim alone: 205 / 217).
        release_idle_database()
        trim_heap()
        self._log(f"{name}: wrote {plan.final_dir}")
        self._publish(plan, replace=True)
        return upstream_from_manifest(plan.final_dir)

    def _execute(self, plan: StagePlan, executor: Executor) -> None:
        """Run (or resume) a stage whose output is not complete: its phases, map, shuffle and
        shards, then its manifest and run record, and move it into place."""
        started = time.time()
        timings: dict[str, float] = {}
        plan.work_dir.mkdir(parents=True, exist_ok=True)
        manifest_path = plan.work_dir / MANIFEST_NAME
        if not (manifest_path.exists() and not check_complete(plan.work_dir)):
            t0 = time.monotonic()
            plan = self._run_phases(plan, executor)
            if plan.ctx.phases:
                timings["phases_seconds"] = round(time.monotonic() - t0, 3)
            map_stats = Stats()
            todo_shards = workdir.todo_shards(plan)
            spill_dir, inputs = "", dict[int, list[ShardInput]]()
            if plan.stage.is_map_reduce:
                if todo_shards or not workdir.map_records_complete(plan):
                    self._warn_if_short_of_scratch(plan)
                    self._warn_if_short_of_memory(plan)
                    t0 = time.monotonic()
                    map_stats, task_ids = self._run_map_phase(plan, executor)
                    timings["map_seconds"] = round(time.monotonic() - t0, 3)
                else:
                    map_stats, task_ids = workdir.load_map_records(plan)
                if todo_shards:
                    t0 = time.monotonic()
                    spill_dir, inputs = self._shuffle(plan, executor, task_ids, todo_shards)
                    timings["shuffle_seconds"] = round(time.monotonic() - t0, 3)
            t0 = time.monotonic()
            self._run_shard_phase(plan, executor, todo_shards, spill_dir, inputs)
            timings["shard_seconds"] = round(time.monotonic() - t0, 3)
            workdir.write_manifest(plan, map_stats)
        workdir.write_run_record(plan, started, timings)
        workdir.promote(plan)

    def _run_phases(self, plan: StagePlan, executor: Executor) -> StagePlan:
        """Run the stage's phases in order (`Stage.phases`, asked again after each one), each
        skipped if already complete; the plan with them in its context."""
        done: dict[str, UpstreamOutput] = {}
        while True:
            ctx = dataclasses.replace(plan.ctx, phases=dict(done))
            todo = [
                (phase, params) for phase, params in plan.stage.phases(ctx) if phase.stage_name not in done
            ]
            if not todo:
                break
            phase, params = todo[0]
            upstream = {**plan.ctx.inputs, **done}
            root = plan.work_dir / workdir.PHASES_DIR
            sub = plan_stage(phase, params, plan.ctx.sources, upstream, root, self.options)
            if not (sub.final_dir.exists() and not check_complete(sub.final_dir)):
                self._execute(sub, executor)
            done[phase.stage_name] = upstream_from_manifest(sub.final_dir)
        if not done:
            return plan
        return dataclasses.replace(plan, ctx=dataclasses.replace(plan.ctx, phases=done))

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
        workdir.forget_map_of_another_layout(
            map_dir,
            plan.work_dir / "_merge",
            workdir.map_layout_doc(ctx.options.chunk_bytes, layout),
            self._log,
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
                    # A record of other work under this id (a plan cut differently) is not this
                    # task's: it runs again and overwrites it.
                    if done is not None and done.get("task_digest") == task.digest():
                        stats.merge(done["stats"])
                        stage.on_map_done(ctx, done, bar.update)
                        continue
                    yield (stage, ctx, task, schemas, layout, str(map_dir))
                    # Not held while the planner reads the next task: a block task's buffer is then
                    # free for the decompressor to fill again (`iter_blocks`), not a fresh 16-64 MB.
                    del task
            finally:
                # A planner may hold a decompressor with threads (rapidgzip): stop it now, not at
                # interpreter exit, where a running decoder thread aborts the process.
                close = getattr(planned, "close", None)
                if close is not None:
                    close()

        pending_tasks = pending()
        try:
            for done in executor.run(tasks.map_task, pending_tasks, bar):
                stats.merge(done["stats"])
                stage.check_map_stats(ctx, stats, map_dir)
        finally:
            pending_tasks.close()
            bar.close()
        if len(set(task_ids)) != len(task_ids):
            raise RuntimeError(f"{stage.stage_name}: map task ids are not unique")
        stage.check_map_stats(ctx, stats, map_dir)
        atomic_write_text(map_dir / "_TASKS.json", json.dumps(task_ids))
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

    def _warn_if_short_of_memory(self, plan: StagePlan) -> None:
        """Say up front when every worker holding the stage's shared table will likely not fit in
        memory: the system's out-of-memory killer ends a worker without a word, hours in."""
        each = plan.stage.worker_memory_estimate(plan.ctx)
        available = available_memory_bytes()
        if not each or available is None:
            return
        workers = self.options.workers
        if each * workers > available:
            fits = max(1, available // each)
            self._log(
                f"{plan.stage.stage_name}: warning: each worker holds ~{each / 1e9:,.1f} GB for this stage; "
                f"{workers} worker(s) need ~{each * workers / 1e9:,.1f} GB and {available / 1e9:,.1f} GB "
                f"are available: the system may kill workers for memory"
                + (f"; --workers {fits} would fit" if fits < workers else "")
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
            merge_args = ((str(plan.work_dir), list(task_ids), g, layout, schemas) for g in todo)
            _run_all(executor, tasks.merge_task, merge_args, bar)
        if all(read_done(merge_dir, merge_task_id(g)) is not None for g in range(layout.num_groups)):
            # Every group is regrouped: the map's spills are a second copy of the data (hundreds
            # of GB for a full dump). Its records stay, so a resumed build knows the map is done.
            for spill in (plan.work_dir / "_map").glob("*.spill"):
                spill.unlink()
        return "_merge", shard_inputs(merge_dir, [merge_task_id(g) for g in groups], shards)

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
        shard_args = (
            (stage, plan.ctx, shard, plan.outputs, meta, spill_dir, inputs.get(shard, ())) for shard in shards
        )
        _run_all(executor, tasks.shard_task, shard_args, bar)

    # --- helpers -----------------------------------------------------------------------------
    def _check_params(self, order: Sequence[Stage]) -> None:
        all_names = registry.stage_names()
        for name in self.config.params:
            if name not in all_names:
                raise UserError(
                    f"parameters given for unknown stage {name!r}; stages: {', '.join(sorted(all_names))}"
                )
        for stage in order:
            self.config.params_for(stage.params_type, stage.stage_name)

    def _check_sources(self, target: str, order: Sequence[Stage]) -> None:
        """Every source the target reads is given, every `--source` is one it reads; then each is
        identified (size, sha256) and named on stderr before any work starts."""
        for name in check_sources(target, order, self.config, registry.source_names, registry.aliases()):
            self._log(f"source {name}: not read by target {target} (given with --source, left alone)")
        if self.limit is not None:
            self.config = limit_sources(order, self.config, self.limit, self.out / LIMITED_DIR, self._log)
        for name in dict.fromkeys(name for stage in order for name in stage.sources):
            info = self._source(name)
            self._log(f"source {name}: {info.path} ({human_bytes(info.size)})")

    def _source(self, name: str) -> SourceInfo:
        if name not in self._sources:
            self._sources[name] = identify_source(
                name,
                self.config.sources[name],
                self.config.source_labels.get(name, self.config.sources[name]),
                progress=self.options.progress,
                limit=self.config.source_limits.get(name, ""),
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
    executor: Executor, fn: Callable[..., Any], args: Iterator[tuple[Any, ...]], bar: StageBar
) -> None:
    """Run every task for its side effects (its files); the bar is closed whatever happens."""
    try:
        for _ in executor.run(fn, args, bar):
            pass
    finally:
        bar.close()


def available_memory_bytes() -> int | None:
    """Memory the system can give without swapping (`MemAvailable`, Linux), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
