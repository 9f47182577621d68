"""The `hansel-kb` card: the entity KB a Hansel linker encodes, against the paper's figures.

Hansel §3.1: "After filtering, E_known contains roughly 1M entities and E_new contains 57K
entities"; §3.4: "the original distribution of E_new is heavily biased towards OTHER (52%) and PER
(38%)". The KB's text is each entity's first zhwiki paragraph (§4.1), and `text_status` says why an
entity has none.
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt, md_table, percent
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import section_link
from entbench.cards.targets.hansel import COARSE_ORDER, conversion_section, wiki_section

COLUMNS = ("id", "title", "text", "type", "split", "text_status")
SPLITS = ("known", "new")
#: Hansel §3.1 and §3.4, as printed.
PAPER_SIZES = {"known": "~1M", "new": "57K"}
PAPER_NEW_TYPES = {"OTHER": 0.52, "PER": 0.38}
#: What each `text_status` means on the card.
STATUS_TEXT = {
    "page": "first paragraph of its page",
    "no_sitelink": "no sitelink to the wiki",
    "page_not_in_dump": "sitelink title not a page of the dump",
    "page_is_redirect": "sitelink title a redirect in the dump",
    "page_without_text": "page without text",
}
SHOWN = 5
TEXT_CHARS = 60


def kb_texts_section(view: BuildView) -> Section | None:
    """Sizes and coarse types of E_known and E_new beside the paper's, and where texts come from."""
    stage = view.find("kb", columns=COLUMNS)
    if stage is None:
        return None
    source = {"kb": (stage, "kb")}
    by_type = {
        (str(s), str(t)): int(n)
        for s, t, n in view.query("SELECT split, type, count(*) FROM kb GROUP BY ALL", source)
    }
    sizes = {s: sum(n for (split, _), n in by_type.items() if split == s) for s in SPLITS}
    types = [t for t in COARSE_ORDER if any(key[1] == t for key in by_type)]
    types += sorted({t for _, t in by_type} - set(types))
    type_rows = []
    for t in types:
        row: list[object] = [t]
        for s in SPLITS:
            n = by_type.get((s, t), 0)
            row += [n, percent(n / sizes[s]) if sizes[s] else "–"]
        paper = PAPER_NEW_TYPES.get(t)
        row.append("–" if paper is None else percent(paper, 0))
        type_rows.append(tuple(row))
    status = {
        (str(s), str(k)): int(n)
        for s, k, n in view.query("SELECT split, text_status, count(*) FROM kb GROUP BY ALL", source)
    }
    status_rows = [
        (f"`{k}`", STATUS_TEXT.get(k, k), *(status.get((s, k), 0) for s in SPLITS))
        for k in STATUS_TEXT
        if any(status.get((s, k), 0) for s in SPLITS)
    ]
    sample = view.query(
        f"SELECT id, title, text, type, split FROM kb WHERE text <> '' ORDER BY id LIMIT {SHOWN}", source
    )
    blocks: list[Block] = [
        "One row per entity of E_known ∪ E_new: its title on the wiki and the first paragraph of its "
        "page (Simplified on zhwiki), the article URL, its Wikidata label, description and aliases, "
        f"its coarse type and its set (`{section_link('hansel_kb')}`). Hansel's entity encoder reads "
        '"the title and the first paragraph in Chinese Wikipedia" (§4.1).',
        md_table(
            ["set", "entities", "paper (§3.1)"],
            [(s, fmt(sizes[s]), PAPER_SIZES[s]) for s in SPLITS],
            "lrr",
        ),
        "Coarse types per set; the paper gives E_new's two largest shares (§3.4):",
        md_table(["coarse type", "E_known", "share", "E_new", "share", "paper E_new"], type_rows, "lrrrrr"),
        Chart(
            "kb_coarse_types.png",
            f"{view.target}: coarse types of E_known and E_new (share of each set)",
            tuple(types),
            tuple(
                (f"E_{s}", tuple(by_type.get((s, t), 0) / sizes[s] if sizes[s] else 0.0 for t in types))
                for s in SPLITS
            ),
            xlabel="coarse type",
            ylabel="share of the set",
            counts=False,
        ),
        "Where each entity's text comes from (an entity without a page keeps its Wikidata label and "
        "description, and an empty text):",
        md_table(["text_status", "meaning", "E_known", "E_new"], status_rows, "llrr"),
    ]
    if sample:
        blocks.append(f"The first {len(sample)} entities with a text:")
        blocks.append(
            md_table(
                ["id", "title", "text", "type", "set"],
                [(q, t or "–", _short(str(x)), ty, s) for q, t, x, ty, s in sample],
            )
        )
    return Section("Entity KB", tuple(blocks))


def _short(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "…"


register_card(
    "hansel-kb",
    sections=(wiki_section, kb_texts_section, conversion_section),
    summary=(
        "The entity KB behind Hansel (Xu et al. 2022, §3.1, §4.1): E_known and E_new with the wiki's "
        "title and first paragraph a linker encodes (zhwiki in the paper), and AT-base, the alias "
        "table its candidates come from."
    ),
    content=Content(
        wikipedia="entity titles and first paragraphs of the wiki's articles, and the alias table's "
        "mentions (link anchors, titles and redirects)",
        wikidata="QIDs, labels, descriptions, aliases and coarse types",
    ),
)
