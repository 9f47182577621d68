"""AT-base and P(unlinked|m) (Hansel §3.1, appendix A; spec §4): registers the alias stages and the
`alias-table` and `alias-table-kb` targets.

    wikipedia, title_qid    ──> alias_table    ──> mention_stats     (+ wikipedia)
    wikipedia, title_qid_kb ──> alias_table_kb ──> mention_stats_kb  (+ wikipedia)

The `_kb` pair resolves titles through the kb's newer Wikidata dump (`wikidata_new`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from entbench.engine.registry import lazy_module, register_docs, register_stage, register_target

if TYPE_CHECKING:
    from entbench.builders.alias.stages import alias_table, mention_stats
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    alias_table = lazy_module("entbench.builders.alias.stages.alias_table")
    mention_stats = lazy_module("entbench.builders.alias.stages.mention_stats")

register_stage("alias_table", lambda name: alias_table.AliasTable(name, title_qid="title_qid"))
register_stage("alias_table_kb", lambda name: alias_table.AliasTable(name, title_qid="title_qid_kb"))
register_stage("mention_stats", lambda name: mention_stats.MentionStats(name, alias_table="alias_table"))
register_stage(
    "mention_stats_kb", lambda name: mention_stats.MentionStats(name, alias_table="alias_table_kb")
)
register_target(
    "alias-table",
    ("alias_table", "mention_stats"),
    "AT-base alias table with P(e|m) and P(unlinked|m) (sources: wikipedia, wikidata)",
    card="alias_table",
)
register_target(
    "alias-table-kb",
    ("alias_table_kb", "mention_stats_kb"),
    "AT-base over the kb's newer Wikidata dump (sources: wikipedia, wikidata_new)",
    card="alias_table",
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("alias_table", "alias_table — the AT-base alias table", instances=("alias_table_kb",))
register_docs("mention_stats", "mention_stats — P(unlinked|m)", instances=("mention_stats_kb",))
