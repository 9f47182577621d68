"""The knowledge-base benchmark (issue 3): the kb stages against bare DuckDB queries doing the same work.

    python bench/kb/run_kb.py                 # 340k items, 200k classes, 3 rounds; writes bench/kb/results/
    python bench/kb/run_kb.py --quick --json  # 20k items, 12k classes, 1 round; prints JSON only

1. `gen_kb.py` writes a synthetic old/new dump pair (cached under `--work`); the run checks the
   issue's minimums on it: >= 2M claims per dump, >= 300k P279 edges, depth >= 15, cycles.
2. `entbench build kb` once with that pair (scans included) to get the normalized shards.
3. Each round, interleaved, in fresh processes: (a) `entbench build kb --workers T` with the scans
   up to date and the kb stages removed, so exactly the five kb stages run, each a single DuckDB
   task with T threads (`engine.duck`: a stage's one task gets every worker's share); (b)
   `bare_kb.py`, the same work as plain DuckDB queries over the same shards, with T threads too
   (T = min(4, cores)).
4. Work check: both produce the same number of rows in every output table.

Reported per round and as medians: the kb stages' own time (sum of their `_RUN.json` seconds),
the whole `entbench build kb` process (plus startup and the up-to-date check of the scans, which
re-hashes their shards), the bare script's query time and process time, and the peak RSS of each
process (`ru_maxrss` via `os.wait4` in a small launcher, so the harness's own memory is not
inherited). The ratio the issue asks for (<= 2) is kb-stage seconds / bare query seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gen_kb

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parents[1]
ENTBENCH = Path(sys.executable).with_name("entbench")
KB_STAGES = ("internal_filter", "entity_diff", "type_closure", "coarse_types", "top_snaks")
KB_TABLES = {
    "internal_filter": ("kept", "removed"),
    "entity_diff": ("kb_entities", "id_changes"),
    "type_closure": ("type_closure",),
    "coarse_types": ("coarse_types",),
    "top_snaks": ("top_snaks", "entity_snaks"),
}
MINIMUMS = {"claims": 2_000_000, "p279_edges": 300_000, "depth": 15, "cycle_edges": 1}

#: Runs argv[2:] and writes its peak RSS in bytes to argv[1] (started with `python -S`, a few MB,
#: so the measured child does not start from the harness's RSS).
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss * 1024))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def log(msg: str) -> None:
    """Progress on stderr (stdout may carry --json)."""
    print(msg, file=sys.stderr, flush=True)


def run_measured(cmd: list[str], rss_file: Path) -> tuple[float, int, str]:
    """Wall seconds, peak RSS bytes and stdout of `cmd`; raises on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, str(rss_file), *cmd],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, int(rss_file.read_text()), proc.stdout


def prepare(work: Path, items: int, classes: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """Generate (or reuse) the dump pair; info.json is written last and marks it complete."""
    gen_dir = work / f"kb-v{gen_kb.GENERATOR_VERSION}-seed{seed}-i{items}-c{classes}"
    info_path = gen_dir / "info.json"
    if info_path.exists():
        log(f"dumps: reusing {gen_dir}")
        return gen_dir, json.loads(info_path.read_text())
    log(f"dumps: generating {items:,} items and {classes:,} classes into {gen_dir} …")
    t0 = time.perf_counter()
    info = gen_kb.generate(gen_dir, items=items, classes=classes, seed=seed)
    log(f"dumps: {sum(info.bytes.values()) / 1e6:,.0f} MB in {time.perf_counter() - t0:.0f} s")
    return gen_dir, json.loads(info_path.read_text())


def write_config(gen_dir: Path, path: Path) -> None:
    """The benchmark's build config: the pair as sources, 4 scan shards, 2 shards per kb stage."""
    lines = [
        "[sources]",
        f'wikidata_old = "{gen_dir / "old.json"}"',
        f'wikidata_new = "{gen_dir / "new.json"}"',
    ]
    for stage in ("wikidata_old", "wikidata_new"):
        lines += [f"[params.{stage}]", "num_shards = 4"]
    for stage in ("internal_filter", "entity_diff", "coarse_types", "top_snaks"):
        lines += [f"[params.{stage}]", "num_shards = 2"]
    path.write_text("\n".join(lines) + "\n")


def build_command(config: Path, out: Path, workers: int = 1) -> list[str]:
    """`entbench build kb` with `workers` workers, quiet."""
    return [
        str(ENTBENCH),
        "build",
        "kb",
        "--config",
        str(config),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--no-progress",
    ]


def stage_dirs(out: Path) -> dict[str, Path]:
    """Stage name -> directory, from `<out>/targets/kb.json`."""
    doc = json.loads((out / "targets" / "kb.json").read_text())
    return {name: out / rel for name, rel in doc["stages"].items()}


def manifest(stage_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((stage_dir / "_MANIFEST.json").read_text())
    return result


def run_seconds(stage_dir: Path) -> float:
    return float(json.loads((stage_dir / "_RUN.json").read_text())["seconds"])


def entbench_round(config: Path, out: Path, scratch: Path, workers: int) -> dict[str, Any]:
    """One `entbench build kb` with the scans up to date and the kb stages removed."""
    shutil.rmtree(out / "derived", ignore_errors=True)
    wall, rss, _ = run_measured(build_command(config, out, workers), scratch / "rss-entbench")
    dirs = stage_dirs(out)
    per_stage = {s: run_seconds(dirs[s]) for s in KB_STAGES}
    return {"wall": wall, "rss": rss, "stage_seconds": per_stage, "kb_seconds": sum(per_stage.values())}


def bare_round(dirs: dict[str, Path], out: Path, scratch: Path, threads: int) -> dict[str, Any]:
    """One run of the bare DuckDB baseline."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable, str(BENCH_DIR / "bare_kb.py"), "--old", str(dirs["wikidata_old"]),
        "--new", str(dirs["wikidata_new"]), "--out", str(out), "--threads", str(threads),
    ]  # fmt: skip
    wall, rss, stdout = run_measured(cmd, scratch / "rss-bare")
    result = json.loads(stdout)
    return {
        "wall": wall,
        "rss": rss,
        "query_seconds": result["total_seconds"],
        "steps": result["seconds"],
        **result,
    }


def check_work(out: Path, bare: dict[str, Any]) -> list[str]:
    """Rows per output table must agree between entbench and the baseline."""
    dirs = stage_dirs(out)
    problems = []
    for stage, tables in KB_TABLES.items():
        outputs = manifest(dirs[stage])["outputs"]
        for table in tables:
            if outputs[table]["rows"] != bare["rows"][table]:
                problems.append(
                    f"{table}: entbench {outputs[table]['rows']} rows, bare {bare['rows'][table]}"
                )
    return problems


def scan_facts(dirs: dict[str, Path]) -> dict[str, Any]:
    """Truthy claim rows per dump (what the kb stages read) and the scans' own times."""
    facts: dict[str, Any] = {}
    for stage in ("wikidata_old", "wikidata_new"):
        m = manifest(dirs[stage])
        facts[stage] = {
            "truthy_claims": m["outputs"]["truthy_claims"]["rows"],
            "entities": m["outputs"]["entities"]["rows"],
            "scan_seconds": run_seconds(dirs[stage]),
        }
    return facts


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def markdown(result: dict[str, Any]) -> str:
    """The README table."""
    m = result["medians"]
    info = result["dumps"]
    lines = [
        f"KB benchmark ({result['machine']['cpus']} cores, {result['rounds']} round(s), medians): "
        f"{info['items_old']:,} items, {info['classes']:,} classes, {info['p279_edges']:,} P279 edges, "
        f"depth {info['depth']}, {info['cycle_edges']} cycle edges; "
        f"{result['scans']['wikidata_old']['truthy_claims']:,} / "
        f"{result['scans']['wikidata_new']['truthy_claims']:,} truthy claims (old / new).",
        "",
        "| what | seconds | peak RSS |",
        "|---|---|---|",
        f"| entbench kb stages (sum of `_RUN.json`) | {m['entbench_kb_seconds']:.2f} | |",
        f"| `entbench build kb` process (scans up to date) | {m['entbench_wall']:.2f} | "
        f"{m['entbench_rss'] / 2**20:,.0f} MiB |",
        f"| bare DuckDB queries (same work) | {m['bare_query_seconds']:.2f} | |",
        f"| bare script process | {m['bare_wall']:.2f} | {m['bare_rss'] / 2**20:,.0f} MiB |",
        f"| **ratio** kb stages / bare queries | **{m['ratio_stages_vs_queries']:.2f}x** | |",
        f"| ratio processes | {m['ratio_wall']:.2f}x | |",
        "",
        "Per stage (entbench / bare): "
        + ", ".join(f"{s} {m['stage'][s]:.2f}/{m['bare_step'][s]:.2f}" for s in KB_STAGES),
        "",
        f"Command: `{result['command']}`",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a markdown table (or JSON) and save results unless --quick."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/entbench-bench-kb"))
    parser.add_argument("--items", type=int, default=340_000)
    parser.add_argument("--classes", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20k items, 12k classes, 1 round, no files")
    parser.add_argument("--json", action="store_true", help="print the JSON result instead of markdown")
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.classes, args.repeat = 20_000, 12_000, 1
    gen_dir, info = prepare(args.work, args.items, args.classes, args.seed)
    config = args.work / "kb-bench.toml"
    write_config(gen_dir, config)
    out = args.work / f"out-{gen_dir.name}"
    scratch = args.work / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    log("build: scans + kb stages once …")
    subprocess.run(build_command(config, out), check=True, capture_output=True)
    dirs = stage_dirs(out)
    scans = scan_facts(dirs)
    # DuckDB threads of both sides: entbench's kb stages get them from --workers (`engine.duck`).
    threads = max(1, min(4, os.cpu_count() or 1))
    rounds = []
    for r in range(args.repeat):
        order = ("entbench", "bare") if r % 2 == 0 else ("bare", "entbench")
        entry: dict[str, Any] = {}
        for which in order:
            log(f"round {r + 1}/{args.repeat}: {which} …")
            if which == "entbench":
                entry["entbench"] = entbench_round(config, out, scratch, threads)
            else:
                entry["bare"] = bare_round(dirs, args.work / "bare-out", scratch, threads)
        problems = check_work(out, entry["bare"])
        if problems:
            raise SystemExit("work check failed: " + "; ".join(problems))
        rounds.append(entry)
    ent = [r["entbench"] for r in rounds]
    bare = [r["bare"] for r in rounds]
    medians = {
        "entbench_kb_seconds": median([e["kb_seconds"] for e in ent]),
        "entbench_wall": median([e["wall"] for e in ent]),
        "entbench_rss": int(statistics.median([e["rss"] for e in ent])),
        "bare_query_seconds": median([b["query_seconds"] for b in bare]),
        "bare_wall": median([b["wall"] for b in bare]),
        "bare_rss": int(statistics.median([b["rss"] for b in bare])),
        "stage": {s: median([e["stage_seconds"][s] for e in ent]) for s in KB_STAGES},
        "bare_step": {s: median([b["steps"][s] for b in bare]) for s in KB_STAGES},
    }
    medians["ratio_stages_vs_queries"] = round(
        medians["entbench_kb_seconds"] / medians["bare_query_seconds"], 3
    )
    medians["ratio_wall"] = round(medians["entbench_wall"] / medians["bare_wall"], 3)
    claims = min(scans[s]["truthy_claims"] for s in scans)
    shortfalls = [
        f"{name} {value} < {minimum}"
        for name, value, minimum in (
            ("claims", claims, MINIMUMS["claims"]),
            ("p279_edges", info["p279_edges"], MINIMUMS["p279_edges"]),
            ("depth", info["depth"], MINIMUMS["depth"]),
            ("cycle_edges", info["cycle_edges"], MINIMUMS["cycle_edges"]),
        )
        if value < minimum
    ]
    result = {
        "format": "entbench.bench-kb/1",
        "command": "python bench/kb/run_kb.py" + (" --quick" if args.quick else f" --repeat {args.repeat}"),
        "dumps": info,
        "scans": scans,
        "rounds": len(rounds),
        "threads": threads,
        "per_round": rounds,
        "medians": medians,
        "meets_minimums": not shortfalls,
        "shortfalls": shortfalls,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    text = markdown(result)
    if not args.quick:
        results = BENCH_DIR / "results"
        results.mkdir(exist_ok=True)
        (results / "latest.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
        (results / "latest.md").write_text(text)
    print(json.dumps(result, indent=1, default=str) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
