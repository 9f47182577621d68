"""The knowledge-base target `kb` (spec §2; Hansel §3.1): registers its five derived stages.

    internal_filter  (wikidata_old, wikidata_new)  -> kept, removed          spec §2.1
    entity_diff      (+ internal_filter)           -> kb_entities, id_changes  spec §2.2
    type_closure     (wikidata_old, wikidata_new)  -> type_closure           spec §2.3
    coarse_types     (+ entity_diff, type_closure) -> coarse_types           spec §2.3
    top_snaks        (+ entity_diff)               -> top_snaks, entity_snaks  spec §2.4

Each stage lives in its own module of `builders.kb.stages`; this one only wires them into the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from entbench.engine.registry import lazy_module, register_docs, register_stage, register_target

if TYPE_CHECKING:
    from entbench.builders.kb.stages import diff, snaks, types
    from entbench.builders.kb.stages import filter as internal_filter
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    diff = lazy_module("entbench.builders.kb.stages.diff")
    internal_filter = lazy_module("entbench.builders.kb.stages.filter")
    snaks = lazy_module("entbench.builders.kb.stages.snaks")
    types = lazy_module("entbench.builders.kb.stages.types")

register_stage("internal_filter", lambda name: internal_filter.InternalFilter(name))
register_stage("entity_diff", lambda name: diff.EntityDiff(name))
register_stage("type_closure", lambda name: types.TypeClosure(name))
register_stage("coarse_types", lambda name: types.CoarseTypes(name))
register_stage("top_snaks", lambda name: snaks.TopSnaks(name))

register_target(
    "kb",
    ("entity_diff", "coarse_types", "top_snaks"),
    "knowledge base: Wikimedia-internal filter, E_known/E_new, coarse types, TopSnaks "
    "(sources: wikidata_old, wikidata_new)",
    card="kb",
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("internal_filter", "internal_filter — Wikimedia-internal filter and site constraint")
register_docs("entity_diff", "entity_diff — E_known and E_new")
register_docs("type_closure", "type_closure — subclasses of the coarse-type roots")
register_docs("coarse_types", "coarse_types — PER, LOC, ORG, EVENT, OTHER")
register_docs("top_snaks", "top_snaks — fine types")
