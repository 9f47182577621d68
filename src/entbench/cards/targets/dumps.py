"""The cards of the two dump scans: `wikidata` (entities, labels, statements, sitelinks) and
`wikipedia` (pages, their plain text, their links).

Both read the normalized tables themselves (a few columns each, aggregated in DuckDB), so the card
says what a user will find in them before they open one: how much of it is labelled, which
properties dominate, how long articles are, what the scan set aside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, fmt, integer_histogram, md_table, percent, top_items
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import stage_link

TOP_PROPERTIES = 20
TOP_TARGETS = 10


# --- wikidata ----------------------------------------------------------------------------------------
def wikidata_section(view: BuildView) -> Section | None:
    """Entities by type and label coverage, sitelinks, aliases, statements per entity, top properties."""
    stage = view.find("truthy_claims", columns=("subject", "property", "snaktype", "value_type"))
    if stage is None or "entities" not in view.manifests[stage]["outputs"]:
        return None
    params = view.manifests[stage]["params"]
    languages = [str(lang) for lang in params.get("languages", [])]
    names = {f["name"] for f in view.manifests[stage]["outputs"]["entities"]["schema"]}
    columns = [c for lang in languages for c in (f"label_{lang}", f"description_{lang}") if c in names]
    counts = ", ".join(f"count({c})" for c in columns)
    by_type = view.query(
        f"SELECT type, count(*){', ' + counts if counts else ''} FROM e GROUP BY type ORDER BY count(*) DESC",
        {"e": (stage, "entities")},
    )
    blocks: list[Block] = [
        f"Every entity of the dump, its labels and descriptions in {', '.join(languages) or '–'}, its "
        f"truthy statements and its sitelinks (`{stage_link(stage)}`). Entities by type, and how many "
        "have a label or description in each language:",
        md_table(
            ["type", "entities", *(c.replace("_", " ") for c in columns)],
            [(t, int(n), *(_share(int(v), int(n)) for v in rest)) for t, n, *rest in by_type],
            "lr" + "r" * len(columns),
        ),
    ]
    sites = view.query(
        "SELECT site, count(*) FROM s GROUP BY site ORDER BY site", {"s": (stage, "sitelinks")}
    )
    aliases = view.query(
        "SELECT language, count(*), count(DISTINCT id) FROM a GROUP BY language ORDER BY language",
        {"a": (stage, "aliases")},
    )
    facts = [f"sitelinks to {site}: {fmt(int(n))}" for site, n in sites]
    facts += [f"{lang} aliases: {fmt(int(n))} (of {fmt(int(ids))} entities)" for lang, n, ids in aliases]
    if facts:
        sentence = "; ".join(facts)
        blocks.append(sentence[0].upper() + sentence[1:] + ".")
    claims = {"c": (stage, "truthy_claims")}
    kinds = view.query(
        "SELECT CASE WHEN snaktype = 'value' THEN coalesce(value_type, 'value') ELSE snaktype END AS k, "
        "count(*) FROM c GROUP BY k",
        claims,
    )
    blocks.append(
        bar_chart(
            "statement_values.png",
            f"{view.target}: truthy statements by kind of value",
            top_items([(str(k), float(n)) for k, n in kinds], len(kinds)),
            xlabel="statements",
            horizontal=True,
        )
    )
    per_entity = {
        int(n): int(c)
        for n, c in view.query(
            "SELECT n, count(*) FROM (SELECT subject, count(*) AS n FROM c GROUP BY subject) GROUP BY n",
            claims,
        )
    }
    entities = sum(int(n) for _, n, *_ in by_type)
    with_claims = sum(per_entity.values())
    blocks.append(
        f"Entities with at least one truthy statement: {fmt(with_claims)} of {fmt(entities)}; "
        "their statements per entity:"
    )
    labels, values = integer_histogram(per_entity, max_bins=30)
    blocks.append(
        Chart(
            "statements_per_entity.png",
            f"{view.target}: truthy statements per entity (entities with any)",
            labels,
            (("", values),),
            xlabel="truthy statements",
            ylabel="entities",
            style="hist",
        )
    )
    top = view.query(
        "SELECT property, count(*) AS n FROM c GROUP BY property "
        f"ORDER BY n DESC, property LIMIT {TOP_PROPERTIES}",
        claims,
    )
    property_labels = view.labels([str(p) for p, _ in top], [*languages, "en"])
    blocks.append(
        bar_chart(
            "top_properties.png",
            f"{view.target}: top {len(top)} properties by truthy statements",
            [(f"{p} {property_labels.get(str(p), '')}".strip(), float(n)) for p, n in top],
            xlabel="statements",
            horizontal=True,
        )
    )
    return Section("Wikidata entities", tuple(blocks))


def _share(part: int, whole: int) -> str:
    return f"{fmt(part)} ({percent(part / whole)})" if whole else fmt(part)


# --- wikipedia ---------------------------------------------------------------------------------------
def wikipedia_section(view: BuildView) -> Section | None:
    """Pages by kind, article lengths, links by kind (scan counters), links per article, top targets."""
    stage = view.find("pages", columns=("page_id", "ns", "is_redirect", "is_disambiguation", "text"))
    if stage is None or "links" not in view.manifests[stage]["outputs"]:
        return None
    stats = view.stats(stage)
    pages = {"p": (stage, "pages")}
    ((articles, disambiguation, redirects, other_ns, chars, median),) = view.query(
        "SELECT count(*) FILTER (WHERE ns = 0 AND NOT is_redirect), "
        "count(*) FILTER (WHERE ns = 0 AND NOT is_redirect AND is_disambiguation), "
        "count(*) FILTER (WHERE is_redirect), count(*) FILTER (WHERE ns <> 0 AND NOT is_redirect), "
        "sum(length(text)) FILTER (WHERE NOT is_redirect), "
        "median(length(text)) FILTER (WHERE ns = 0 AND NOT is_redirect) FROM p",
        pages,
    )
    blocks: list[Block] = [
        f"Every page of the dump's kept namespaces as plain text with its paragraphs, and every link "
        f"to an article with its anchor at code-point offsets in that text (`{stage_link(stage)}`).",
        md_table(
            [
                "articles",
                "of them disambiguation pages",
                "redirects",
                "other pages",
                "characters of text",
                "median article length",
            ],
            [
                (
                    int(articles),
                    int(disambiguation),
                    int(redirects),
                    int(other_ns),
                    int(chars or 0),
                    f"{fmt(int(median or 0))} characters",
                )
            ],
            "rrrrrr",
        ),
    ]
    lengths = {
        int(n): int(c)
        for n, c in view.query(
            "SELECT length(text) AS n, count(*) FROM p WHERE ns = 0 AND NOT is_redirect GROUP BY n", pages
        )
    }
    labels, values = integer_histogram(lengths, max_bins=30)
    blocks.append(
        Chart(
            "article_lengths.png",
            f"{view.target}: article length (characters of plain text)",
            labels,
            (("", values),),
            xlabel="characters",
            ylabel="articles",
            style="hist",
        )
    )
    kinds = [
        (key.removeprefix("links_").replace("_", " "), float(value))
        for key, value in stats.items()
        if key.startswith("links_") and key != "links_written" and isinstance(value, int | float) and value
    ]
    blocks.append(
        f"Every `[[…]]` the scan met, by kind; {fmt(int(stats.get('links_written', 0)))} article links "
        "are rows of `links`, the others are counted and set aside:"
    )
    blocks.append(
        bar_chart(
            "links_by_kind.png",
            f"{view.target}: [[…]] links by kind",
            top_items(kinds, len(kinds)),
            xlabel="links",
            horizontal=True,
        )
    )
    blocks.extend(_template_blocks(stats))
    links = {"l": (stage, "links")}
    per_article = {
        int(n): int(c)
        for n, c in view.query(
            "SELECT n, count(*) FROM (SELECT page_id, count(*) AS n FROM l GROUP BY page_id) GROUP BY n",
            links,
        )
    }
    with_links = sum(per_article.values())
    blocks.append(
        f"Pages with at least one article link: {fmt(with_links)} of {fmt(int(articles))} articles."
    )
    labels, values = integer_histogram(per_article, max_bins=30)
    blocks.append(
        Chart(
            "links_per_page.png",
            f"{view.target}: article links per page (pages with any)",
            labels,
            (("", values),),
            xlabel="article links",
            ylabel="pages",
            style="hist",
        )
    )
    top = view.query(
        "SELECT target_normalized, count(*) AS n FROM l GROUP BY target_normalized "
        f"ORDER BY n DESC, target_normalized LIMIT {TOP_TARGETS}",
        links,
    )
    blocks.append(f"The {len(top)} most linked targets:")
    blocks.append(md_table(["target", "links"], [(t, int(n)) for t, n in top], "lr"))
    return Section("Wikipedia pages and links", tuple(blocks))


#: The prefix of the scan's counts of removed templates that stood between words, by name.
IN_SENTENCE = "templates_removed_in_sentence_"
TOP_TEMPLATES = 15


def _template_blocks(stats: Mapping[str, Any]) -> list[Block]:
    """What the text lost: templates removed, and those of them that stood between words, by name."""
    removed, shown = int(stats.get("templates_removed", 0)), int(stats.get("templates_shown", 0))
    if not removed + shown:
        return []
    in_sentence = int(stats.get("templates_removed_in_sentence", 0))
    blocks: list[Block] = [
        f"Templates: {fmt(shown)} show words and are rendered (dates, units, languages, dashes, …); "
        f"{fmt(removed)} are removed (infoboxes, citations, footnote markers, …). "
        f"{fmt(in_sentence)} of the removed ones stood between words of a sentence, so the text has "
        "nothing where the page shows something (a footnote marker, a tag, or words no rule renders)."
    ]
    named = sorted(
        ((key.removeprefix(IN_SENTENCE), int(n)) for key, n in stats.items() if key.startswith(IN_SENTENCE)),
        key=lambda item: (-item[1], item[0]),
    )
    if named and in_sentence:
        blocks.append(f"The {min(len(named), TOP_TEMPLATES)} most frequent of them:")
        blocks.append(
            md_table(
                ["template", "removed between words", "share"],
                [(f"`{name}`", n, percent(n / in_sentence)) for name, n in named[:TOP_TEMPLATES]],
                "lrr",
            )
        )
    return blocks


register_card(
    "wikidata",
    sections=(wikidata_section,),
    summary="The normalized tables of one Wikidata JSON dump: entities, aliases, truthy statements, "
    "sitelinks and redirects, the input of every other target.",
    content=Content(
        wikidata="entities with their labels, descriptions, aliases, truthy statements and sitelinks"
    ),
)
register_card(
    "wikipedia",
    sections=(wikipedia_section,),
    summary="The normalized tables of one Wikipedia XML dump: every page as plain text with its "
    "paragraphs, and every article link with its anchor and offsets.",
    content=Content(wikipedia="every page's title and plain text, and the anchors and targets of its links"),
)
