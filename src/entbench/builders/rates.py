"""Measured rates of each kind of stage, for `entbench build --dry-run` (`engine.dry_run`).

Written by `python bench/rates.py` from the benchmarks' latest results (that script says which
harness measured what); do not edit by hand. Keyed by stage class; a class missing here has no
measured rate and the dry run says so."""

from __future__ import annotations

from entbench.engine.dry_run import Rate

MEASURED_0 = "bench/kb: the kb stages at 340k items"
MEASURED_1 = "bench/pipelines: generated worlds of 256 MB of XML"
MEASURED_2 = "bench/results: the Wikidata scan, .gz, real-sized entities"

RATES: dict[str, Rate] = {
    "AliasTable": Rate(
        unit="wiki_mb",
        seconds=0.0162,
        speedup_2=1.9,
        rss_mib=269.3,
        output_bytes=1.523e04,
        measured=MEASURED_1,
    ),
    "CoarseTypes": Rate(
        unit="wikidata_entity",
        seconds=3.423e-06,
        speedup_2=1,
        rss_mib=458.5,
        output_bytes=0,
        measured=MEASURED_0,
    ),
    "EntityDiff": Rate(
        unit="wikidata_entity",
        seconds=3.253e-06,
        speedup_2=1,
        rss_mib=458.5,
        output_bytes=0,
        measured=MEASURED_0,
    ),
    "HanselLeakageAudit": Rate(
        unit="wiki_mb",
        seconds=0.009734,
        speedup_2=1.72,
        rss_mib=228,
        output_bytes=3756,
        measured=MEASURED_1,
    ),
    "HanselLinks": Rate(
        unit="wiki_mb",
        seconds=0.01726,
        speedup_2=1.96,
        rss_mib=314.7,
        output_bytes=7.531e04,
        measured=MEASURED_1,
    ),
    "HanselTrain": Rate(
        unit="wiki_mb",
        seconds=0.02597,
        speedup_2=1.89,
        rss_mib=344.9,
        output_bytes=2.463e05,
        measured=MEASURED_1,
    ),
    "InternalFilter": Rate(
        unit="wikidata_entity",
        seconds=4.809e-06,
        speedup_2=1,
        rss_mib=458.5,
        output_bytes=0,
        measured=MEASURED_0,
    ),
    "MemAuditStage": Rate(
        unit="wiki_mb",
        seconds=0.005115,
        speedup_2=1.54,
        rss_mib=233.6,
        output_bytes=2179,
        measured=MEASURED_1,
    ),
    "MentionStats": Rate(
        unit="wiki_mb",
        seconds=0.06674,
        speedup_2=1.81,
        rss_mib=314.9,
        output_bytes=1.216e04,
        measured=MEASURED_1,
    ),
    "TitleQid": Rate(
        unit="wiki_mb",
        seconds=0.002045,
        speedup_2=1.08,
        rss_mib=196,
        output_bytes=7815,
        measured=MEASURED_1,
    ),
    "TopSnaks": Rate(
        unit="wikidata_entity",
        seconds=3.376e-06,
        speedup_2=1,
        rss_mib=458.5,
        output_bytes=0,
        measured=MEASURED_0,
    ),
    "TypeClosure": Rate(
        unit="wikidata_entity",
        seconds=4.366e-06,
        speedup_2=1,
        rss_mib=458.5,
        output_bytes=0,
        measured=MEASURED_0,
    ),
    "WikiReadingInstances": Rate(
        unit="wiki_mb",
        seconds=0.01439,
        speedup_2=1.79,
        rss_mib=449.9,
        output_bytes=1.723e05,
        measured=MEASURED_1,
    ),
    "WikiReadingSplit": Rate(
        unit="wiki_mb",
        seconds=0.01286,
        speedup_2=1.43,
        rss_mib=337,
        output_bytes=1.725e05,
        measured=MEASURED_1,
    ),
    "WikiReadingStats": Rate(
        unit="wiki_mb",
        seconds=0.003703,
        speedup_2=1.54,
        rss_mib=206.9,
        output_bytes=23.96,
        measured=MEASURED_1,
    ),
    "WikiReadingTriples": Rate(
        unit="wikidata_entity",
        seconds=4.405e-05,
        speedup_2=1.55,
        rss_mib=276.2,
        output_bytes=22.87,
        measured=MEASURED_1,
    ),
    "WikidataScan": Rate(
        unit="wikidata_mb",
        seconds=0.005736,
        speedup_2=1,
        rss_mib=201.9,
        output_bytes=3.8e04,
        measured=MEASURED_2,
    ),
    "WikipediaScan": Rate(
        unit="wiki_mb",
        seconds=0.06976,
        speedup_2=1.84,
        rss_mib=463.1,
        output_bytes=3.271e05,
        measured=MEASURED_1,
    ),
}
