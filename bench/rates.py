"""Write `src/entbench/builders/rates.json`: the measured rates `entbench build --dry-run` estimates from.

    python bench/rates.py            # rewrite the module from the benchmarks' latest results
    python bench/rates.py --check    # exit 1 if the module differs from what the results give

Three result files, each from its own harness (their READMEs say how they were run):

* `bench/results/latest.json` (`bench/run.py`): the Wikidata scan on a dump of real-sized entities,
  1 and 2 workers from `.gz`: seconds per MB of JSON, peak RSS;
* `bench/kb/results/latest.json` (`bench/kb/run_kb.py`): the kb stages at 340k items, seconds per
  entity of the newer dump (run on 2 workers; no 1-worker time, so counted as not speeding up);
* `bench/pipelines/results/latest.json` (`bench/pipelines/run.py`): every other stage of
  hansel-train, alias-table and wikireading on generated worlds of 256 MB of XML ("4S"), 1 and 2
  workers: seconds, peak RSS and bytes written, per MB of XML, or per entity of the world's
  Wikidata dump for the stages that Wikidata drives (`WIKIDATA_DRIVEN`).

Rates are keyed by stage class (every stage of a class costs alike), the costliest measured
instance winning.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODULE = REPO / "src" / "entbench" / "builders" / "rates.json"
#: Stages whose work grows with the Wikidata dump rather than the wiki's XML (bench/pipelines/report.py).
WIKIDATA_DRIVEN = ("internal_filter", "entity_diff", "wikireading_triples")
#: The kb stages measured at scale by bench/kb (preferred over the small pipelines worlds).
KB_STAGES = ("internal_filter", "entity_diff", "type_closure", "coarse_types", "top_snaks")
#: The Wikidata scan's shards are ~4% of the JSON it reads (bench/README.md, 10N: 124 MB of 3.26 GB).
SCAN_OUTPUT_SHARE = 0.038


def _classes() -> dict[str, str]:
    sys.path.insert(0, str(REPO / "src"))
    import entbench.builders  # noqa: F401 - declares the pipelines
    from entbench.engine import registry

    return {name: type(stage).__name__ for name, stage in registry.stages().items()}


def rates() -> dict[str, dict[str, Any]]:
    """Class name -> rate fields, from the three result files."""
    classes = _classes()
    found: dict[str, dict[str, Any]] = {}

    def keep(stage: str, rate: dict[str, Any]) -> None:
        name = classes[stage]
        if name not in found or rate["seconds"] > found[name]["seconds"]:
            found[name] = rate

    scan = json.loads((HERE / "results" / "latest.json").read_text(encoding="utf-8"))["measurements"]
    w1, w2 = scan["N"]["entbench_w1_gz"], scan["N"]["entbench_w2_gz"]
    keep(
        "wikidata",
        {
            "unit": "wikidata_mb",
            "seconds": 1 / w1["json_mb_per_s"],
            "speedup_2": w2["json_mb_per_s"] / w1["json_mb_per_s"],
            "rss_mib": max(scan[size]["entbench_w1_gz"]["peak_rss_mb"] for size in ("N", "10N")) / 1.048576,
            "output_bytes": SCAN_OUTPUT_SHARE * 1e6,
            "measured": "bench/results: the Wikidata scan, .gz, real-sized entities",
        },
    )
    kb = json.loads((HERE / "kb" / "results" / "latest.json").read_text(encoding="utf-8"))
    entities = kb["scans"]["wikidata_new"]["entities"]
    kb_rss = kb["medians"]["entbench_rss"] / 2**20
    for stage in KB_STAGES:
        keep(
            stage,
            {
                "unit": "wikidata_entity",
                "seconds": kb["medians"]["stage"][stage] / entities,
                "speedup_2": 1.0,
                "rss_mib": kb_rss,
                "output_bytes": 0.0,
                "measured": "bench/kb: the kb stages at 340k items",
            },
        )
    pipelines = json.loads((HERE / "pipelines" / "results" / "latest.json").read_text(encoding="utf-8"))
    for row in pipelines["stages"]:
        stage, world = row["stage"], row["world"]
        if stage in KB_STAGES or classes[stage] == "WikidataScan":
            continue
        build = pipelines["builds"][f"4S/{world}/w1"]["stages"]
        scan_stage = "wikidata_new" if world == "zh" else "wikidata"
        if stage in WIKIDATA_DRIVEN:
            unit, amount = "wikidata_entity", build[scan_stage]["rows"]["entities"]
        else:
            unit, amount = "wiki_mb", pipelines["worlds"][f"4S/{world}"]["xml_bytes"] / 1e6
        keep(
            stage,
            {
                "unit": unit,
                "seconds": row["seconds_4S_w1"] / amount,
                "speedup_2": row["seconds_4S_w1"] / row["seconds_4S_w2"],
                "rss_mib": row["rss_mib_4S_w1"],
                "output_bytes": build[stage]["bytes"] / amount,
                "measured": "bench/pipelines: generated worlds of 256 MB of XML",
            },
        )
    return dict(sorted(found.items()))


def module_text() -> str:
    """The text of `builders/rates.json`: stage class -> rate fields (`engine.dry_run.Rate`)."""
    table = {
        name: {k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in rate.items()}
        for name, rate in rates().items()
    }
    doc = {
        "format": "entbench.rates/1",
        "about": "Measured rates of each kind of stage, for `entbench build --dry-run`; written by "
        "`python bench/rates.py` from the benchmarks' latest results, not by hand.",
        "rates": table,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    args = parser.parse_args()
    text = module_text()
    if args.check:
        current = MODULE.read_text(encoding="utf-8") if MODULE.is_file() else ""
        if current != text:
            print(f"{MODULE} is not what the results give; run python bench/rates.py", file=sys.stderr)
            return 1
        return 0
    MODULE.write_text(text, encoding="utf-8")
    print(f"wrote {MODULE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
