"""The pipeline benchmark's analysis: per-stage and per-target figures, ratios, projection, markdown."""

from __future__ import annotations

import itertools
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


def steps_of(sizes: dict[str, float]) -> list[tuple[str, str]]:
    """Consecutive (smaller, larger) size labels: what every ratio compares."""
    labels = list(sizes)
    return list(itertools.pairwise(labels))


def step_name(step: tuple[str, str]) -> str:
    """A step's key in the JSON, e.g. `4S->16S`."""
    return f"{step[0]}->{step[1]}"


def analyse(
    doc: dict[str, Any], sizes: dict[str, float], languages: list[str], scans: dict[str, str]
) -> dict[str, Any]:
    """Per-stage rows, per-target sums and the issue's ratios from the median builds.

    Every ratio compares consecutive sizes (`steps_of`); the headline ratios (`time_ratio_4x_max`,
    `rss_ratio_4x_max`, …) are those of the last step, between the two largest worlds, and
    `by_step` has every step's. Scaling and the scan's rate are read at the largest size."""
    labels = list(sizes)
    big = labels[-1]
    builds = doc["builds"]
    stages: list[dict[str, Any]] = []
    targets: dict[str, Any] = {}
    for language in languages:
        runs = {(size, w): builds[f"{size}/{language}/w{w}"] for size in sizes for w in (1, 2)}
        for name, first in runs[(labels[0], 1)]["stages"].items():
            row: dict[str, Any] = {"world": language, "stage": name}
            for (size, w), run in runs.items():
                stage = run["stages"].get(name, {})
                row[f"seconds_{size}_w{w}"] = stage.get("seconds")
                row[f"rss_mib_{size}_w{w}"] = stage.get("rss_mib")
                row[f"rss_start_mib_{size}_w{w}"] = stage.get("rss_start_mib")
                row[f"shards_{size}"] = stage.get("num_shards")
            for small, large in steps_of(sizes):
                key = step_name((small, large))
                row[f"time_ratio_{key}"] = _ratio(row[f"seconds_{large}_w1"], row[f"seconds_{small}_w1"])
                for w in (1, 2):
                    row[f"rss_ratio_{key}_w{w}"] = _ratio(
                        row[f"rss_mib_{large}_w{w}"], row[f"rss_mib_{small}_w{w}"]
                    )
            for size in sizes:
                row[f"speedup_{size}"] = _ratio(row[f"seconds_{size}_w1"], row[f"seconds_{size}_w2"])
            row["rows_S"] = first.get("rows")
            stages.append(row)
        for target, names in runs[(labels[0], 1)]["targets"].items():
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
    by_step = {step_name(step): _step_ratios(stages, step) for step in steps_of(sizes)}
    last = by_step[step_name(steps_of(sizes)[-1])] if by_step else {}
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
        "step": step_name(steps_of(sizes)[-1]) if by_step else None,
        "sizes_mb": dict(sizes),
        **last,
        "peak_rss_mib_max": peak,
        "scaling_2_workers_min": min((t[f"speedup_{big}"] for t in targets.values()), default=None),
        "scaling_2_workers_by_target": {name: t[f"speedup_{big}"] for name, t in targets.items()},
        "scan_vs_mwxml": min((v for v in scan.values() if v), default=None),
        "scan_vs_mwxml_by_world": scan,
        "scan_vs_mwxml_bz2": min((v for v in scan_both_bz2.values() if v), default=None),
        "scan_bz2_vs_mwxml_plain": min((v for v in scan_mixed.values() if v), default=None),
        "by_step": by_step,
    }
    goals = TARGETS_PAST_ONE_SHARD if len(sizes) > 1 and sizes[labels[-2]] >= PAST_ONE_SHARD_MB else TARGETS
    must = {
        f"time_ratio_4x_max <= {goals['time']}": _le(ratios.get("time_ratio_4x_max"), goals["time"]),
        f"rss_ratio_4x_max <= {goals['rss']}": _le(ratios.get("rss_ratio_4x_max"), goals["rss"]),
        "peak RSS < 1 GiB": peak < 1024,
        "scaling_2_workers_min >= 1.6": _le(1.6, ratios["scaling_2_workers_min"]),
        "scan_vs_mwxml >= 0.45": _le(0.45, ratios["scan_vs_mwxml"]),
    }
    return {"stages": stages, "targets": targets, "ratios": ratios, "goals": goals, "must_show": must}


#: The goals of issue 22 (S -> 4S) and of issue 33 (a step whose smaller world is already past
#: one Wikipedia scan shard, 4S -> 16S: there every stage must be linear and memory flat).
TARGETS = {"time": 5.0, "rss": 1.3}
TARGETS_PAST_ONE_SHARD = {"time": 4.6, "rss": 1.1}
PAST_ONE_SHARD_MB = 256


def _step_ratios(stages: list[dict[str, Any]], step: tuple[str, str]) -> dict[str, Any]:
    """The largest time and RSS ratios of one step over the stages (time: one worker, stages
    taking >= 1 s at the smaller size; RSS: one and two workers)."""
    small, _large = step
    key = step_name(step)
    timed = [r for r in stages if (r[f"seconds_{small}_w1"] or 0) >= 1 and r[f"time_ratio_{key}"]]
    rss = [
        (r[f"rss_ratio_{key}_w{w}"], r["stage"]) for r in stages for w in (1, 2) if r[f"rss_ratio_{key}_w{w}"]
    ]
    downstream = [v for v, name in rss if name not in WIKIDATA_SCANS]
    worst_time = max(timed, key=lambda r: r[f"time_ratio_{key}"]) if timed else None
    worst_rss = max(rss, default=(None, None))
    return {
        "time_ratio_4x_max": worst_time[f"time_ratio_{key}"] if worst_time else None,
        "time_ratio_4x_max_stage": worst_time["stage"] if worst_time else None,
        "rss_ratio_4x_max": worst_rss[0],
        "rss_ratio_4x_max_stage": worst_rss[1],
        "rss_ratio_4x_max_downstream": max(downstream, default=None),
    }


def _le(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a <= b


def projection(doc: dict[str, Any], scan_bench: Path) -> dict[str, Any]:
    """Hours per target on full dumps for 1, 2 and 32 cores, from the stages' rates at the largest size.

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
    sizes = doc["sizes_mb"]
    labels = list(sizes)
    big = labels[-1]
    steps = steps_of(sizes)
    load = doc["machine"]["load_average_1m"]
    worlds = " and ".join(f"{sizes[label]:g} MB ({label})" for label in labels)
    r = doc["ratios"]
    goals = doc.get("goals", TARGETS)
    lines = [
        f"Worlds of {worlds} of XML each (zh: zhwiki + Wikidata pair; en: enwiki + Wikidata); medians "
        f"of {doc['repeat']}; `{doc['command']}`; {doc['machine']['cpus']} cores, 1-min load average "
        f"{load['min']}-{load['max']} (median {load['median']}; other jobs share the cores)",
        "",
        f"## Ratios ({r.get('step')}: the two largest worlds)",
        "",
        "| ratio | value | target | met |",
        "|---|---:|---|---|",
    ]
    time_goal, rss_goal = goals["time"], goals["rss"]
    for name, value, target, met in (
        (
            f"`time_ratio_4x_max` ({r.get('time_ratio_4x_max_stage')})",
            r.get("time_ratio_4x_max"),
            f"<= {time_goal:g}",
            _le(r.get("time_ratio_4x_max"), time_goal),
        ),
        (
            f"`rss_ratio_4x_max` ({r.get('rss_ratio_4x_max_stage')})",
            r.get("rss_ratio_4x_max"),
            f"<= {rss_goal:g}",
            _le(r.get("rss_ratio_4x_max"), rss_goal),
        ),
        (
            "`rss_ratio_4x_max_downstream` (without the Wikidata scans)",
            r.get("rss_ratio_4x_max_downstream"),
            f"<= {rss_goal:g}",
            _le(r.get("rss_ratio_4x_max_downstream"), rss_goal),
        ),
        ("peak RSS of any stage, MiB", r["peak_rss_mib_max"], "< 1024", r["peak_rss_mib_max"] < 1024),
        (
            f"`scaling_2_workers_min` ({big})",
            r["scaling_2_workers_min"],
            ">= 1.6",
            _le(1.6, r["scaling_2_workers_min"]),
        ),
        ("`scan_vs_mwxml` (both on plain XML)", r["scan_vs_mwxml"], ">= 0.45", _le(0.45, r["scan_vs_mwxml"])),
        ("`scan_vs_mwxml_bz2` (both on the `.bz2`)", r.get("scan_vs_mwxml_bz2"), "-", None),
        ("`scan_bz2_vs_mwxml_plain` (scan `.bz2`, mwxml XML)", r.get("scan_bz2_vs_mwxml_plain"), "-", None),
    ):
        lines.append(_row(name, value, target, _yes(met)))
    if len(steps) > 1:
        lines += ["", "Every step:", "", "| step | time ratio max | RSS ratio max |", "|---|---|---|"]
        for name, step in r.get("by_step", {}).items():
            lines.append(
                _row(
                    name,
                    f"{step['time_ratio_4x_max']} ({step['time_ratio_4x_max_stage']})",
                    f"{step['rss_ratio_4x_max']} ({step['rss_ratio_4x_max_stage']})",
                )
            )
    lines += [
        "",
        "## Targets (sum of stage seconds)",
        "",
        _row(
            "target", *(f"{size} w{w}" for size in labels for w in (1, 2)), *(f"speedup {s}" for s in labels)
        ),
        "|---|" + "---:|" * (3 * len(labels)),
    ]
    for name, t in doc["targets"].items():
        seconds = [t[f"seconds_{size}_w{w}"] for size in labels for w in (1, 2)]
        lines.append(_row(name, *seconds, *(t[f"speedup_{size}"] for size in labels)))
    lines += [
        "",
        "## Stages",
        "",
        _row(
            "world",
            "stage",
            "shards " + "/".join(labels),
            *(f"s {size} w1" for size in labels),
            *(f"{b}/{a}" for a, b in steps),
            f"s {big} w2",
            f"speedup {big}",
            *(f"RSS MiB {size} w1/w2" for size in labels),
            *(f"RSS {b}/{a} w1/w2" for a, b in steps),
            f"held at start MiB {big} w1/w2",
        ),
        "|---|---|---|" + "---:|" * (len(labels) + len(steps) + 2) + "---|" * (len(labels) + len(steps) + 1),
    ]
    for s in doc["stages"]:
        lines.append(
            _row(
                s["world"],
                s["stage"],
                "/".join(str(s[f"shards_{size}"]) for size in labels),
                *(s[f"seconds_{size}_w1"] for size in labels),
                *(s[f"time_ratio_{step_name(step)}"] for step in steps),
                s[f"seconds_{big}_w2"],
                s[f"speedup_{big}"],
                *(f"{s[f'rss_mib_{size}_w1']}/{s[f'rss_mib_{size}_w2']}" for size in labels),
                *(
                    f"{s[f'rss_ratio_{step_name(step)}_w1']}/{s[f'rss_ratio_{step_name(step)}_w2']}"
                    for step in steps
                ),
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
        f"## Projection to full dumps (hours, from the {big} rates)",
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
