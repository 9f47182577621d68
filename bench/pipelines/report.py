"""The pipeline benchmark's analysis: per-stage and per-target figures, ratios, projection, markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Full dumps the projection is for (issue 22): XML bytes and articles of the two wikis, and the
#: Wikidata dump's entities (bench/run.py's figure) and truthy statements (~1.5 billion statements
#: in 2024; truthy ones are most of them).
FULL_WIKIS = {"zh": {"xml_bytes": 9e9, "articles": 1.4e6}, "en": {"xml_bytes": 95e9, "articles": 6.8e6}}
FULL_WIKIDATA = {"entities": 110e6, "truthy_claims": 1.5e9}
WIKIDATA_SCANS = ("wikidata", "wikidata_old", "wikidata_new")
#: Stages whose work grows with the Wikidata dump rather than with the wiki.
WIKIDATA_DRIVEN = ("internal_filter", "entity_diff", "wikireading_triples")
#: bench/run.py's projection rows used for the Wikidata scans, per core count (its generator
#: writes entities of the real dump's size; this benchmark's are ~0.6 KB, so their rate here
#: says little about a real dump).
SCAN_ROWS = {1: "measured (entbench_w1_gz)", 2: "measured (entbench_w2_gz)", 32: "entbench_w1_gz_1cpu x 32"}
CORES = (1, 2, 32)


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def analyse(
    doc: dict[str, Any], sizes: dict[str, float], languages: list[str], scans: dict[str, str]
) -> dict[str, Any]:
    """Per-stage rows, per-target sums and the issue's ratios from the median builds."""
    small, big = list(sizes)
    builds = doc["builds"]
    stages: list[dict[str, Any]] = []
    targets: dict[str, Any] = {}
    for language in languages:
        runs = {(size, w): builds[f"{size}/{language}/w{w}"] for size in sizes for w in (1, 2)}
        for name, first in runs[(small, 1)]["stages"].items():
            row: dict[str, Any] = {"world": language, "stage": name}
            for (size, w), run in runs.items():
                stage = run["stages"].get(name, {})
                row[f"seconds_{size}_w{w}"] = stage.get("seconds")
                row[f"rss_mib_{size}_w{w}"] = stage.get("rss_mib")
                row[f"rss_start_mib_{size}_w{w}"] = stage.get("rss_start_mib")
                row[f"shards_{size}"] = stage.get("num_shards")
            row["time_ratio_4x"] = _ratio(row[f"seconds_{big}_w1"], row[f"seconds_{small}_w1"])
            for size in sizes:
                row[f"speedup_{size}"] = _ratio(row[f"seconds_{size}_w1"], row[f"seconds_{size}_w2"])
            for w in (1, 2):
                row[f"rss_ratio_4x_w{w}"] = _ratio(row[f"rss_mib_{big}_w{w}"], row[f"rss_mib_{small}_w{w}"])
            row["rows_S"] = first.get("rows")
            stages.append(row)
        for target, names in runs[(small, 1)]["targets"].items():
            sums = {
                f"seconds_{size}_w{w}": round(sum(run["stages"][n]["seconds"] for n in names), 3)
                for (size, w), run in runs.items()
            }
            targets[target] = {
                "world": language,
                "stages": names,
                **sums,
                **{
                    f"speedup_{size}": _ratio(sums[f"seconds_{size}_w1"], sums[f"seconds_{size}_w2"])
                    for size in sizes
                },
            }
    timed = [r for r in stages if (r[f"seconds_{small}_w1"] or 0) >= 1 and r["time_ratio_4x"]]
    rss = [r[f"rss_ratio_4x_w{w}"] for r in stages for w in (1, 2) if r[f"rss_ratio_4x_w{w}"]]
    rss_downstream = [
        r[f"rss_ratio_4x_w{w}"]
        for r in stages
        for w in (1, 2)
        if r[f"rss_ratio_4x_w{w}"] and r["stage"] not in WIKIDATA_SCANS
    ]
    peak = max((r[f"rss_mib_{size}_w{w}"] or 0) for r in stages for size in sizes for w in (1, 2))

    def scan_ratio(baseline: str, scan_seconds: Any) -> dict[str, float | None]:
        return {
            language: _ratio(doc["mwxml"][f"{big}/{language}"][baseline], scan_seconds(language))
            for language in languages
        }

    def scan_bz2(language: str) -> Any:
        return builds[f"{big}/{language}/w1"]["stages"][scans[language]]["seconds"]

    scan = scan_ratio("seconds", lambda language: doc["mwxml"][f"{big}/{language}"]["scan_plain_seconds"])
    scan_both_bz2 = scan_ratio("seconds_bz2", scan_bz2)
    scan_mixed = scan_ratio("seconds", scan_bz2)
    ratios = {
        "time_ratio_4x_max": max((r["time_ratio_4x"] for r in timed), default=None),
        "time_ratio_4x_max_stage": max(timed, key=lambda r: r["time_ratio_4x"])["stage"] if timed else None,
        "rss_ratio_4x_max": max(rss, default=None),
        "rss_ratio_4x_max_stage": max(
            (
                (r[f"rss_ratio_4x_w{w}"], r["stage"])
                for r in stages
                for w in (1, 2)
                if r[f"rss_ratio_4x_w{w}"]
            ),
            default=(None, None),
        )[1],
        "rss_ratio_4x_max_downstream": max(rss_downstream, default=None),
        "peak_rss_mib_max": peak,
        "scaling_2_workers_min": min((t[f"speedup_{big}"] for t in targets.values()), default=None),
        "scaling_2_workers_by_target": {name: t[f"speedup_{big}"] for name, t in targets.items()},
        "scan_vs_mwxml": min((v for v in scan.values() if v), default=None),
        "scan_vs_mwxml_by_world": scan,
        "scan_vs_mwxml_bz2": min((v for v in scan_both_bz2.values() if v), default=None),
        "scan_bz2_vs_mwxml_plain": min((v for v in scan_mixed.values() if v), default=None),
    }
    must = {
        "time_ratio_4x_max <= 5": _le(ratios["time_ratio_4x_max"], 5),
        "rss_ratio_4x_max <= 1.3": _le(ratios["rss_ratio_4x_max"], 1.3),
        "peak RSS < 1 GiB": peak < 1024,
        "scaling_2_workers_min >= 1.6": _le(1.6, ratios["scaling_2_workers_min"]),
        "scan_vs_mwxml >= 0.45": _le(0.45, ratios["scan_vs_mwxml"]),
    }
    return {"stages": stages, "targets": targets, "ratios": ratios, "must_show": must}


def _le(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a <= b


def projection(doc: dict[str, Any], scan_bench: Path) -> dict[str, Any]:
    """Hours per target on full dumps for 1, 2 and 32 cores, from the stages' rates at 4S.

    Each stage's time is linear in its input: the wiki's XML bytes or articles, or the Wikidata
    dump's entities or truthy statements (`WIKIDATA_DRIVEN`), whichever projects longer. 1 and 2
    cores: the measured 1- and 2-worker seconds. 32 cores: every core after the first adds what the
    second added at 2 workers, e = speedup_2 - 1 (clamped to [0, 1]): t1 / (1 + 31 e); a stage that
    did not speed up on 2 workers is projected not to speed up at all. Wikidata scans: bench/run.py's
    own projection (`bench/results/latest.json`) when it is there."""
    sizes = list(doc["sizes_mb"])
    big = sizes[-1]
    scan_rows: dict[int, float] = {}
    if scan_bench.exists():
        bench = json.loads(scan_bench.read_text())
        for cores, basis in SCAN_ROWS.items():
            for row in bench["projection"]["rows"]:
                if row["basis"].startswith(basis):
                    scan_rows[cores] = max(row["hours_by_bytes"], row["hours_by_entities"])
                    break
    tables: dict[str, Any] = {}
    for target, info in doc["targets"].items():
        language = info["world"]
        world = doc["worlds"][f"{big}/{language}"]
        run = doc["builds"][f"{big}/{language}/w1"]["stages"]
        scan_name = "wikidata_new" if "wikidata_new" in run else "wikidata"
        wikidata_rows = run[scan_name]["rows"]
        wiki_factor = max(
            FULL_WIKIS[language]["xml_bytes"] / world["xml_bytes"],
            FULL_WIKIS[language]["articles"] / world["articles"],
        )
        wikidata_factor = max(
            FULL_WIKIDATA["entities"] / wikidata_rows["entities"],
            FULL_WIKIDATA["truthy_claims"] / max(1, wikidata_rows["truthy_claims"]),
        )
        hours = dict.fromkeys(CORES, 0.0)
        per_stage: dict[str, dict[int, float]] = {}
        for name in info["stages"]:
            t1 = run[name]["seconds"]
            t2 = doc["builds"][f"{big}/{language}/w2"]["stages"][name]["seconds"]
            if name in WIKIDATA_SCANS and scan_rows:
                stage_hours = {c: scan_rows[c] for c in CORES}
            else:
                factor = wikidata_factor if name in WIKIDATA_DRIVEN or name in WIKIDATA_SCANS else wiki_factor
                e = min(1.0, max(0.0, t1 / t2 - 1)) if t2 else 0.0
                stage_hours = {
                    1: t1 * factor / 3600,
                    2: t2 * factor / 3600,
                    32: t1 * factor / (1 + 31 * e) / 3600,
                }
            per_stage[name] = {c: round(h, 3) for c, h in stage_hours.items()}
            for c in CORES:
                hours[c] += stage_hours[c]
        tables[target] = {
            "world": language,
            "full_dump": FULL_WIKIS[language],
            "wiki_factor": round(wiki_factor, 1),
            "wikidata_factor": round(wikidata_factor, 1),
            "hours": {str(c): round(h, 2) for c, h in hours.items()},
            "stages": {n: {str(c): h for c, h in v.items()} for n, v in per_stage.items()},
        }
    return {
        "model": projection.__doc__,
        "full_wikidata": FULL_WIKIDATA,
        "wikidata_scan_hours_from_bench_run": {str(c): h for c, h in scan_rows.items()} or None,
        "targets": tables,
    }


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def markdown(doc: dict[str, Any]) -> str:
    """The results as markdown (what the README quotes)."""
    small, big = list(doc["sizes_mb"])
    load = doc["machine"]["load_average_1m"]
    lines = [
        f"Worlds of {doc['sizes_mb'][small]:g} MB ({small}) and {doc['sizes_mb'][big]:g} MB ({big}) of "
        f"XML each (zh: zhwiki + Wikidata pair; en: enwiki + Wikidata); medians of {doc['repeat']}; "
        f"`{doc['command']}`; {doc['machine']['cpus']} cores, 1-min load average "
        f"{load['min']}-{load['max']} (median {load['median']}; other jobs share the cores)",
        "",
        "## Ratios (issue 22, Must show)",
        "",
        "| ratio | value | target | met |",
        "|---|---:|---|---|",
    ]
    r = doc["ratios"]
    for name, value, target, met in (
        (
            f"`time_ratio_4x_max` ({r['time_ratio_4x_max_stage']})",
            r["time_ratio_4x_max"],
            "<= 5",
            _le(r["time_ratio_4x_max"], 5),
        ),
        (
            f"`rss_ratio_4x_max` ({r['rss_ratio_4x_max_stage']})",
            r["rss_ratio_4x_max"],
            "<= 1.3",
            _le(r["rss_ratio_4x_max"], 1.3),
        ),
        (
            "`rss_ratio_4x_max_downstream` (without the Wikidata scans)",
            r["rss_ratio_4x_max_downstream"],
            "<= 1.3",
            _le(r["rss_ratio_4x_max_downstream"], 1.3),
        ),
        ("peak RSS of any stage, MiB", r["peak_rss_mib_max"], "< 1024", r["peak_rss_mib_max"] < 1024),
        (
            "`scaling_2_workers_min`",
            r["scaling_2_workers_min"],
            ">= 1.6",
            _le(1.6, r["scaling_2_workers_min"]),
        ),
        ("`scan_vs_mwxml` (both on plain XML)", r["scan_vs_mwxml"], ">= 0.45", _le(0.45, r["scan_vs_mwxml"])),
        ("`scan_vs_mwxml_bz2` (both on the `.bz2`)", r.get("scan_vs_mwxml_bz2"), "-", None),
        ("`scan_bz2_vs_mwxml_plain` (scan `.bz2`, mwxml XML)", r.get("scan_bz2_vs_mwxml_plain"), "-", None),
    ):
        lines.append(_row(name, value, target, _yes(met)))
    lines += [
        "",
        "## Targets (sum of stage seconds)",
        "",
        _row(
            "target",
            f"{small} w1",
            f"{small} w2",
            f"{big} w1",
            f"{big} w2",
            f"speedup {small}",
            f"speedup {big}",
        ),
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in doc["targets"].items():
        seconds = [t[f"seconds_{size}_w{w}"] for size in (small, big) for w in (1, 2)]
        lines.append(_row(name, *seconds, t[f"speedup_{small}"], t[f"speedup_{big}"]))
    lines += [
        "",
        "## Stages",
        "",
        _row(
            "world",
            "stage",
            f"shards {small}/{big}",
            f"s {small} w1",
            f"s {big} w1",
            f"{big}/{small}",
            f"s {big} w2",
            f"speedup {big}",
            f"RSS MiB {small} w1/w2",
            f"RSS MiB {big} w1/w2",
            f"RSS {big}/{small} w1/w2",
            f"held at start MiB {big} w1/w2",
        ),
        "|---|---|---|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for s in doc["stages"]:
        lines.append(
            _row(
                s["world"],
                s["stage"],
                f"{s[f'shards_{small}']}/{s[f'shards_{big}']}",
                s[f"seconds_{small}_w1"],
                s[f"seconds_{big}_w1"],
                s["time_ratio_4x"],
                s[f"seconds_{big}_w2"],
                s[f"speedup_{big}"],
                f"{s[f'rss_mib_{small}_w1']}/{s[f'rss_mib_{small}_w2']}",
                f"{s[f'rss_mib_{big}_w1']}/{s[f'rss_mib_{big}_w2']}",
                f"{s['rss_ratio_4x_w1']}/{s['rss_ratio_4x_w2']}",
                f"{s.get(f'rss_start_mib_{big}_w1')}/{s.get(f'rss_start_mib_{big}_w2')}",
            )
        )
    lines += [
        "",
        "## mwxml bare parse and the scans (one worker)",
        "",
        "| world | size | mwxml s XML | scan s XML | × | mwxml s `.bz2` | scan s `.bz2` | × |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, m in doc["mwxml"].items():
        size, language = key.split("/")
        stages = doc["builds"][f"{size}/{language}/w1"]["stages"]
        # the Hansel scan is `wiki` (`zhwiki` in results recorded before issue 36)
        scan = next(s for s in ("wiki", "zhwiki") if s in stages) if language == "zh" else "wikipedia"
        seconds = stages[scan]["seconds"]
        plain = m.get("scan_plain_seconds")
        lines.append(
            _row(
                language,
                size,
                m["seconds"],
                plain,
                _ratio(m["seconds"], plain),
                m.get("seconds_bz2"),
                seconds,
                _ratio(m.get("seconds_bz2"), seconds),
            )
        )
    p = doc["projection"]
    lines += [
        "",
        "## Projection to full dumps (hours)",
        "",
        "| target | full input | 1 core | 2 cores | 32 cores |",
        "|---|---|---:|---:|---:|",
    ]
    for name, t in p["targets"].items():
        wiki = "zhwiki" if t["world"] == "zh" else "enwiki"
        dump = t["full_dump"]
        full = f"{wiki} ({dump['xml_bytes'] / 1e9:g} GB XML, {dump['articles'] / 1e6:g}M articles) + Wikidata"
        lines.append(_row(name, full, t["hours"]["1"], t["hours"]["2"], t["hours"]["32"]))
    lines += ["", "Model: " + " ".join(str(p["model"]).split()), ""]
    return "\n".join(lines)


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "**no**")
