"""The Wikipedia scan benchmark (issue 4): `entbench build wikipedia` against mwxml-only parsing.

    python bench/wikipedia/run.py                     # 64 MB synthetic enwiki XML, 3 rounds; writes results/
    python bench/wikipedia/run.py --mb 16 --repeat 1 --json    # quick look, prints JSON, writes nothing

One run generates a synthetic dump (`gen_xml.py`; cached under `--work`) as plain XML, `.bz2` and
a multistream `.bz2` with its index, then times, each in a fresh subprocess, round-robin over
`--repeat` rounds (medians reported):

* `mwxml_only`: mwxml reading the plain XML, every page and revision text touched, no rendering:
  **the baseline** every ratio is taken against (issue 4 asked for mwxml; issue 22 for the scan's
  stage rate >= 0.45x of it);
* `pages_only`: the same with entbench's page reader (`ENTBENCH_XML_READER`, fast by default);
* `render_only`: the same plus entbench's renderer and row building (`PageRows`), one process,
  nothing written: the scan's per-core cost without the framework;
* `bz2_decompress`: stdlib bz2 decompression of the `.bz2` alone (the floor of a sequential bz2 scan);
* `entbench_w{1,2}_xml`, `entbench_w{1,2}_bz2`, `entbench_w2_multistream`: `entbench build wikipedia
  --source wikipedia=DUMP --out TMP --force --no-progress --workers W --chunk-mb 8`, end to end.

Rates are pages/s and MB/s of uncompressed XML; each is also given as a ratio to `mwxml_only`
measured in the same run (absolute rates drift on a shared machine; ratios hold). For entbench
runs, `stage_ratio_to_mwxml` takes the stage's own seconds (`_RUN.json`: the map and reduce work,
without the process start-up and the card) instead of the command's wall time. Every entbench
measurement must report the same page and link counts, or the run fails (`work_check`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gen_xml

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parents[1]
ENTBENCH = str(Path(sys.executable).with_name("entbench"))
MEASUREMENTS = (
    ("mwxml_only", "xml", 0),
    ("pages_only", "xml", 0),
    ("render_only", "xml", 0),
    ("bz2_decompress", "bz2", 0),
    ("entbench_w1_xml", "xml", 1),
    ("entbench_w2_xml", "xml", 2),
    ("entbench_w1_bz2", "bz2", 1),
    ("entbench_w2_bz2", "bz2", 2),
    ("entbench_w2_multistream", "multistream", 2),
)


def dumps(work: Path, mb: float, seed: int, regenerate: bool) -> tuple[dict[str, Path], dict[str, Any]]:
    """The three encodings of one generated dump (generated once, reused while the key matches)."""
    key = f"enwiki-synth-v{gen_xml.GENERATOR_VERSION}-s{seed}-{mb:g}mb"
    paths = {
        "xml": work / f"{key}.xml",
        "bz2": work / f"{key}.xml.bz2",
        "multistream": work / f"{key}-pages-articles-multistream.xml.bz2",
    }
    summary_path = work / f"{key}.summary.json"
    if regenerate or not all(p.exists() for p in paths.values()) or not summary_path.exists():
        work.mkdir(parents=True, exist_ok=True)
        summary: dict[str, Any] = {}
        for kind, compress in (("xml", "none"), ("bz2", "bz2"), ("multistream", "multistream")):
            summary = gen_xml.generate(paths[kind], mb, seed=seed, compress=compress)
        summary.pop("anchors")
        summary.pop("page_titles")
        summary_path.write_text(json.dumps(summary))
    return paths, json.loads(summary_path.read_text())


def child(name: str, dump: str) -> dict[str, Any]:
    """Run one in-process measurement (in the child) and return its counts and seconds."""
    start = time.perf_counter()
    pages = links = chars = 0
    if name == "mwxml_only":
        import mwxml

        from entbench.readers.compressed.dumps import open_decompressed

        with open_decompressed(dump, "none") as stream:
            for page in mwxml.Dump.from_file(stream):
                pages += 1
                for revision in page:
                    chars += len(revision.text or "")
    elif name == "pages_only":
        from entbench.readers.mediawiki.xml_dump import read_dump

        for page in read_dump(dump)[1]:
            pages += 1
            chars += len(page.text)
    elif name == "render_only":
        from entbench.builders.wikipedia.stages.scan import PageRows, WikipediaScanParams
        from entbench.readers.mediawiki.xml_dump import read_dump

        site, stream_pages = read_dump(dump)
        rows = PageRows(WikipediaScanParams(), site, 1)
        for seq, page in enumerate(stream_pages):
            rows.add(page, seq)
            chars += len(page.text)
        pages = rows.stats.get("pages_seen", 0)
        links = rows.stats.get("links_article", 0)
    elif name == "bz2_decompress":
        import bz2

        with bz2.open(dump, "rb") as f:
            while block := f.read(1 << 22):
                chars += len(block)
    else:
        raise SystemExit(f"unknown measurement {name}")
    return {"seconds": time.perf_counter() - start, "pages": pages, "links": links, "chars": chars}


def launch(argv: list[str]) -> tuple[float, int, str]:
    """Run argv; wall seconds, peak RSS (KiB, largest process of the tree) and stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        out.seek(0)
        text = out.read().decode()
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err}")
    # wait4's ru_maxrss covers the child and the descendants it waited for (spawned workers)
    return seconds, usage.ru_maxrss, text


def measure(name: str, dump: Path, workers: int, scratch: Path) -> dict[str, Any]:
    """One measurement in a fresh process."""
    if not workers:
        seconds, rss, text = launch(
            [sys.executable, str(Path(__file__)), "--child", name, "--dump", str(dump)]
        )
        result = json.loads(text)
        return {**result, "wall_seconds": seconds, "rss_kib": rss}
    out = scratch / name
    argv = [
        ENTBENCH,
        "build",
        "wikipedia",
        "--source",
        f"wikipedia={dump}",
        "--out",
        str(out),
        "--force",
        "--no-progress",
        "--workers",
        str(workers),
        "--chunk-mb",
        "8",
        "--param",
        "wikipedia.num_shards=4",
    ]
    seconds, rss, _ = launch(argv)
    stage = next((out / "normalized" / "wikipedia").glob("v*"))
    manifest = json.loads((stage / "_MANIFEST.json").read_text())
    run = json.loads((stage / "_RUN.json").read_text())
    stats = manifest["stats"]
    return {
        "seconds": seconds,
        "stage_seconds": run["seconds"],
        "pages": stats["pages_seen"],
        "links": stats["links_article"],
        "rss_kib": rss,
    }


def main() -> None:
    """Generate, measure round-robin, print or write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=64.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "entbench-bench-wikipedia")
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--json", action="store_true", help="print JSON, write nothing")
    parser.add_argument("--only", default="", help="comma-separated measurement names")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.dump)))
        return
    paths, summary = dumps(args.work, args.mb, args.seed, args.regenerate)
    xml_mb = paths["xml"].stat().st_size / (1 << 20)
    chosen = [m for m in MEASUREMENTS if not args.only or m[0] in args.only.split(",")]
    runs: dict[str, list[dict[str, Any]]] = {m[0]: [] for m in chosen}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for _ in range(args.repeat):
            for name, kind, workers in chosen:
                runs[name].append(measure(name, paths[kind], workers, Path(tmp)))
    results: dict[str, Any] = {}
    for name, kind, workers in chosen:
        seconds = statistics.median(r["seconds"] for r in runs[name])
        first = runs[name][0]
        stage = [r["stage_seconds"] for r in runs[name] if "stage_seconds" in r]
        results[name] = {
            "input": kind,
            "workers": workers,
            "seconds": round(seconds, 3),
            "pages_per_s": round(summary["pages"] / seconds, 1),
            "xml_mb_per_s": round(xml_mb / seconds, 2),
            "peak_rss_mib": round(max(r["rss_kib"] for r in runs[name]) / 1024, 1),
            "pages": first["pages"],
            "links": first["links"],
        }
        if stage:
            results[name]["stage_seconds"] = round(statistics.median(stage), 3)
    limit = results.get("mwxml_only", {}).get("seconds")
    for row in results.values():
        row["ratio_to_mwxml"] = round(limit / row["seconds"], 3) if limit else None
        if "stage_seconds" in row:
            row["stage_ratio_to_mwxml"] = round(limit / row["stage_seconds"], 3) if limit else None
    counted = {(r["pages"], r["links"]) for n, r in results.items() if n.startswith(("entbench", "render"))}
    expected = (summary["pages"], summary["article_links"])
    work_check = counted <= {expected}
    report = {
        "format": "entbench.bench-wikipedia/1",
        "date": datetime.date.today().isoformat(),
        "command": " ".join(["python", "bench/wikipedia/run.py", *sys.argv[1:]]),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            # other users' jobs share the cores: the 1-minute load before and after the run
            "load_average_1m": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        },
        "dump": {
            "xml_mb": round(xml_mb, 1),
            **{k: summary[k] for k in ("pages", "redirects", "article_links")},
        },
        "sizes_mb": {k: round(p.stat().st_size / (1 << 20), 1) for k, p in paths.items()},
        "repeat": args.repeat,
        "results": results,
        "work_check": {"ok": work_check, "expected_pages_links": expected, "seen": sorted(counted)},
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        out = BENCH_DIR / "results"
        out.mkdir(exist_ok=True)
        (out / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
        (out / "latest.md").write_text(markdown(report))
        print(markdown(report))
    if not work_check:
        raise SystemExit("work check failed: the measurements did not see the same pages and links")


def markdown(report: dict[str, Any]) -> str:
    """The results as a markdown table (what the README shows)."""
    dump = report["dump"]
    lines = [
        f"Synthetic enwiki dump: {dump['xml_mb']} MB XML, {dump['pages']} pages "
        f"({dump['redirects']} redirects), {dump['article_links']} article links; "
        f"medians of {report['repeat']}; `{report['command']}`; "
        f"{report['machine']['cpus']} cores, 1-min load average {report['machine']['load_average_1m']} "
        "before/after (other jobs share the cores)",
        "",
        "| measurement | input | workers | s | pages/s | MB/s XML | × mwxml-only | stage s "
        "| stage × mwxml-only | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in report["results"].items():
        lines.append(
            f"| {name} | {r['input']} | {r['workers'] or '-'} | {r['seconds']} | {r['pages_per_s']} | "
            f"{r['xml_mb_per_s']} | {r['ratio_to_mwxml']} | {r.get('stage_seconds', '-')} | "
            f"{r.get('stage_ratio_to_mwxml', '-')} | {r['peak_rss_mib']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
