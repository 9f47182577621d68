"""The `kb-series` target: new entities over N Wikidata dumps in date order (sources `wikidata_0` …).

    wikidata_0 … wikidata_{N-1}  (one scan per source, normalized)
        └─ series_filter    (derived)      kept, removed           each dump: spec §2.1
             └─ series_new  (benchmarks)   new_entities, first_dump  each period's E_new, typed
                  └─ series_zeroshot (benchmarks)  zeroshot_pool    each period's Hansel §3.4 pool

How many dumps follows the build's sources: before a build plans, the sources hook below registers
one scan per `wikidata_<i>` up to the highest given (at least two) and the series stages over all
of them, so five yearly dumps make five scans and four periods. Fingerprints stay the content's:
each scan's is its dump's size and sha256, and the series stages' are their scans' in date order.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from entbench.builders.kb_series.series import MIN_DUMPS, dump_sources, series_length
from entbench.engine.registry import (
    AuditedTable,
    lazy_module,
    on_sources,
    register_doc_instances,
    register_docs,
    register_stage,
    register_target,
)

if TYPE_CHECKING:
    from entbench.builders.kb_series.stages import filter as series_filter
    from entbench.builders.kb_series.stages import new, zeroshot
    from entbench.builders.wikidata.stages import scan
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    series_filter = lazy_module("entbench.builders.kb_series.stages.filter")
    new = lazy_module("entbench.builders.kb_series.stages.new")
    zeroshot = lazy_module("entbench.builders.kb_series.stages.zeroshot")
    scan = lazy_module("entbench.builders.wikidata.stages.scan")


def register_series(count: int) -> None:
    """Register the scans and series stages of a series of `count` dumps (replacing another count's)."""
    dumps = dump_sources(count)
    for dump in dumps:
        register_stage(dump, lambda name: scan.WikidataScan(name), replace=True)
    register_stage(
        "series_filter", lambda name: series_filter.SeriesFilter(dumps, stage_name=name), replace=True
    )
    register_stage("series_new", lambda name: new.SeriesNew(dumps, stage_name=name), replace=True)
    register_stage(
        "series_zeroshot", lambda name: zeroshot.SeriesZeroshot(dumps, stage_name=name), replace=True
    )


def _on_sources(names: Collection[str]) -> None:
    register_series(series_length(names))


register_series(MIN_DUMPS)
on_sources(_on_sources)

register_target(
    "kb-series",
    ("series_new", "series_zeroshot"),
    "E_new of each consecutive pair of N Wikidata dumps in date order, with coarse types and a "
    "zero-shot pool, and every entity's first dump (sources: wikidata_0, wikidata_1, …)",
    card="kb_series",
    audited=(AuditedTable("series_new", "new_entities", "all", entities=("qid",)),),
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("series_filter", "series_filter — the filter on every dump of a series")
register_docs("series_new", "series_new — new entities per period")
register_docs("series_zeroshot", "series_zeroshot — zero-shot pool per period")
register_doc_instances("wikidata", numbered=r"wikidata_[0-9]+")  # this series' scans
