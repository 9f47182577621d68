"""Hansel (Xu et al. 2023; spec §5): registers the Hansel stages and the four `hansel-*` targets.

    wiki (scan) ──> hansel_title_qid (+ wikidata_new) ──> hansel_links (+ entity_diff) ──> hansel
        └──────────> hansel_alias_table ──> hansel_mention_stats                             │
    corpus ──> hansel_corpus (+ hansel_alias_table) ──> hansel_fewshot (+ mention stats, kb)  │
    entity_diff, coarse_types, wikidata_new, wiki ──> hansel_zeroshot                        │
    wiki, entity_diff, coarse_types, both dumps ──> hansel_kb ──> (fewshot, zeroshot texts)  │
    hansel_mem_audit, hansel_fewshot_mem_audit, hansel_zeroshot_mem_audit <── train ─────────┘

* `wiki` (normalized): a second instance of the Wikipedia scan, bound to the source `wiki`: the
  wiki Hansel is built from, zhwiki in the paper, any language's here (`hansel.site`: language
  and site from the dump's `<siteinfo>`). `zhwiki`, the source's name in the published setting,
  is accepted for it (`--source zhwiki=…`, `[params.zhwiki]`). The `wikipedia` stage and source
  stay the English wiki of the other targets.
* `hansel_title_qid`, `hansel_alias_table`, `hansel_mention_stats` (derived): the existing
  title -> QID, AT-base and P(unlinked|m) stages over the wiki scan and the kb's new Wikidata dump
  (`wikidata_new`), the way `title_qid_kb`/`alias_table_kb`/`mention_stats_kb` are over `wikipedia`.
* `hansel_links` (derived) and `hansel` (benchmarks: `train`, `validation`), spec §5 "hansel-train".
* `hansel_corpus` (derived) and `hansel_fewshot` (benchmarks: `fewshot_candidates`), spec §5
  "Few-shot candidates" over the raw corpus source `corpus` (JSON lines `{"id", "text"}`).
* `hansel_zeroshot` (benchmarks: `zeroshot_pool`), spec §5 "Zero-shot pool".
* `hansel_kb` (benchmarks: `kb`): E_known ∪ E_new with each entity's title, first paragraph
  and URL on the wiki (Hansel §3.3, §4.1); the few-shot candidates and the zero-shot pool show them.
* The leakage audits (`HanselLeakageAudit`, the shared `MemAuditStage`): validation, few-shot
  candidates (mention, AT@1) and zero-shot entities (title, QID) against the training pairs.

Targets: `hansel-train`, `hansel-fewshot`, `hansel-zeroshot`, `hansel-kb` (the KB and AT-base: what
a linker needs). `entbench export hansel-train|hansel-kb|hansel-test` writes the release's JSON lines
(`entbench.builders.hansel.export`, `.testsets`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from entbench.engine.registry import (
    AuditedTable,
    Export,
    lazy_module,
    register_alias,
    register_doc_instances,
    register_docs,
    register_stage,
    register_target,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from entbench.builders.alias.stages import alias_table, mention_stats
    from entbench.builders.hansel.stages import audit, corpus, fewshot, kb, links, train, zeroshot
    from entbench.builders.wikipedia.stages import scan, title_qid
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    pa = lazy_module("pyarrow")
    alias_table = lazy_module("entbench.builders.alias.stages.alias_table")
    mention_stats = lazy_module("entbench.builders.alias.stages.mention_stats")
    audit, corpus, fewshot, kb, links, train, zeroshot = (
        lazy_module(f"entbench.builders.hansel.stages.{name}")
        for name in ("audit", "corpus", "fewshot", "kb", "links", "train", "zeroshot")
    )
    scan = lazy_module("entbench.builders.wikipedia.stages.scan")
    title_qid = lazy_module("entbench.builders.wikipedia.stages.title_qid")

WIKI = "wiki"
#: The name of the wiki source (and scan) in the published Hansel setting, accepted for `wiki`.
ZHWIKI = "zhwiki"
TRAIN_STAGE = "hansel"
KB_STAGE = "hansel_kb"
ALIAS_STAGE = "hansel_alias_table"

register_alias(ZHWIKI, WIKI, "its name in the published Hansel setting")
register_stage(WIKI, lambda name: scan.WikipediaScan(name))
register_stage(
    "hansel_title_qid", lambda name: title_qid.TitleQid(name, wikidata="wikidata_new", wikipedia=WIKI)
)
register_stage(
    ALIAS_STAGE, lambda name: alias_table.AliasTable(name, title_qid="hansel_title_qid", wikipedia=WIKI)
)
register_stage(
    "hansel_mention_stats",
    lambda name: mention_stats.MentionStats(name, alias_table=ALIAS_STAGE, wikipedia=WIKI),
)
register_stage(KB_STAGE, lambda name: kb.HanselKb(name, wikipedia=WIKI))
register_stage(
    "hansel_links", lambda name: links.HanselLinks(name, wikipedia=WIKI, title_qid="hansel_title_qid")
)
register_stage(TRAIN_STAGE, lambda name: train.HanselTrain(name, wikipedia=WIKI, links="hansel_links"))
register_stage("hansel_corpus", lambda name: corpus.HanselCorpus(name, alias_table="hansel_alias_table"))
register_stage(
    "hansel_fewshot",
    lambda name: fewshot.HanselFewshot(
        name,
        corpus="hansel_corpus",
        alias_table=ALIAS_STAGE,
        mention_stats="hansel_mention_stats",
        entity_texts=KB_STAGE,
    ),
)
register_stage(
    "hansel_zeroshot", lambda name: zeroshot.HanselZeroshot(name, entity_texts=KB_STAGE, wikipedia=WIKI)
)


def _leakage_audit(name: str, evaluation: tuple[str, str], span: str, label: str) -> audit.HanselLeakageAudit:
    """The audit of `evaluation`'s (span, label) pairs against the training pairs, its rows
    identified by that table's id columns."""
    ids = {
        "validation": (pa.field("id", pa.string(), nullable=False),),
        "fewshot_candidates": (pa.field("id", pa.string(), nullable=False),),
        "zeroshot_pool": (
            pa.field("pool_index", pa.int64(), nullable=False),
            pa.field("qid", pa.string(), nullable=False),
        ),
    }
    return audit.HanselLeakageAudit(
        name,
        train=(TRAIN_STAGE, "train"),
        evaluation=evaluation,
        evaluation_columns=(span, label),
        id_fields=ids[evaluation[1]],
    )


# The leakage audits (spec §5 "every Hansel output"): each evaluation table's (mention, entity)
# pairs against the training pairs.
for _name, _evaluation, _span, _label in (
    ("hansel_mem_audit", (TRAIN_STAGE, "validation"), "mention", "gold_id"),
    ("hansel_fewshot_mem_audit", ("hansel_fewshot", "fewshot_candidates"), "mention", "at1"),
    ("hansel_zeroshot_mem_audit", ("hansel_zeroshot", "zeroshot_pool"), "title", "qid"),
):
    register_stage(_name, functools.partial(_leakage_audit, evaluation=_evaluation, span=_span, label=_label))

register_target(
    "hansel-train",
    (TRAIN_STAGE, "hansel_mem_audit"),
    "Hansel train/validation from a wiki's links to E_known (sources: wiki, wikidata_old, wikidata_new)",
    card="hansel",
    exports=(Export("hansel-train", "jsonl"),),
    audited=(
        AuditedTable(TRAIN_STAGE, "train", "train", ("page_id",), WIKI, ("gold_id",), ("mention", "gold_id")),
        AuditedTable(
            TRAIN_STAGE, "validation", "evaluation", ("page_id",), WIKI, ("gold_id",), ("mention", "gold_id")
        ),
    ),
)
register_target(
    "hansel-fewshot",
    ("hansel_fewshot", "hansel_fewshot_mem_audit"),
    "Hansel few-shot candidates from alias matches over a raw corpus (sources: corpus, wiki, "
    "wikidata_old, wikidata_new; Hansel appendix A)",
    card="hansel_fewshot",
    exports=(Export("hansel-test", "jsonl"),),  # Hansel-FS, from the annotated candidates
    # The candidates carry the alias table's top candidate (`at1`), not a gold entity.
    audited=(
        AuditedTable(
            "hansel_fewshot", "fewshot_candidates", "all", entities=("at1",), pair=("mention", "at1")
        ),
    ),
)
register_target(
    "hansel-zeroshot",
    ("hansel_zeroshot", "hansel_zeroshot_mem_audit"),
    "Hansel zero-shot pool: E_new, half uniform, half balanced over coarse types (sources: "
    "wikidata_old, wikidata_new, wiki)",
    card="hansel",
    exports=(Export("hansel-test", "jsonl"),),  # Hansel-ZS, from the annotated pool
    # The pool's mention of an entity is its page title.
    audited=(
        AuditedTable("hansel_zeroshot", "zeroshot_pool", "all", entities=("qid",), pair=("title", "qid")),
    ),
)
register_target(
    "hansel-kb",
    (KB_STAGE, ALIAS_STAGE),
    "Hansel entity KB (E_known and E_new with the wiki's title, first paragraph, URL, type) and "
    "AT-base, what a linker needs (sources: wiki, wikidata_old, wikidata_new)",
    card="hansel_kb",
    exports=(Export("hansel-kb", "jsonl"),),
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("hansel_links", "hansel_links — wiki documents and their links")
register_docs("hansel", "hansel — training and validation mentions")
register_docs("hansel_corpus", "hansel_corpus — alias matches in a raw corpus")
register_docs("hansel_fewshot", "hansel_fewshot — few-shot annotation candidates")
register_docs("hansel_zeroshot", "hansel_zeroshot — zero-shot entity pool")
register_docs("hansel_kb", "hansel_kb — the entity KB a linker encodes")
# Instances of other datasets' stages registered here, each described by its stage's section.
register_doc_instances("wikipedia", WIKI)
register_doc_instances("title_qid", "hansel_title_qid")
register_doc_instances("alias_table", ALIAS_STAGE)
register_doc_instances("mention_stats", "hansel_mention_stats")
register_doc_instances(
    "mem_audit", "hansel_mem_audit", "hansel_fewshot_mem_audit", "hansel_zeroshot_mem_audit"
)
