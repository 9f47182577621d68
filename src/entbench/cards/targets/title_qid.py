"""The `title-qid` card: titles and the links pointing at them, by how they resolved to a QID.

Every title of the Wikipedia dump (pages, redirect targets, link targets) gets a status
(`schemas.alias.TITLE_STATUSES`); `link_count` is how many article links point at it, so the card
can say how much of the dump's linking each status accounts for.
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt, integer_histogram, md_table, percent
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import stage_link
from entbench.schemas.alias import TITLE_STATUSES

TOP_TITLES = 15


def title_qid_section(view: BuildView) -> Section | None:
    """Titles and links by status, redirect hops, most linked titles, links per title."""
    stage = view.find("title_qid", columns=("title", "qid", "status", "hops", "link_count"))
    if stage is None:
        return None
    source = {"tq": (stage, "title_qid")}
    by_status = {
        str(status): (int(titles), int(links or 0))
        for status, titles, links in view.query(
            "SELECT status, count(*), sum(link_count) FROM tq GROUP BY status", source
        )
    }
    order = [s for s in TITLE_STATUSES if s in by_status] + sorted(set(by_status) - set(TITLE_STATUSES))
    titles = sum(t for t, _ in by_status.values())
    links = sum(n for _, n in by_status.values())
    resolved = {"sitelink", "redirect"}
    resolved_links = sum(by_status[s][1] for s in order if s in resolved)
    blocks: list[Block] = [
        f"Every title the dump mentions, resolved to a Wikidata item through sitelinks, redirects "
        f"followed (`{stage_link(stage)}`). **{fmt(resolved_links)} of {fmt(links)} article links** "
        f"({percent(resolved_links / links) if links else '–'}) point at a title with a QID.",
        md_table(
            ["status", "titles", "links pointing at them", "share of links"],
            [
                (s, by_status[s][0], by_status[s][1], percent(by_status[s][1] / links) if links else "–")
                for s in order
            ],
            "lrrr",
        ),
        Chart(
            "titles_by_status.png",
            f"{view.target}: titles and links by resolution status",
            tuple(order),
            (
                ("titles", tuple(float(by_status[s][0]) for s in order)),
                ("links", tuple(float(by_status[s][1]) for s in order)),
            ),
            xlabel="count",
            style="barh",
        ),
    ]
    ((hops_max, via_redirect, disambiguation),) = view.query(
        "SELECT max(hops), count(*) FILTER (WHERE status = 'redirect'), "
        "count(*) FILTER (WHERE is_disambiguation) FROM tq",
        source,
    )
    blocks.append(
        f"Titles resolved through redirects: {fmt(int(via_redirect))} (longest chain followed: "
        f"{fmt(int(hops_max or 0))} hop(s), parameter `max_hops` = "
        f"{view.manifests[stage]['params'].get('max_hops', '–')}); titles of disambiguation pages: "
        f"{fmt(int(disambiguation))}; titles in all: {fmt(titles)}."
    )
    per_title = {
        int(n): int(c)
        for n, c in view.query(
            "SELECT link_count, count(*) FROM tq WHERE link_count > 0 GROUP BY link_count", source
        )
    }
    labels, values = integer_histogram(per_title, max_bins=30)
    blocks.append(
        Chart(
            "links_per_title.png",
            f"{view.target}: titles by the number of links pointing at them",
            labels,
            (("", values),),
            xlabel="links pointing at the title",
            ylabel="titles",
            style="hist",
        )
    )
    top = view.query(
        f"SELECT title, qid, status, link_count FROM tq ORDER BY link_count DESC, title LIMIT {TOP_TITLES}",
        source,
    )
    names = view.labels([str(q) for _, q, _, _ in top if q], [*view.wiki_languages(), "en"])
    blocks.append(f"The {len(top)} most linked titles:")
    blocks.append(
        md_table(
            ["title", "QID", "item label", "status", "links"],
            [(t, q or "–", names.get(str(q), "–"), s, int(n)) for t, q, s, n in top],
            "llllr",
        )
    )
    return Section("Title → QID", tuple(blocks))


register_card(
    "title-qid",
    sections=(title_qid_section,),
    summary=(
        "Title → QID: every title a Wikipedia dump mentions (pages, redirects, link targets) with the "
        "Wikidata item it names, through sitelinks and redirects, as mGENRE resolves them."
    ),
    content=Content(
        wikipedia="the titles that the dump's pages, redirects and links name, and how often each "
        "is linked, taken from article text",
        wikidata="the QIDs they resolve to, through Wikidata sitelinks",
    ),
)
