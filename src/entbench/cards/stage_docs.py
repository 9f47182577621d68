"""Where users read what a stage computes: `docs/stages.md`, entbench's own stage reference.

The file is `docs/stages.md` in the entbench repository, and the wheel installs it with the package
as `entbench/_docs/stages.md` (`stages_doc_path` finds either). Cards live in a build directory, so
they cannot link to it relatively: they name it as `docs/stages.md#<anchor>`, the anchor GitHub
gives the stage's heading. Every heading is written here once; a test checks each against the
file, and that every registered stage has one.
"""

from __future__ import annotations

import re

from entbench.engine.docs import DOC

#: Section key -> the heading of its section in `docs/stages.md` (without the leading hashes).
HEADINGS: dict[str, str] = {
    "wikidata": "wikidata — the Wikidata dump scan",
    "wikipedia": "wikipedia — plain text and links",
    "title_qid": "title_qid — titles to QIDs",
    "alias_table": "alias_table — the AT-base alias table",
    "mention_stats": "mention_stats — P(unlinked|m)",
    "internal_filter": "internal_filter — Wikimedia-internal filter and site constraint",
    "entity_diff": "entity_diff — E_known and E_new",
    "type_closure": "type_closure — subclasses of the coarse-type roots",
    "coarse_types": "coarse_types — PER, LOC, ORG, EVENT, OTHER",
    "top_snaks": "top_snaks — fine types",
    "series_filter": "series_filter — the filter on every dump of a series",
    "series_new": "series_new — new entities per period",
    "series_zeroshot": "series_zeroshot — zero-shot pool per period",
    "wikireading_triples": "wikireading_triples — answer sets from statements",
    "wikireading_instances": "wikireading_instances — answer sets with their article",
    "wikireading": "wikireading — train, valid and test splits",
    "wikireading_stats": "wikireading_stats — per-property statistics",
    "mem_audit": "mem_audit — memorisation audits",
    "hansel_links": "hansel_links — wiki documents and their links",
    "hansel": "hansel — training and validation mentions",
    "hansel_corpus": "hansel_corpus — alias matches in a raw corpus",
    "hansel_fewshot": "hansel_fewshot — few-shot annotation candidates",
    "hansel_zeroshot": "hansel_zeroshot — zero-shot entity pool",
    "hansel_kb": "hansel_kb — the entity KB a linker encodes",
    "wikient_descriptions": "wikient_descriptions — article descriptions",
    "wikient": "wikient — hyperlinked sentences",
    "enteval_tasks": "enteval_tasks — the EntEval task files",
    "enteval_esr": "enteval_kore, enteval_wikisrs — entity similarity and relatedness",
    "enteval_ert": "enteval_ert — entity relation typing",
    "enteval_conll_yago": "enteval_conll_yago — named entity disambiguation",
    "enteval_rare": "enteval_rare — rare entity prediction",
    "enteval_cap": "enteval_cap — coreference arc prediction",
    "enteval_cerp": "enteval_cerp — contextualized entity relationship prediction",
    "enteval_et": "enteval_et — entity typing",
    "enteval_efp": "enteval_efp — entity factuality prediction",
}

#: Stage instances described by another stage's section (same stage, other sources).
INSTANCES: dict[str, str] = {
    "wikidata_old": "wikidata",
    "wikidata_new": "wikidata",
    "wiki": "wikipedia",
    "title_qid_kb": "title_qid",
    "hansel_title_qid": "title_qid",
    "alias_table_kb": "alias_table",
    "hansel_alias_table": "alias_table",
    "mention_stats_kb": "mention_stats",
    "hansel_mention_stats": "mention_stats",
    "wikireading_mem_audit_valid": "mem_audit",
    "wikireading_mem_audit_test": "mem_audit",
    "hansel_mem_audit": "mem_audit",
    "hansel_fewshot_mem_audit": "mem_audit",
    "hansel_zeroshot_mem_audit": "mem_audit",
    "enteval_kore": "enteval_esr",
    "enteval_wikisrs": "enteval_esr",
}


def anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation removed (word characters,
    hyphens and spaces kept), each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


#: Numbered instances described by another stage's section: the scans of a series of dumps.
NUMBERED_INSTANCES: tuple[tuple[re.Pattern[str], str], ...] = ((re.compile(r"wikidata_[0-9]+"), "wikidata"),)


def section_of(stage: str) -> str | None:
    """The section key describing `stage`, if any."""
    key = INSTANCES.get(stage, stage)
    for pattern, section in NUMBERED_INSTANCES:
        if pattern.fullmatch(stage):
            key = section
    return key if key in HEADINGS else None


def stage_link(stage: str) -> str:
    """`docs/stages.md#<anchor>` of the section describing `stage` (the whole file if none does)."""
    key = section_of(stage)
    return DOC if key is None else f"{DOC}#{anchor(HEADINGS[key])}"


def section_link(key: str) -> str:
    """`docs/stages.md#<anchor>` of a section by its key (`mem_audit`, `coarse_types`, …)."""
    return f"{DOC}#{anchor(HEADINGS[key])}"


#: How cards name the stage reference (no machine path: a card is read elsewhere too).
REFERENCE = (
    f"`{DOC}` of the entbench repository (also installed with the package; `entbench --help` prints where)"
)
