"""The Wikidata scan benchmark (issues 2 and 8): entbench against the one-core limit and baselines.

    python bench/run.py                  # N=20000 and 10N, 3 repeats; writes bench/results/latest.{json,md}
    python bench/run.py --quick --json   # N=20000 only, 1 repeat (3 for the headline ratios' inputs);
                                         # prints the JSON, writes nothing

One run generates a synthetic dump (`gen_wikidata.py`, cached under `--work`) uncompressed and
`.gz`, then times, each in a fresh subprocess and interleaved round-robin over `--repeat` rounds:

* `decompress_gz`: isal decompression alone;
* `limit_gz` / `limit_json`: the one-core limit, isal (or plain reads) + entbench's typed partial
  decoder on every line, no output;
* `native_gz`: isal + entbench's native scanner into its column buffers, no tables (the compiled
  parse the stage uses; shown for where the stage's time goes, not a baseline);
* `stdlib_gz`: stdlib gzip + `json.loads` + truthy selection in dicts;
* `qwikidata_gz`: qwikidata's dump iterator + `get_truthy_claim_groups`;
* `entbench_w{1,2}_{gz,json}`: `entbench build wikidata --source wikidata=DUMP --out TMP --force
  --no-progress --workers W`, timed end to end and by the stage's own timer (`_RUN.json`).

Peak RSS is the measured process's `ru_maxrss` from `os.wait4` in a small launcher (the largest
single process of its tree, so for 2 workers it is the larger of the parent and a worker). The
same measurements run on a dump 10x larger (`--scale`) for the RSS growth. Every scan must do
the same work (same entity, truthy-claim, qualifier, alias and sitelink counts) or the run fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gen_wikidata
import report
from entbench.engine.process import huge_pages_environment
from machine import load_average, machine

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
LANGUAGES = ("en", "zh")  # the bundled fixture config's [params.wikidata]
SITES = ("enwiki", "zhwiki")
RESULT_FORMAT = "entbench.bench/1"
#: Every measured process, baselines included, runs with the malloc settings the `entbench` command
#: gives itself (huge pages, `process.reexec_with_huge_pages`): the limit is not handicapped.
MALLOC_ENVIRONMENT = huge_pages_environment()


@dataclass(frozen=True)
class Spec:
    """One measurement: a reference scan (`scanner`) or an entbench build (`workers`)."""

    name: str
    label: str
    input: str  # "gz" or "json"
    scanner: str | None = None
    workers: int = 0
    #: Pin the process tree to one CPU (os.sched_setaffinity), so no helper thread gets a second core.
    one_cpu: bool = False


SPECS: tuple[Spec, ...] = (
    Spec("decompress_gz", "isal decompression only", "gz", scanner="decompress"),
    Spec("limit_gz", "one-core limit: isal + typed partial parse, no output", "gz", scanner="limit"),
    Spec("limit_json", "one-core limit: reads + typed partial parse, no output", "json", scanner="limit"),
    Spec("native_gz", "entbench's native parse alone: isal + C scan to columns", "gz", scanner="native"),
    Spec("stdlib_gz", "stdlib gzip + json.loads + truthy in dicts", "gz", scanner="stdlib"),
    Spec("qwikidata_gz", "qwikidata WikidataJsonDump + get_truthy_claim_groups", "gz", scanner="qwikidata"),
    Spec("entbench_w1_gz", "entbench build wikidata, 1 worker", "gz", workers=1),
    Spec(
        "entbench_w1_gz_1cpu",
        "entbench build wikidata, 1 worker, pinned to one CPU",
        "gz",
        workers=1,
        one_cpu=True,
    ),
    Spec("entbench_w1_json", "entbench build wikidata, 1 worker", "json", workers=1),
    Spec("entbench_w2_json", "entbench build wikidata, 2 workers", "json", workers=2),
    Spec("entbench_w2_gz", "entbench build wikidata, 2 workers", "gz", workers=2),
)
QUICK_SKIP = frozenset(["entbench_w2_gz"])
#: In --quick mode the slow baselines scan only this share of the dump's entities (their rate per
#: entity does not depend on how many they scan), which keeps the quick run under a minute.
QUICK_PREFIX = {"stdlib_gz": 4, "qwikidata_gz": 4}
#: In --quick mode the inputs of the issue's one-core and qwikidata ratios run this many rounds
#: (the others one): one ~2 s scan against another, tens of seconds apart on a shared machine, was
#: mostly noise (`ratio_to_limit_one_cpu` 0.65-0.88 in three runs of one commit); their medians
#: are not (performance.md: "report medians of several runs").
QUICK_RATIO_REPEAT = 3
QUICK_REPEATED = frozenset(["limit_gz", "entbench_w1_gz", "entbench_w1_gz_1cpu", "qwikidata_gz"])
#: Each of these runs right after the measurement it is compared with, in every round, so that the
#: per-round ratios (`report._paired`) compare two scans under about the same load.
PAIRED_AFTER = {"entbench_w1_gz_1cpu": "limit_gz", "entbench_w1_gz": "qwikidata_gz"}


def run_order(specs: list[Spec]) -> list[Spec]:
    """`specs` in their order, except that each of `PAIRED_AFTER` comes right after its partner."""
    names = {spec.name for spec in specs}
    moved = {name for name, partner in PAIRED_AFTER.items() if name in names and partner in names}
    order: list[Spec] = []
    for spec in specs:
        if spec.name in moved:
            continue
        order.append(spec)
        order += [s for s in specs if s.name in moved and PAIRED_AFTER[s.name] == spec.name]
    return order


def log(msg: str) -> None:
    """Progress goes to stderr, so `--json` output stays clean."""
    print(msg, file=sys.stderr, flush=True)


# --- dumps ------------------------------------------------------------------------------------
def prepare_dump(work: Path, entities: int, seed: int, regenerate: bool) -> dict[str, Any]:
    """Generate (or reuse) `<work>/wd-…json` and its `.gz`; the stats sidecar marks completion."""
    stem = work / f"wd-synth-v{gen_wikidata.GENERATOR_VERSION}-seed{seed}-n{entities}"
    json_path, gz_path, info_path = (Path(f"{stem}{ext}") for ext in (".json", ".json.gz", ".info.json"))
    if info_path.exists() and not regenerate and json_path.exists() and gz_path.exists():
        info: dict[str, Any] = json.loads(info_path.read_text())
        if info.get("json_bytes") == json_path.stat().st_size:
            log(f"dump: reusing {json_path} ({info['json_bytes'] / 1e6:,.0f} MB)")
            return info
    work.mkdir(parents=True, exist_ok=True)
    info_path.unlink(missing_ok=True)
    log(f"dump: generating {entities:,} entities into {json_path} …")
    t0 = time.perf_counter()
    stats = gen_wikidata.generate(json_path, entities, seed, jobs=os.cpu_count() or 1)
    t1 = time.perf_counter()
    gz_bytes = gen_wikidata.gzip_file(json_path, gz_path)
    t2 = time.perf_counter()
    info = stats.to_json()
    info |= {
        "seed": seed,
        "json_path": str(json_path),
        "gz_path": str(gz_path),
        "gz_bytes": gz_bytes,
        "generate_seconds": round(t1 - t0, 2),
        "gzip_seconds": round(t2 - t1, 2),
    }
    info_path.write_text(json.dumps(info, indent=1))
    log(f"dump: {info['json_bytes'] / 1e6:,.0f} MB JSON in {t1 - t0:.1f} s, {gz_bytes / 1e6:,.0f} MB .gz")
    return info


# --- one measurement ------------------------------------------------------------------------------
#: Runs argv[2:] and writes its peak RSS (bytes) to the file argv[1]. Linux starts a child's
#: `ru_maxrss` at its parent's RSS at fork time, so the harness (which grows while it generates
#: dumps) must not fork the measured process itself: this launcher, started with `python -S`,
#: is a few MB. `ru_maxrss` is KiB on Linux, bytes on macOS.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    if os.environ.get("ENTBENCH_BENCH_ONE_CPU"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(cmd: list[str], *, one_cpu: bool = False) -> tuple[float, int, str, str, int]:
    """Run `cmd` (on one CPU if asked); returns wall s, peak RSS bytes, stdout, stderr, exit code."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        rss_file = Path(tmp) / "rss"
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-S", "-c", LAUNCHER, str(rss_file), *cmd],
            stdout=out,
            stderr=err,
            cwd=REPO,
            check=False,
            env={**os.environ, **MALLOC_ENVIRONMENT, **({"ENTBENCH_BENCH_ONE_CPU": "1"} if one_cpu else {})},
        )
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        rss = int(rss_file.read_text()) if rss_file.exists() else 0
        return wall, rss, out.read().decode(), err.read().decode(), proc.returncode


def entbench_command(dump: str, out: Path, workers: int, chunk_mb: int) -> list[str]:
    """The `entbench build wikidata` command line (the console script next to this Python)."""
    exe = Path(sys.executable).with_name("entbench")
    head = (
        [str(exe)] if exe.exists() else [sys.executable, "-c", "from entbench.cli.main import main; main()"]
    )
    return [
        *head,
        "build",
        "wikidata",
        "--source",
        f"wikidata={dump}",
        "--out",
        str(out),
        "--force",
        "--no-progress",
        "--workers",
        str(workers),
        "--chunk-mb",
        str(chunk_mb),
        "--param",
        "wikidata.num_shards=0",
        "--param",
        f"wikidata.languages={','.join(LANGUAGES)}",
        "--param",
        f"wikidata.sites={','.join(SITES)}",
    ]


def measure(
    spec: Spec, dump: dict[str, Any], out_root: Path, chunk_mb: int, max_entities: int | None = None
) -> dict[str, Any]:
    """One fresh-process run of `spec` (a baseline may stop after `max_entities`); raises on failure."""
    path = dump["gz_path"] if spec.input == "gz" else dump["json_path"]
    if spec.scanner is not None:
        cmd = [sys.executable, str(BENCH_DIR / "scanners.py"), spec.scanner, path]  # an absolute path
        cmd += ["--languages", ",".join(LANGUAGES), "--sites", ",".join(SITES)]
        if max_entities is not None:
            cmd += ["--max-entities", str(max_entities)]
    else:
        cmd = entbench_command(path, out_root / spec.name, spec.workers, chunk_mb)
    wall, rss, stdout, stderr, code = run_process(cmd, one_cpu=spec.one_cpu)
    if code != 0:
        raise RuntimeError(f"{spec.name} failed (exit {code}): {' '.join(cmd)}\n{stderr[-2000:]}")
    sample: dict[str, Any] = {"wall_seconds": wall, "peak_rss_bytes": rss}
    if max_entities is not None:
        sample["prefix_of"] = dump["entities"]
    if spec.scanner is not None:
        result = json.loads(stdout.strip().splitlines()[-1])
        sample["seconds"] = result["seconds"]
        sample["work"] = {
            k: result[k] for k in ("entities", "truthy_claims", "qualifiers", "aliases", "sitelinks")
        }
        sample["work"]["errors"] = result["errors"]
        return sample
    target = json.loads((out_root / spec.name / "targets" / "wikidata.json").read_text())
    stage_dir = out_root / spec.name / target["stages"]["wikidata"]
    run = json.loads((stage_dir / "_RUN.json").read_text())
    sample["seconds"] = run["seconds"]
    sample["stage"] = {k: run[k] for k in report.STAGE_TIMINGS if k in run}
    sample["work"] = entbench_work(stage_dir)
    return sample


def entbench_work(stage_dir: Path) -> dict[str, int]:
    """Row counts of entbench's output, comparable with the scanners' counts."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    manifest = json.loads((stage_dir / "_MANIFEST.json").read_text())
    rows = {name: sum(s["rows"] for s in out["shards"]) for name, out in manifest["outputs"].items()}
    qualifiers = 0
    for part in sorted((stage_dir / "truthy_claims").glob("*.parquet")):
        column = pq.read_table(part, columns=["qualifiers"]).column("qualifiers")
        qualifiers += int(pc.sum(pc.list_value_length(column)).as_py() or 0)
    return {
        "entities": rows["entities"],
        "truthy_claims": rows["truthy_claims"],
        "qualifiers": qualifiers,
        "aliases": rows["aliases"],
        "sitelinks": rows["sitelinks"],
        "errors": int(manifest["stats"].get("rejected_total", 0)),
    }


def check_work(size: str, samples: dict[str, list[dict[str, Any]]], entities: int) -> list[str]:
    """Every scan must see every entity; the row-building ones must agree on every count."""
    problems = []
    reference: tuple[str, dict[str, int]] | None = None
    for name, runs in samples.items():
        work = runs[-1]["work"]
        if runs[-1].get("prefix_of") is not None:
            continue  # a baseline that scanned a prefix of the dump (--quick): its rate is what counts
        if name != "decompress_gz" and work["entities"] != entities:
            problems.append(f"{size} {name}: {work['entities']} entities, the dump has {entities}")
        if work.get("errors"):
            problems.append(f"{size} {name}: {work['errors']} errors/rejects")
        if name.startswith(("decompress", "limit")):
            continue
        if reference is None:
            reference = (name, work)
        elif work != reference[1]:
            problems.append(f"{size} {name} did different work than {reference[0]}: {work} vs {reference[1]}")
    return problems


# --- the run -----------------------------------------------------------------------------------
def prewarm_source_hash(dump: dict[str, Any], out_root: Path, specs: list[Spec]) -> float:
    """Hash each input once into the build's source cache (a real first build pays this once)."""
    from entbench.engine.sources import identify_source

    start = time.perf_counter()
    for spec in specs:
        if spec.workers:
            path = dump["gz_path"] if spec.input == "gz" else dump["json_path"]
            cache = out_root / spec.name / ".cache"
            identify_source("wikidata", str(Path(path).resolve()), path, cache, progress=False)
    return time.perf_counter() - start


def run_size(
    size: str,
    dump: dict[str, Any],
    specs: list[Spec],
    repeat: int,
    work: Path,
    chunk_mb: int,
    prefixes: dict[str, int] | None = None,
    rounds: dict[str, int] | None = None,
) -> tuple[dict[str, Any], list[str], float]:
    """All measurements on one dump, round-robin over `repeat` rounds; also the source-hash time.

    `prefixes` maps a baseline to a divisor: it scans only the first entities/divisor entities.
    `rounds` gives some measurements another number of rounds than `repeat` (they run in the
    first rounds, interleaved with the others as long as those run).
    """
    prefixes = prefixes or {}
    counts = {spec.name: (rounds or {}).get(spec.name, repeat) for spec in specs}
    out_root = work / f"out-{size}"  # `work` is this run's own directory
    hash_seconds = prewarm_source_hash(dump, out_root, specs)
    samples: dict[str, list[dict[str, Any]]] = {s.name: [] for s in specs}
    total = max(counts.values(), default=0)
    for round_ in range(1, total + 1):
        for spec in run_order(specs):
            if round_ > counts[spec.name]:
                continue
            divisor = prefixes.get(spec.name)
            max_entities = dump["entities"] // divisor if divisor else None
            sample = measure(spec, dump, out_root, chunk_mb, max_entities)
            samples[spec.name].append(sample)
            log(
                f"[{size} {round_}/{counts[spec.name]}] {spec.name:17s} {sample['seconds']:8.2f} s "
                f"({sample['work']['entities'] / sample['seconds']:9,.0f} entities/s, "
                f"wall {sample['wall_seconds']:.2f} s, "
                f"peak RSS {sample['peak_rss_bytes'] / 1e6:,.0f} MB)"
            )
    summary = {name: report.summarize(runs, dump) for name, runs in samples.items()}
    return summary, check_work(size, samples, dump["entities"]), round(hash_seconds, 3)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entities", type=int, default=20000, help="entities in the main dump (N)")
    parser.add_argument("--scale", type=int, default=10, help="second dump size = scale x N (0: skip)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement at N (median)")
    parser.add_argument(
        "--repeat-big", type=int, default=1, help="runs per measurement at the 10x size (its RSS and rates)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--chunk-mb",
        type=int,
        default=16,
        help="entbench --chunk-mb (16: enough tasks per worker on a few-hundred-MB dump)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"1 repeat ({QUICK_RATIO_REPEAT} for the one-core and qwikidata ratios' inputs), "
        "no 10x dump, no 2-worker .gz run",
    )
    parser.add_argument("--json", action="store_true", help="print the result JSON on stdout")
    parser.add_argument("--results", type=Path, default=None, help="where to write latest.{json,md}")
    parser.add_argument("--no-write", action="store_true", help="write no result files")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "entbench-bench", help="dumps and outputs"
    )
    parser.add_argument("--regenerate", action="store_true", help="regenerate cached dumps")
    parser.add_argument("--keep", action="store_true", help="keep this run's entbench outputs under --work")
    parser.add_argument("--only", default="", help="comma-separated measurement names to run")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.scale = 1, 0
    if args.entities < 100 or min(args.repeat, args.repeat_big, args.chunk_mb) < 1 or args.scale < 0:
        parser.error("need --entities >= 100, --repeat/--repeat-big/--chunk-mb >= 1, --scale >= 0")
    if args.results is None and not args.quick and not args.no_write:
        args.results = BENCH_DIR / "results"
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 if the scans did not all do the same work."""
    args = parse_args(argv)
    command = " ".join(["python bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    specs = [s for s in SPECS if not (args.quick and s.name in QUICK_SKIP)]
    if args.only:
        wanted = set(args.only.split(","))
        specs = [s for s in specs if s.name in wanted]
    sizes = {"N": args.entities}
    if args.scale:
        sizes[f"{args.scale}N"] = args.entities * args.scale
    started = time.perf_counter()
    load_at_start = load_average()
    dumps = {size: prepare_dump(args.work, n, args.seed, args.regenerate) for size, n in sizes.items()}
    # Build outputs go to a directory of this run only: dumps are shared between runs, outputs
    # are not (two harnesses at once would otherwise --force-delete each other's stage dirs).
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=args.work))
    measurements: dict[str, Any] = {}
    problems: list[str] = []
    hash_seconds: dict[str, float] = {}
    for size, dump in dumps.items():
        repeat = args.repeat if size == "N" else args.repeat_big
        measurements[size], size_problems, hash_seconds[size] = run_size(
            size,
            dump,
            specs,
            repeat,
            run_dir,
            args.chunk_mb,
            QUICK_PREFIX if args.quick else None,
            dict.fromkeys(QUICK_REPEATED, QUICK_RATIO_REPEAT) if args.quick else None,
        )
        problems += size_problems
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    big = f"{args.scale}N" if args.scale else None
    ratios = report.ratios(measurements, "N", big)
    projection_size = "N"  # the medians of --repeat runs; the 10x rates are shown beside them
    scaling = ratios["scaling_2_workers"]
    result: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(load_at_start),
        "params": {
            "entities": args.entities,
            "scale": args.scale,
            "repeat": args.repeat,
            # --quick: these measurements ran QUICK_RATIO_REPEAT rounds (their "repeats" say so)
            "repeated": sorted(QUICK_REPEATED) if args.quick else None,
            "repeat_big": args.repeat_big if args.scale else None,
            "seed": args.seed,
            "chunk_mb": args.chunk_mb,
            "languages": list(LANGUAGES),
            "sites": list(SITES),
            "entbench_command": " ".join(
                ["entbench", *entbench_command("DUMP", Path("TMP"), 1, args.chunk_mb)[1:]]
            ).replace("--workers 1", "--workers W"),
        },
        "dumps": {
            size: {k: v for k, v in d.items() if not k.endswith("_path")}
            | {"source_hash_seconds": hash_seconds[size]}
            for size, d in dumps.items()
        },
        "labels": {s.name: s.label for s in specs},
        "measurements": measurements,
        "ratios": ratios,
        "targets": report.check_targets(ratios),
        "projection_size": projection_size,
        "projection": report.projection(measurements[projection_size], scaling),
        "work_check": {"ok": not problems, "problems": problems},
        "harness_seconds": round(time.perf_counter() - started, 1),
    }
    if args.results is not None and not args.no_write:
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "latest.json").write_text(json.dumps(result, indent=1) + "\n")
        (args.results / "latest.md").write_text(report.markdown(result))
        log(f"wrote {args.results / 'latest.json'} and {args.results / 'latest.md'}")
    if args.json:
        print(json.dumps(result, indent=1))
    log(
        "ratios: "
        + ", ".join(f"{k}={v}" for k, v in ratios.items() if not isinstance(v, dict) and v is not None)
    )
    for t in result["targets"]:
        verdict = "not measured" if t["met"] is None else "met" if t["met"] else "NOT met"
        log(f"  {t['ratio']} {t['target']} ({t['issue']}): {t['value']} -> {verdict}")
    for problem in problems:
        log(f"WORK MISMATCH: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
