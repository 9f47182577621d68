"""Turn the harness's raw samples into medians, ratios, a full-dump projection and a markdown table.

Every ratio compares measurements taken in the same run on the same dump (performance.md: the
machine is shared, absolute numbers drift, ratios do not). Rates use each scan's own timer
(after imports; entbench's stage timer from `_RUN.json`), so process start-up is not counted
against any of them; end-to-end wall times are reported next to them.
"""

from __future__ import annotations

import statistics
from typing import Any

#: The full Wikidata dump the projection is for (issue 8; performance.md).
FULL_ENTITIES = 110_000_000
FULL_JSON_BYTES = 1.5e12
MB = 1_000_000

#: Issue targets: (ratio key, comparison, threshold, issue).
TARGETS: tuple[tuple[str, str, float, str], ...] = (
    ("ratio_to_limit", ">=", 0.6, "issue 2"),
    ("ratio_to_limit", ">=", 0.85, "issue 8"),
    # "on one core" read strictly: no second CPU for the background decompression thread
    ("ratio_to_limit_one_cpu", ">=", 0.85, "issue 8, pinned to one CPU"),
    ("speedup_vs_qwikidata", ">=", 7.0, "issue 8"),
    ("scaling_2_workers", ">=", 1.8, "issue 8"),
    # the same at 10x: a ~1 s stage at N pays the workers' start-up (~0.5 s of imports each)
    ("scaling_2_workers_10x", ">=", 1.8, "issue 8, at 10x"),
    ("rss_ratio_10x", "<=", 1.1, "issue 8"),
)

#: The phase timings `_RUN.json` records for a map-reduce stage.
STAGE_TIMINGS = ("seconds", "map_seconds", "shuffle_seconds", "shard_seconds")


def summarize(samples: list[dict[str, Any]], dump: dict[str, Any]) -> dict[str, Any]:
    """Medians over the repeats of one measurement on one dump."""
    seconds = [s["seconds"] for s in samples]
    walls = [s["wall_seconds"] for s in samples]
    median = statistics.median(seconds)
    # A baseline run on a prefix (--quick) scanned work["entities"] of the dump's entities; its
    # bytes are estimated in proportion.
    scanned = samples[-1].get("work", {}).get("entities") if samples[-1].get("prefix_of") else None
    share = scanned / dump["entities"] if scanned else 1.0
    out: dict[str, Any] = {
        "repeats": len(samples),
        "seconds_median": round(median, 4),
        "seconds_all": [round(x, 4) for x in seconds],
        "wall_seconds_median": round(statistics.median(walls), 4),
        "entities_per_s": round(dump["entities"] * share / median, 1) if median > 0 else None,
        "json_mb_per_s": round(dump["json_bytes"] * share / MB / median, 2) if median > 0 else None,
        "peak_rss_mb": round(max(s["peak_rss_bytes"] for s in samples) / MB, 1),
        "work": samples[-1].get("work", {}),
    }
    if scanned:
        out["scanned_share"] = round(share, 4)
    stage = [s["stage"] for s in samples if s.get("stage")]
    if stage:
        out["stage_seconds_median"] = {
            key: round(statistics.median(t[key] for t in stage), 3)
            for key in STAGE_TIMINGS
            if all(key in t for t in stage)
        }
    return out


def _rate(summary: dict[str, Any], name: str) -> float | None:
    entry = summary.get(name)
    return None if entry is None else entry.get("entities_per_s")


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else round(a / b, 3)


def _paired(summary: dict[str, Any], name: str, base: str) -> float | None:
    """The median over rounds of `name`'s rate / `base`'s rate in the same round (None with fewer
    than two rounds of both). The harness runs the two back to back in each round
    (`run.PAIRED_AFTER`), so a change of the machine's load between rounds cancels out, where the
    ratio of the two medians can take each from a different round."""
    a, b = summary.get(name), summary.get(base)
    if a is None or b is None:
        return None
    rounds = list(zip(a["seconds_all"], b["seconds_all"], strict=False))
    if len(rounds) < 2 or not all(sa > 0 and sb > 0 for sa, sb in rounds):
        return None
    # rate = scanned share of the dump's entities / seconds
    share_a, share_b = a.get("scanned_share", 1.0), b.get("scanned_share", 1.0)
    return round(statistics.median(share_a * sb / (share_b * sa) for sa, sb in rounds), 3)


def ratios(by_size: dict[str, dict[str, Any]], main: str, big: str | None) -> dict[str, Any]:
    """The headline ratios at the main size, plus the peak-RSS growth from `main` to `big`."""
    m = by_size[main]
    out: dict[str, Any] = {
        "ratio_to_limit": _ratio(_rate(m, "entbench_w1_gz"), _rate(m, "limit_gz")),
        "ratio_to_limit_one_cpu": _ratio(_rate(m, "entbench_w1_gz_1cpu"), _rate(m, "limit_gz")),
        "ratio_to_limit_uncompressed": _ratio(_rate(m, "entbench_w1_json"), _rate(m, "limit_json")),
        "speedup_vs_qwikidata": _ratio(_rate(m, "entbench_w1_gz"), _rate(m, "qwikidata_gz")),
        "speedup_vs_stdlib": _ratio(_rate(m, "entbench_w1_gz"), _rate(m, "stdlib_gz")),
        "scaling_2_workers": _ratio(_rate(m, "entbench_w2_json"), _rate(m, "entbench_w1_json")),
        "scaling_2_workers_gz": _ratio(_rate(m, "entbench_w2_gz"), _rate(m, "entbench_w1_gz")),
        "limit_vs_decompression": _ratio(_rate(m, "limit_gz"), _rate(m, "decompress_gz")),
        # entbench's compiled parse alone against the limit's msgspec parse (both after isal)
        "native_parse_vs_limit": _ratio(_rate(m, "native_gz"), _rate(m, "limit_gz")),
        "rss_ratio_10x": None,
        # the same two ratios as medians of per-round ratios (shown beside them, not the targets')
        "ratio_to_limit_one_cpu_paired": _paired(m, "entbench_w1_gz_1cpu", "limit_gz"),
        "speedup_vs_qwikidata_paired": _paired(m, "entbench_w1_gz", "qwikidata_gz"),
    }
    if "entbench_w1_gz" in m and "limit_gz" in m:
        e2e = _ratio(m["limit_gz"]["wall_seconds_median"], m["entbench_w1_gz"]["wall_seconds_median"])
        out["ratio_to_limit_end_to_end"] = e2e
    if big is not None:
        b = by_size[big]
        per = {name: _ratio(b[name]["peak_rss_mb"], m[name]["peak_rss_mb"]) for name in m if name in b}
        out["rss_ratio_10x"] = per.get("entbench_w1_gz")
        out["rss_ratio_10x_by_measurement"] = per
        out["at_10x"] = {
            k: v
            for k, v in ratios({main: b}, main, None).items()
            if k not in ("rss_ratio_10x", "rss_ratio_10x_by_measurement")
        }
        out["scaling_2_workers_10x"] = out["at_10x"].get("scaling_2_workers")
    return out


def check_targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Each issue target with the measured value and whether it is met."""
    rows = []
    for key, op, threshold, issue in TARGETS:
        value = r.get(key)
        met = None if value is None else (value >= threshold if op == ">=" else value <= threshold)
        rows.append({"ratio": key, "target": f"{op} {threshold}", "issue": issue, "value": value, "met": met})
    return rows


def projection(summary: dict[str, Any], scaling: float | None) -> dict[str, Any]:
    """Hours for the full dump (110M entities, ~1.5 TB JSON) from the measured rates.

    Measured configurations are projected linearly in bytes and in entities (the synthetic mean
    line differs from the real ~13.6 KB, so both are shown). 32-core rows multiply the measured
    one-worker rate (on one CPU: a worker of 32 has no spare core for a decompression thread) by
    32 and by the measured 2-worker parallel efficiency (`scaling_2_workers`/2), an assumption: it
    ignores disk bandwidth (stated per row) and scheduling at 32 workers.
    """
    efficiency = min(1.0, scaling / 2) if scaling else None

    def row(setup: str, basis: str, eps: float | None, mbps: float | None) -> dict[str, Any]:
        return {
            "setup": setup,
            "basis": basis,
            "entities_per_s": None if eps is None else round(eps),
            "json_mb_per_s": None if mbps is None else round(mbps, 1),
            "hours_by_bytes": None if not mbps else round(FULL_JSON_BYTES / (mbps * MB) / 3600, 2),
            "hours_by_entities": None if not eps else round(FULL_ENTITIES / eps / 3600, 2),
        }

    def measured(name: str) -> tuple[float | None, float | None]:
        entry = summary.get(name)
        if entry is None:
            return None, None
        return entry["entities_per_s"], entry["json_mb_per_s"]

    def scaled(name: str, cores: int, eff: float | None = efficiency) -> tuple[float | None, float | None]:
        eps, mbps = measured(name)
        if eps is None or mbps is None or eff is None:
            return None, None
        return eps * cores * eff, mbps * cores * eff

    rows = [
        row("1 core, .gz: the one-core limit", "measured (limit_gz)", *measured("limit_gz")),
        row("1 core, .gz: entbench", "measured (entbench_w1_gz_1cpu)", *measured("entbench_w1_gz_1cpu")),
        row(
            "1 worker, .gz: entbench, decompression in a second thread",
            "measured (entbench_w1_gz)",
            *measured("entbench_w1_gz"),
        ),
        row(
            "2 cores, uncompressed byte ranges", "measured (entbench_w2_json)", *measured("entbench_w2_json")
        ),
        row(
            "2 cores, .gz, sequential decompression + parallel parse",
            "measured (entbench_w2_gz)",
            *measured("entbench_w2_gz"),
        ),
        row(
            "32 cores, uncompressed byte ranges",
            "entbench_w1_json x 32 x measured 2-worker efficiency",
            *scaled("entbench_w1_json", 32),
        ),
        row(
            "32 cores, .gz with a rapidgzip seek index",
            "entbench_w1_gz_1cpu x 32 x measured 2-worker efficiency",
            *scaled("entbench_w1_gz_1cpu", 32),
        ),
    ]
    rows.append(
        row(
            "32 cores, uncompressed byte ranges: upper bound",
            "entbench_w1_json x 32 (perfect scaling)",
            *scaled("entbench_w1_json", 32, 1.0),
        )
    )
    no_index = scaled("entbench_w1_json", 31)
    floor = measured("decompress_gz")
    if no_index[0] is not None and floor[0] is not None and no_index[1] is not None and floor[1] is not None:
        rows.append(
            row(
                "32 cores, .gz without an index",
                "min(31 parse workers, one core of isal decompression = decompress_gz)",
                min(no_index[0], floor[0]),
                min(no_index[1], floor[1]),
            )
        )
    return {
        "full_dump": {"entities": FULL_ENTITIES, "json_bytes": FULL_JSON_BYTES},
        "parallel_efficiency": None if efficiency is None else round(efficiency, 3),
        "rows": rows,
        "notes": (
            "32-core rows assume the measured 2-worker efficiency holds at 32 workers (the upper-bound "
            "row assumes perfect scaling) and that storage delivers the JSON rate shown; .bz2 is not "
            "projected (~20x slower to decompress, performance.md)."
        ),
    }


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def markdown(result: dict[str, Any]) -> str:
    """The README table: measurements per size, ratios against the issue targets, projection."""
    machine, params = result["machine"], result["params"]
    git = machine["git"]
    lines = [
        "# entbench Wikidata scan benchmark",
        "",
        f"Command: `{result['command']}`",
        "",
        f"Machine: {machine['cpus']} CPUs ({machine['cpu_model']}), Python {machine['python']}, "
        f"load average {machine['load_average_1m_at_start']} at start, {machine['load_average_1m_at_end']} "
        f"at the end; {result['date']}. "
        f"entbench at {(git['head'] or '?')[:10]} (+{git['src_uncommitted_files']} uncommitted files "
        f"in src/entbench). Medians of {params['repeat']} run(s) at N ({params.get('repeat_big') or 0} "
        "at the 10x size), each in a fresh process, interleaved; the machine is shared, so compare ratios.",
        "",
    ]
    labels = result["labels"]
    for size, dump in result["dumps"].items():
        summary = result["measurements"][size]
        lb = dump["line_bytes"]
        lines += [
            f"## {size}: {dump['entities']:,} entities, {dump['json_bytes'] / MB:,.0f} MB JSON "
            f"({dump['gz_bytes'] / MB:,.0f} MB .gz), mean line {lb['mean'] / 1000:.1f} KB "
            f"(p50 {lb['p50'] / 1000:.1f} KB, p99 {lb['p99'] / 1000:.0f} KB, max {lb['max'] / 1000:,.0f} KB)",
            "",
            "| scan | input | median s | wall s | entities/s | MB/s of JSON | x limit | peak RSS MB |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        limit = summary.get("limit_gz", {}).get("entities_per_s")
        for name, entry in summary.items():
            eps = entry["entities_per_s"]
            x_limit = None if not limit or eps is None else eps / limit
            lines.append(
                f"| {labels[name]} | {'gz' if '_gz' in name else 'json'} | {_fmt(entry['seconds_median'])} | "
                f"{_fmt(entry['wall_seconds_median'])} | {_fmt(round(eps) if eps else None)} | "
                f"{_fmt(entry['json_mb_per_s'], 1)} | {_fmt(x_limit)} | {_fmt(entry['peak_rss_mb'], 0)} |"
            )
        lines.append("")
    r = result["ratios"]
    lines += ["## Ratios", "", "| ratio | measured | target | met |", "|---|---:|---|---|"]
    for t in result["targets"]:
        met = "—" if t["met"] is None else ("yes" if t["met"] else "**no**")
        lines.append(f"| `{t['ratio']}` | {_fmt(t['value'], 3)} | {t['target']} ({t['issue']}) | {met} |")
    for key in (
        "ratio_to_limit_one_cpu_paired",
        "speedup_vs_qwikidata_paired",
        "ratio_to_limit_uncompressed",
        "ratio_to_limit_end_to_end",
        "speedup_vs_stdlib",
    ):
        lines.append(f"| `{key}` | {_fmt(r.get(key), 3)} | — | — |")
    for key in ("scaling_2_workers_gz", "limit_vs_decompression", "native_parse_vs_limit"):
        lines.append(f"| `{key}` | {_fmt(r.get(key), 3)} | — | — |")
    p = result["projection"]
    lines += [
        "",
        f"## Projection: full dump ({p['full_dump']['entities'] / 1e6:.0f}M entities, "
        f"{p['full_dump']['json_bytes'] / 1e12:.1f} TB JSON), from the {result['projection_size']} rates",
        "",
        "| setup | basis | entities/s | MB/s of JSON | hours (by bytes) | hours (by entities) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in p["rows"]:
        lines.append(
            f"| {row['setup']} | {row['basis']} | {_fmt(row['entities_per_s'])} | "
            f"{_fmt(row['json_mb_per_s'], 1)} | {_fmt(row['hours_by_bytes'])} | "
            f"{_fmt(row['hours_by_entities'])} |"
        )
    lines += ["", p["notes"], ""]
    return "\n".join(lines)


def rerender(result: dict[str, Any]) -> dict[str, Any]:
    """Recompute ratios, targets and projection from a result's measurements (after a report change)."""
    measurements = result["measurements"]
    big = next((size for size in measurements if size != "N"), None)
    result["ratios"] = ratios(measurements, "N", big)
    result["targets"] = check_targets(result["ratios"])
    result["projection"] = projection(
        measurements[result["projection_size"]], result["ratios"]["scaling_2_workers"]
    )
    return result


def main(argv: list[str] | None = None) -> int:
    """`python bench/report.py RESULT.json`: re-render RESULT.json and the .md beside it."""
    import json
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python bench/report.py bench/results/latest.json", file=sys.stderr)
        return 2
    path = Path(args[0])
    result = rerender(json.loads(path.read_text()))
    path.write_text(json.dumps(result, indent=1) + "\n")
    path.with_suffix(".md").write_text(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
