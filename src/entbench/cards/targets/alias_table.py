"""The `alias-table` card: AT-base's ambiguity, P(unlinked|m) and link resolution (Hansel §3.1
and appendix A).

    P(e|m) = count(m, e) / Σ_e' count(m, e')        candidates per mention = |{e : count(m, e) > 0}|
    P(unlinked|m) = occurrences of m outside any link / all occurrences of m in article text
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, fmt, integer_histogram, md_table, percent
from entbench.cards.hub import HANSEL
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card

TOP_MENTIONS = 15
UNLINKED_BINS = 10


def alias_section(view: BuildView) -> Section | None:
    """Ambiguity histogram, P(unlinked|m) histogram, link-resolution bars, most linked mentions."""
    alias_stage = view.find("alias_table", columns=("mention", "qid", "count", "p_e_given_m", "rank"))
    if alias_stage is None:
        return None
    source = {"alias_rows": (alias_stage, "alias_table")}
    per_mention = view.query(
        "SELECT n, count(*) FROM (SELECT count(*) AS n FROM alias_rows GROUP BY mention) GROUP BY n", source
    )
    counts = {int(n): int(c) for n, c in per_mention}
    mentions = sum(counts.values())
    candidates = sum(n * c for n, c in counts.items())
    ambiguous = sum(c for n, c in counts.items() if n >= 2)
    blocks: list[Block] = [
        "AT-base (Hansel §3.1, appendix A): count(m, e) = anchors m linking to e (after redirects) "
        "+ title weight·[m is e's title] + redirect weight·[m redirects to e]; "
        "P(e|m) = count(m, e) / Σ count(m, ·).",
        md_table(
            ["mentions", "candidates", "candidates per mention", "ambiguous mentions (≥ 2 candidates)"],
            [
                (
                    mentions,
                    candidates,
                    candidates / mentions if mentions else 0.0,
                    f"{fmt(ambiguous)} ({percent(ambiguous / mentions) if mentions else '–'})",
                )
            ],
            "rrrr",
        ),
    ]
    labels, values = integer_histogram(counts, max_bins=30)
    blocks.append(
        Chart(
            "candidates_per_mention.png",
            f"{view.target}: candidates per mention",
            labels,
            (("", values),),
            xlabel="candidate entities",
            ylabel="mentions",
            style="hist",
        )
    )
    top = view.query(
        "SELECT mention, sum(count) AS total, count(*) AS k, "
        "min(qid) FILTER (WHERE rank = 1), max(p_e_given_m) "
        f"FROM alias_rows GROUP BY mention ORDER BY total DESC, mention LIMIT {TOP_MENTIONS}",
        source,
    )
    if top:
        names = view.labels([str(q) for *_, q, _ in top], [*view.wiki_languages(), "en"])
        blocks.append(f"The {len(top)} mentions with the highest total count:")
        blocks.append(
            md_table(
                ["mention", "count", "candidates", "top candidate", "its label", "P(e|m)"],
                [(m, int(t), int(k), q, names.get(str(q), "–"), round(float(p), 4)) for m, t, k, q, p in top],
                "lrrllr",
            )
        )
    stats_stage = view.find("mention_stats", columns=("mention", "p_unlinked"))
    if stats_stage is not None:
        blocks.append(unlinked_chart(view, stats_stage))
    resolution = link_resolution(view)
    if resolution is not None:
        blocks.append(resolution)
    return Section("Alias table", tuple(blocks))


def unlinked_chart(view: BuildView, stage: str) -> Chart:
    """Mentions by P(unlinked|m) in tenths; mentions never found in text are their own bar."""
    rows = view.query(
        f"SELECT CASE WHEN p_unlinked IS NULL THEN -1 ELSE least(floor(p_unlinked * {UNLINKED_BINS}), "
        f"{UNLINKED_BINS - 1}) END AS b, count(*) FROM ms GROUP BY b",
        {"ms": (stage, "mention_stats")},
    )
    counts = {int(b): int(n) for b, n in rows}
    labels = [f"{b / UNLINKED_BINS:.1f}–{(b + 1) / UNLINKED_BINS:.1f}" for b in range(UNLINKED_BINS)]
    values = [float(counts.get(b, 0)) for b in range(UNLINKED_BINS)]
    if counts.get(-1):
        labels.append("never found")
        values.append(float(counts[-1]))
    return Chart(
        "p_unlinked.png",
        f"{view.target}: mentions by P(unlinked|m)",
        tuple(labels),
        (("", tuple(values)),),
        xlabel="P(unlinked|m)",
        ylabel="mentions",
    )


def link_resolution(view: BuildView) -> Chart | None:
    """Links of the dump by how their target resolved to a QID (`title_qid` stats)."""
    stage = view.find("title_qid", columns=("title", "qid", "status"))
    if stage is None:
        return None
    stats = view.stats(stage)
    rows = [("resolved", float(stats.get("links_resolved", 0)))]
    prefix = "links_unresolved_"
    rows += [
        (k[len(prefix) :].replace("_", " "), float(v))
        for k, v in sorted(stats.items())
        if k.startswith(prefix)
    ]
    return bar_chart(
        "link_resolution.png",
        f"{view.target}: article links by title → QID resolution",
        rows,
        xlabel="links",
        horizontal=True,
    )


_SUMMARY = (
    "AT-base, the alias table of Hansel (Xu et al. 2022, §3.1): for each normalised mention m the "
    "candidate entities e with P(e|m), from Wikipedia anchors, titles and redirects, and "
    "P(unlinked|m) from article text."
)
_CONTENT = Content(
    wikipedia="the mentions, which are link anchors, page titles and redirect titles of the Wikipedia "
    "dump, with counts and P(unlinked|m) measured on its article text",
    wikidata="the candidate QIDs, reached through Wikidata sitelinks",
)
for _target in ("alias-table", "alias-table-kb"):
    register_card(_target, sections=(alias_section,), summary=_SUMMARY, content=_CONTENT, hub=HANSEL)
