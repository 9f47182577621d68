"""The `.incomplete` life of a stage's work directory: what is left to do, the records that say what
is done, the manifest and run record written at the end, and the move into place.

    <out>/<layer>/<stage>/.incomplete/v<version>-<fp12>/   while building (`runner` module docstring)
    <out>/<layer>/<stage>/v<version>-<fp12>/               complete: renamed into place last

Every file is written to a temp name and renamed and every record after what it records, so a
killed build leaves nothing that looks complete; `demote` turns a damaged complete directory back
into an incomplete one whose intact shards are kept.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from entbench import __version__
from entbench.engine.manifest import (
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    RUN_NAME,
    file_stamps,
    load_manifest,
)
from entbench.engine.plan import StagePlan
from entbench.engine.shards import atomic_write_text, file_sha256
from entbench.engine.shuffle import ShuffleLayout, read_done
from entbench.engine.stage import side_file_name
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.schemas.base import schema_hash, schema_to_json

#: Where a stage's phases (`Stage.phases`) build, inside its work directory.
PHASES_DIR = "_phases"


def todo_shards(plan: StagePlan) -> list[int]:
    """The shards still to build: no record, or a recorded file missing or of another size."""
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


def map_records_complete(plan: StagePlan) -> bool:
    """Whether the map phase finished (its task list, `_TASKS.json`, is written last)."""
    return (plan.work_dir / "_map" / "_TASKS.json").exists()


def load_map_records(plan: StagePlan) -> tuple[Stats, list[str]]:
    """The summed stats and the task ids of a finished map phase, from its records."""
    map_dir = plan.work_dir / "_map"
    task_ids: list[str] = json.loads((map_dir / "_TASKS.json").read_text())
    stats = Stats()
    for task_id in task_ids:
        done = read_done(map_dir, task_id)
        if done is None:
            raise RuntimeError(f"map record {task_id} missing")
        stats.merge(done["stats"])
    return stats, task_ids


def write_manifest(plan: StagePlan, map_stats: Stats) -> None:
    """Write `_MANIFEST.json` from the shard records (after `finalize`, which may add files)."""
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
    declared = [side_file_name(name) for name in plan.stage.side_files]
    unwritten = [name for name in declared if not (work / name).is_file()]
    if unwritten:
        raise RuntimeError(f"{plan.stage.stage_name} declares side files it did not write: {unwritten}")
    files = {}
    for extra_file in sorted({*extra.pop("files", []), *declared}):
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
            | ({"limit": src.limit} if src.limit else {})
            for name, src in sorted(ctx.sources.items())
        },
        "outputs": outputs,
        "files": files,
        "stats": {**stats.sorted(), **{k: extra[k] for k in sorted(extra)}},
        "map_stats": map_stats.sorted(),
        "shard_stats": [record["stats"] for record in records],
    }
    atomic_write_text(work / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def write_run_record(plan: StagePlan, started: float, timings: dict[str, float]) -> None:
    """Write `_RUN.json`: tool versions, executor, timings and file stamps (outside the fingerprint)."""
    seconds = round(time.time() - started, 3)  # the stage's, not the version lookups' below
    run = {
        "entbench": __version__,
        "python": platform.python_version(),
        "packages": {name: _package_version(name) for name in ("pyarrow", "duckdb", "msgspec", "isal")},
        "executor": plan.ctx.options.executor,
        "workers": plan.ctx.options.workers,
        "started_unix": round(started, 3),
        "seconds": seconds,
        **timings,
        # lets a re-run skip re-hashing files untouched since (`manifest.check_complete`)
        "file_stamps": file_stamps(plan.work_dir),
    }
    atomic_write_text(plan.work_dir / RUN_NAME, json.dumps(run, indent=2, sort_keys=True) + "\n")


def promote(plan: StagePlan) -> None:
    """Move the finished directory into place; scratch is moved aside first and deleted after."""
    trash = plan.work_dir.parent / f".trash-{plan.work_dir.name}-{os.getpid()}"
    trash.mkdir(parents=True, exist_ok=True)
    for name in ("_map", "_merge", "_shards", "_scratch", PHASES_DIR):
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


def remove_stale_trash(plan: StagePlan) -> None:
    """Delete what a build killed while promoting this stage left aside (`.trash-*`); under the
    build lock no live build owns them. The run may otherwise find the stage up to date and
    never reach `promote`, leaving a copy of the whole map spill behind."""
    incomplete = plan.work_dir.parent
    if not incomplete.is_dir():
        return
    for stale in incomplete.glob(f".trash-{plan.work_dir.name}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    with contextlib.suppress(OSError):
        incomplete.rmdir()


def demote(plan: StagePlan) -> None:
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


#: Records how a map phase spilled: its task size (`--chunk-mb`) and its shuffle layout.
MAP_LAYOUT_NAME = "_LAYOUT.json"


def map_layout_doc(chunk_bytes: int, layout: ShuffleLayout) -> dict[str, Any]:
    """What `MAP_LAYOUT_NAME` records of a map phase: its task size and its shuffle layout."""
    return {"chunk_bytes": chunk_bytes, "shuffle": layout.to_json()}


def forget_map_of_another_layout(
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


@functools.cache
def _package_version(name: str) -> str:
    # Imported here: ~0.04 s of CPU that a process building no stage (an up-to-date build, a
    # pool worker) need not pay; once per process (a build of many stages asks for each).
    from importlib import metadata as importlib_metadata

    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return "not installed"
