"""One measured build (run by `run.py` in a fresh process): per-stage seconds and peak RSS.

    python bench/pipelines/measure_build.py --out DIR --source NAME=PATH … --workers W TARGET [TARGET…]

Builds the targets in order into `DIR` (a fresh directory: every stage runs) from the given sources
and no config, as `entbench build --source …` does (every parameter its documented default), and
prints JSON: per stage, its `_RUN.json` timings and the peak RSS of each process of the build while
that stage ran.

Peak RSS per stage: a bench-only hook wraps `Builder.run`; before a stage it resets the high-water
mark (`VmHWM`) of this process and of every process below it (the executor's workers) by writing
`5` to `/proc/<pid>/clear_refs` (Linux >= 4.0), and after it reads `VmHWM` again. A reset sets the
mark to the process's RSS at that moment, so a stage's figure includes what the process still held
from the stages before it (as it would for a user); `rss_start_mib`, the largest process's RSS
right after the reset, says how much of a figure was held before the stage began. `getrusage`'s
`ru_maxrss` cannot do this: it never goes down, so it would give the largest stage so far.

Short stages are timed more than once: a stage that took under `--short-seconds` (15 s) is run again
`--short-runs` - 1 times (2) once every target is built (its directory removed, the target built
again: only that stage runs, its downstream stages are found up to date), and its `seconds` (and
its phases' seconds) are the median of its runs (`seconds_runs` lists them). A scheduling hiccup
of half a second is a third of a 1.5 s stage: the one-run figures of the small audits swung their
4x time ratio from 2.8 to 4.8 between runs on the same worlds. Its peak RSS is that of its first run,
inside the build (a rerun's process has built more by then). `--rerun STAGE` times a stage that many
times whatever its seconds: `run.py` names the stages that were short in the smallest world of the
same round, so that a time ratio compares a median of as many runs at each size (see `run.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: A stage under this many seconds is run `SHORT_RUNS` times, its median kept (see the docstring).
SHORT_SECONDS = 15.0
SHORT_RUNS = 3


def descendants(root: int) -> list[int]:
    """Pids of every live process below `root` (from each process's parent in `/proc/<pid>/stat`)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # the command name (field 2) is in parentheses and may hold spaces: fields after the last ')'
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def reset_peak(pid: int) -> None:
    """Set the process's `VmHWM` to its current RSS (a process that just ended is skipped)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_kib(pid: int) -> int:
    """`VmHWM` of a process in KiB (0 if it ended)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def install_hook(record: dict[str, dict[str, Any]]) -> None:
    """Wrap `Builder.run` so that every stage that runs leaves its peak RSS in `record`."""
    from entbench.engine import runner

    original = runner.Builder.run

    def measured_run(self: Any, plan: Any, executor: Any, *, force: bool = False) -> Any:
        me = os.getpid()
        before = (me, *descendants(me))
        for pid in before:
            reset_peak(pid)
        # Right after the reset the mark is each process's RSS: what it holds from earlier stages.
        held = max(peak_kib(pid) for pid in before)
        started = time.time()
        result = original(self, plan, executor, force=force)
        workers = [peak_kib(pid) for pid in descendants(me)]
        run_file = plan.final_dir / "_RUN.json"
        name = plan.stage.stage_name
        if name not in record and run_file.exists():
            run = json.loads(run_file.read_text())
            if run["started_unix"] >= started - 1:  # it ran now (not found up to date)
                record[name] = {
                    "dir": str(plan.final_dir),
                    "layer": plan.stage.layer,
                    "num_shards": plan.ctx.num_shards,
                    "seconds": run["seconds"],
                    **{k: v for k, v in run.items() if k.endswith("_seconds")},
                    "rss_main_mib": round(peak_kib(me) / 1024, 1),
                    "rss_workers_mib": round(max(workers, default=0) / 1024, 1),
                    "rss_start_mib": round(held / 1024, 1),
                }
        return result

    runner.Builder.run = measured_run  # type: ignore[method-assign]


def rerun(directory: Path, build: Callable[[str], None], target: str) -> dict[str, Any]:
    """Remove a built stage's directory and build its target again (only that stage runs: the
    others are complete, and a stage's completeness is its own files'); its `_RUN.json` timings."""
    shutil.rmtree(directory)
    build(target)
    run = json.loads((directory / "_RUN.json").read_text())
    return {k: v for k, v in run.items() if k.endswith("seconds")}


def main(argv: list[str] | None = None) -> int:
    """Build the targets with the hook installed; print the per-stage record as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--source", action="append", default=[], metavar="NAME=PATH", required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--short-seconds", type=float, default=SHORT_SECONDS, help="stages under this are run again"
    )
    parser.add_argument(
        "--short-runs", type=int, default=SHORT_RUNS, help="runs of a short stage (the median is kept)"
    )
    parser.add_argument(
        "--rerun",
        action="append",
        default=[],
        metavar="STAGE",
        help="a stage timed --short-runs times whatever its seconds (repeatable)",
    )
    args = parser.parse_args(argv)
    # What the `entbench` command does first (`cli.main`): huge pages for malloc (a re-execution),
    # no pandas, allocators that unmap big freed buffers.
    from entbench.engine.process import reexec_with_huge_pages, set_up_owned_process

    reexec_with_huge_pages()
    set_up_owned_process()
    from entbench import api
    from entbench.engine import registry

    record: dict[str, dict[str, Any]] = {}
    install_hook(record)
    started = time.perf_counter()
    targets: dict[str, list[str]] = {}

    def build(target: str) -> None:
        api.build(
            target,
            sources=args.source,
            out=args.out,
            workers=args.workers,
            progress=False,
            log=lambda _m: None,
            card=False,
        )

    for target in args.targets:
        build(target)
        targets[target] = [s.stage_name for s in registry.stage_order(registry.get_target(target).stages)]
    for name, stage in record.items():
        if stage["seconds"] < args.short_seconds or name in args.rerun:
            target = next(t for t, names in targets.items() if name in names)
            runs = [stage, *(rerun(Path(stage["dir"]), build, target) for _ in range(args.short_runs - 1))]
            medians = {
                key: round(statistics.median(run.get(key, 0.0) for run in runs), 3)
                for key in stage
                if key.endswith("seconds")
            }
            stage.update(medians, seconds_runs=[run["seconds"] for run in runs])  # after every median
    for stage in record.values():
        stage["rss_mib"] = max(stage["rss_main_mib"], stage["rss_workers_mib"])
        manifest = json.loads((Path(stage["dir"]) / "_MANIFEST.json").read_text())
        stage["rows"] = {
            table: sum(s["rows"] for s in doc["shards"]) for table, doc in manifest["outputs"].items()
        }
        stage["bytes"] = sum(s["bytes"] for doc in manifest["outputs"].values() for s in doc["shards"])
    json.dump(
        {"wall_seconds": round(time.perf_counter() - started, 3), "targets": targets, "stages": record},
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
