"""The Wikidata scan (spec §1): registers one scan per Wikidata source and the `wikidata` target.

    wikidata      (source) ──> wikidata      (normalized: entities, aliases, truthy_claims,
    wikidata_old  (source) ──> wikidata_old   outranked_type_claims, sitelinks, redirects)
    wikidata_new  (source) ──> wikidata_new

The `kb` stages read `wikidata_old` and `wikidata_new`; every other target reads `wikidata`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from entbench.engine.registry import lazy_module, register_docs, register_stage, register_target

if TYPE_CHECKING:
    from entbench.builders.wikidata.stages import scan
else:  # imported when a stage of its is first looked up (`registry.lazy_module`)
    scan = lazy_module("entbench.builders.wikidata.stages.scan")

for _source in ("wikidata", "wikidata_old", "wikidata_new"):
    register_stage(_source, lambda name: scan.WikidataScan(name))

register_target(
    "wikidata", ("wikidata",), "normalized tables of one Wikidata JSON dump (source: wikidata)", card="dumps"
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("wikidata", "wikidata — the Wikidata dump scan", instances=("wikidata_old", "wikidata_new"))
