"""The Hansel cards: `hansel-train` (mentions per split, mention-length histogram; Hansel
§3.2, Table 1) and `hansel-zeroshot` (coarse types of the pool; Hansel §3.4); `hansel-fewshot` is
`hansel_fewshot`'s. Every Hansel card says which wiki built it (`wiki_section`: site and language
from the dump's `<siteinfo>`) and which conversion its text got (`conversion_section`).

Mention length is counted in Unicode code points, the unit of Hansel's `start`/`end` offsets
(`text[start:end] == mention`); DuckDB's `length` counts code points.
"""

from __future__ import annotations

from entbench.builders.hansel.kb import wikipedia_host
from entbench.cards.build_view import BuildView
from entbench.cards.charts import int_bins, md_table
from entbench.cards.hub import HANSEL
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import section_link
from entbench.filters.mentions import chinese_language

SPLITS = ("train", "validation")
POOL_SHOWN = 10
COARSE_ORDER = ("PER", "LOC", "ORG", "EVENT", "OTHER")
MENTION_COLUMNS = ("mention", "gold_id")
DOCUMENT_COLUMNS = ("document_id", "page_id")
#: Hansel Table 1 as printed: mentions, documents and distinct E_known entities of the splits.
PAPER_TABLE_1 = {"train": ("9.89M", "1.05M", "541K"), "validation": ("9,677", "1,000", "6,323")}


def split_tables(view: BuildView) -> list[tuple[str, str, str]]:
    """(split, stage, table) for each Hansel split present in the build, in split order."""
    found = []
    for split in SPLITS:
        for stage in view.order:
            output = view.manifests[stage]["outputs"].get(split)
            if output is not None and all(
                c in {f["name"] for f in output["schema"]} for c in MENTION_COLUMNS
            ):
                found.append((split, stage, split))
                break
    return found


def hansel_section(view: BuildView) -> Section | None:
    """Per split: mentions, documents, distinct gold entities; the mention-length histogram."""
    tables = split_tables(view)
    if not tables:
        return None
    rows = []
    lengths: dict[str, dict[int, int]] = {}
    for split, stage, table in tables:
        names = {f["name"] for f in view.manifests[stage]["outputs"][table]["schema"]}
        doc_column = next((c for c in DOCUMENT_COLUMNS if c in names), None)
        docs = f"count(DISTINCT {doc_column})" if doc_column else "NULL"
        ((mentions, documents, entities),) = view.query(
            f"SELECT count(*), {docs}, count(DISTINCT gold_id) FROM t", {"t": (stage, table)}
        )
        paper = PAPER_TABLE_1.get(split)
        rows.append(
            (
                split,
                int(mentions),
                "–" if documents is None else int(documents),
                int(entities),
                "–" if paper is None else " / ".join(paper),
            )
        )
        lengths[split] = {
            int(n): int(c)
            for n, c in view.query(
                "SELECT length(mention) AS n, count(*) FROM t GROUP BY n", {"t": (stage, table)}
            )
        }
    total: dict[int, int] = {}
    for per_split in lengths.values():
        for n, c in per_split.items():
            total[n] = total.get(n, 0) + c
    bins = int_bins(total, max_bins=30)
    blocks: list[Block] = [
        "Mentions are Wikipedia links to E_known entities in their paragraph, offsets in code points "
        f"(`{section_link('hansel')}`); the paper's figures are for the 2021-03-01 zhwiki dump.",
        md_table(
            ["split", "mentions", "documents", "gold entities", "paper (mentions / documents / entities)"],
            rows,
            "lrrrr",
        ),
        Chart(
            "mention_lengths.png",
            f"{view.target}: mention length (code points)",
            bins.labels(),
            tuple((split, bins.apply(lengths[split])) for split, _, _ in tables),
            xlabel="mention length (Unicode code points)",
            ylabel="mentions",
        ),
    ]
    return Section("Hansel mentions", tuple(blocks))


#: How the card names each Traditional->Simplified converter (`filters.mentions.CONVERTERS`).
CONVERTER_NAMES = {
    "opencc": "OpenCC `t2s` (phrases, then characters; entbench's default, the more accurate)",
    "hanziconv": "HanziConv (character by character), as the Hansel paper converted (its footnote 3)",
    "none": "none: Traditional characters kept as the wiki writes them",
}


def wiki_sites(view: BuildView) -> list[tuple[str, str, str]]:
    """(scan stage, site, language) of every Wikipedia scan of the build, upstream first."""
    found = []
    for stage in view.order:
        info = view.siteinfo(stage)
        if info is not None:
            found.append((stage, str(info.get("dbname") or ""), str(info.get("language") or "")))
    return found


def _host(site: str) -> str:
    try:
        return wikipedia_host(site)
    except ValueError:
        return "–"


def wiki_section(view: BuildView) -> Section | None:
    """Which wiki built the data: its site and language, as the dump's `<siteinfo>` says."""
    sites = wiki_sites(view)
    if not sites:
        return None
    rows = [
        (
            f"`{stage}`",
            f"`{site}`" if site else "–",
            f"`{language}`" if language else "–",
            _host(site),
            "Traditional → Simplified" if chinese_language(language) else "none",
        )
        for stage, site, language in sites
    ]
    return Section(
        "Wiki",
        (
            "The wiki this build read: its site is the dump's `<dbname>` and its language the "
            "`<mediawiki xml:lang>` (the scan's `language` parameter overrides it). Hansel as "
            "published reads zhwiki; on any other wiki no Traditional → Simplified conversion "
            "applies, and link trails and sentence boundaries are the language's "
            f"(`{section_link('hansel')}`).",
            md_table(["scan", "site", "language", "Wikipedia", "conversion"], rows, "lllll"),
        ),
    )


def conversion_section(view: BuildView) -> Section | None:
    """Which converter made the Simplified texts (and alias-table keys) of this build, or that the
    wiki is not Chinese and nothing was converted."""
    used = [
        (stage, str(params.get("converter", "opencc")))
        for stage in view.order
        if "converter" in (params := view.manifests[stage].get("params") or {})
    ]
    if not used:
        return None
    languages = [language for _, _, language in wiki_sites(view)]
    if languages and not any(chinese_language(language) for language in languages):
        shown = ", ".join(f"`{language}`" for language in languages)
        return Section(
            "Traditional to Simplified",
            (
                f"Not applied: the wiki's language is {shown}, and Hansel converts Chinese text only; "
                "the texts and mentions are the wiki's own, character for character. The `converter` "
                f"parameters of {', '.join(f'`{stage}`' for stage, _ in used)} change nothing here.",
            ),
        )
    rows = [(f"`{stage}`", CONVERTER_NAMES.get(name, name)) for stage, name in used]
    names = {name for _, name in used}
    note = (
        "Hansel as published: every converter here is HanziConv."
        if names == {"hanziconv"}
        else "Hansel as published used HanziConv: build with `--param STAGE.converter=hanziconv` for each "
        "stage listed."
    )
    return Section(
        "Traditional to Simplified",
        (
            "Texts, mentions and alias-table keys are converted to Simplified Chinese with code-point "
            f"offsets kept (Hansel §3.2; `{section_link('alias_table')}`). " + note,
            md_table(["stage", "converter"], rows, "ll"),
        ),
    )


def zeroshot_section(view: BuildView) -> Section | None:
    """The zero-shot pool's coarse types, by how each entity was drawn (Hansel §3.4)."""
    stage = view.find("zeroshot_pool", columns=("qid", "coarse", "criterion"))
    if stage is None:
        return None
    rows = view.query(
        "SELECT coarse, criterion, count(*) FROM pool GROUP BY coarse, criterion",
        {"pool": (stage, "zeroshot_pool")},
    )
    counts = {(str(c), str(k)): int(n) for c, k, n in rows}
    order = [c for c in COARSE_ORDER if any(key[0] == c for key in counts)]
    order += sorted({c for c, _ in counts} - set(order))
    criteria = sorted({k for _, k in counts})
    table = [
        (c, *(counts.get((c, k), 0) for k in criteria), sum(counts.get((c, k), 0) for k in criteria))
        for c in order
    ]
    sample = view.query(
        "SELECT qid, title, label, description, coarse, criterion FROM pool "
        f"ORDER BY pool_index LIMIT {POOL_SHOWN}",
        {"pool": (stage, "zeroshot_pool")},
    )
    return Section(
        "Zero-shot pool",
        (
            "E_new entities for annotators (Hansel §3.4): half drawn uniformly, half balanced over "
            f"coarse types (`{section_link('hansel_zeroshot')}`); the stage's stats give the quota "
            "and availability per type.",
            md_table(["coarse type", *criteria, "total"], table, "l" + "r" * (len(criteria) + 1)),
            Chart(
                "zeroshot_coarse_types.png",
                f"{view.target}: coarse types of the pool",
                tuple(order),
                tuple((k, tuple(float(counts.get((c, k), 0)) for c in order)) for k in criteria),
                xlabel="coarse type",
                ylabel="entities",
            ),
            f"The first {len(sample)} entities of the pool, in draw order (what annotators are given):",
            md_table(
                ["QID", "title", "label", "description", "coarse type", "drawn"],
                [(q, t or "–", lab or "–", d or "–", c, k) for q, t, lab, d, c, k in sample],
            ),
        ),
    )


register_card(
    "hansel-zeroshot",
    sections=(wiki_section, zeroshot_section),
    splits=("zeroshot_pool",),
    summary="Hansel zero-shot pool (Xu et al. 2022, §3.4): emerging entities (E_new) for annotation.",
    content=Content(
        wikidata="E_new items with their QIDs, sitelink titles, labels, descriptions, aliases and "
        "coarse types"
    ),
    hub=HANSEL,
)
register_card(
    "hansel-train",
    sections=(wiki_section, hansel_section, conversion_section),
    splits=SPLITS,
    summary=(
        "Hansel training data (Xu et al. 2022, §3.2): Wikipedia links to known entities (E_known), "
        "in their paragraph, with a held-out validation set of whole documents; the paper's wiki is "
        "the Chinese one, this build's is in «Wiki»."
    ),
    content=Content(
        wikipedia="the contexts, paragraphs of the wiki's articles, and the mentions, their link anchors",
        wikidata="the gold QIDs",
    ),
    hub=HANSEL,
)
