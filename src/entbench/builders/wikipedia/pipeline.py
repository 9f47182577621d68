"""The Wikipedia scan and title -> QID (spec §3): registers their stages and the `wikipedia` and
`title-qid` targets.

    wikipedia (source) ──> wikipedia (normalized: pages, links; _siteinfo.json)
                                └─────────┬──> title_qid     (derived)
    wikidata ─────────────────────────────┘
    wikidata_new ─────────────────────────┴──> title_qid_kb  (derived)

`title_qid_kb` resolves through the kb's newer dump (`wikidata_new`), so a build with a `kb` scans
that dump once. Hansel registers its own instances over its `wiki` scan (`builders.hansel.pipeline`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from entbench.engine.registry import lazy_module, register_docs, register_stage, register_target

if TYPE_CHECKING:
    from entbench.builders.wikipedia.stages import scan, title_qid
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    scan = lazy_module("entbench.builders.wikipedia.stages.scan")
    title_qid = lazy_module("entbench.builders.wikipedia.stages.title_qid")

register_stage("wikipedia", lambda name: scan.WikipediaScan(name))
register_target(
    "wikipedia",
    ("wikipedia",),
    "normalized pages and links of one Wikipedia XML dump (source: wikipedia)",
    card="dumps",
)

register_stage("title_qid", lambda name: title_qid.TitleQid(name, wikidata="wikidata"))
register_stage("title_qid_kb", lambda name: title_qid.TitleQid(name, wikidata="wikidata_new"))
register_target(
    "title-qid", ("title_qid",), "Wikipedia titles -> QIDs (sources: wikipedia, wikidata)", card="title_qid"
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("wikipedia", "wikipedia — plain text and links")
register_docs("title_qid", "title_qid — titles to QIDs", instances=("title_qid_kb",))
