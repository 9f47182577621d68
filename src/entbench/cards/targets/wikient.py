"""The `wikient` card: WikiEnt instances (EntEval §4.3), what became of the dump's links, links per
sentence, mention lengths and the most linked articles.

An instance is one hyperlink of a sentence: the sentence split into word tokens, the link's token
span [`mention_start`, `mention_end`), the linked article and its description.
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, fmt, integer_histogram, md_escape, md_table, percent
from entbench.cards.hub import ENTEVAL
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import stage_link

COLUMNS = ("sentence", "mention_start", "mention_end", "mention", "target_qid", "target_title", "page_id")
TOP_TARGETS = 10
EXAMPLES = 3
EXAMPLE_CHARS = 160


def wikient_section(view: BuildView) -> Section | None:
    """Counts, link outcomes, links per sentence, mention lengths, top targets and examples."""
    stage = view.find("wikient", columns=COLUMNS)
    if stage is None:
        return None
    source = {"w": (stage, "wikient")}
    ((instances, sentences, pages, targets, with_qid),) = view.query(
        "SELECT count(*), count(DISTINCT (page_id, sentence)), count(DISTINCT page_id), "
        "count(DISTINCT target_title), count(target_qid) FROM w",
        source,
    )
    stats = view.stats(stage)
    blocks: list[Block] = [
        f"One instance per hyperlink of a sentence, with the linked article's description "
        f"(`{stage_link(stage)}`).",
        md_table(
            ["instances", "sentences", "source articles", "linked articles", "instances with a QID"],
            [
                (
                    int(instances),
                    int(sentences),
                    int(pages),
                    int(targets),
                    f"{fmt(int(with_qid))} ({percent(int(with_qid) / int(instances)) if instances else '–'})",
                )
            ],
            "rrrrr",
        ),
    ]
    outcomes = [("instance", float(stats.get("instances", instances)))]
    outcomes += [
        (key.removeprefix("dropped_").replace("_", " "), float(value))
        for key, value in sorted(stats.items())
        if key.startswith("dropped_") and isinstance(value, int | float) and value
    ]
    blocks.append(
        f"What became of the {fmt(int(stats.get('links_read', 0)))} article links of the dump "
        "(a link is dropped when its target has no page or text in the dump, or its anchor cannot be "
        "placed in a sentence):"
    )
    blocks.append(
        bar_chart(
            "link_outcomes.png",
            f"{view.target}: article links by outcome",
            outcomes,
            xlabel="links",
            horizontal=True,
        )
    )
    per_sentence = {
        int(n): int(c)
        for n, c in view.query(
            "SELECT n, count(*) FROM (SELECT count(*) AS n FROM w GROUP BY page_id, sentence) GROUP BY n",
            source,
        )
    }
    labels, values = integer_histogram(per_sentence, max_bins=30)
    blocks.append(
        Chart(
            "links_per_sentence.png",
            f"{view.target}: sentences by their number of links (instances)",
            labels,
            (("", values),),
            xlabel="links in the sentence",
            ylabel="sentences",
            style="hist",
        )
    )
    lengths = {
        int(n): int(c)
        for n, c in view.query("SELECT mention_end - mention_start AS n, count(*) FROM w GROUP BY n", source)
    }
    labels, values = integer_histogram(lengths, max_bins=30)
    blocks.append(
        Chart(
            "mention_tokens.png",
            f"{view.target}: mention length (word tokens)",
            labels,
            (("", values),),
            xlabel="tokens in the mention",
            ylabel="instances",
            style="hist",
        )
    )
    top = view.query(
        "SELECT target_title, any_value(target_qid), count(*) AS n FROM w GROUP BY target_title "
        f"ORDER BY n DESC, target_title LIMIT {TOP_TARGETS}",
        source,
    )
    blocks.append(f"The {len(top)} most linked articles:")
    blocks.append(
        md_table(["article", "QID", "instances"], [(t, q or "–", int(n)) for t, q, n in top], "llr")
    )
    examples = view.query(
        "SELECT sentence, mention_start, mention_end, target_title FROM w "
        f"ORDER BY page_id, link_ordinal LIMIT {EXAMPLES}",
        source,
    )
    if examples:
        blocks.append("The first instances (the mention in **bold**):")
        blocks.append("\n".join(f"- {_marked(*row)}" for row in examples))
    return Section("WikiEnt", tuple(blocks))


def _marked(sentence: str, start: int, end: int, target: str) -> str:
    """The sentence with tokens [start, end) in bold, cut to about EXAMPLE_CHARS, → its article."""
    tokens = sentence.split()
    before, mention, after = tokens[:start], tokens[start:end], tokens[end:]
    text = " ".join([*before, f"**{' '.join(mention)}**", *after])
    if len(text) > EXAMPLE_CHARS:
        text = text[:EXAMPLE_CHARS].rsplit(" ", 1)[0] + " …"
        if text.count("**") % 2:
            text += "**"
    return f"{md_escape(text)} → *{md_escape(target)}*"


register_card(
    "wikient",
    sections=(wikient_section,),
    summary=(
        "WikiEnt (EntEval, Chen et al. 2019, §4.3): hyperlinked sentences of Wikipedia, one instance "
        "per link, with the linked article's description, for training entity representations."
    ),
    content=Content(
        wikipedia="the sentences of articles with their link anchors, and the linked articles' "
        "descriptions (their first words)",
        wikidata="the QIDs of the linked articles",
    ),
    hub=ENTEVAL,
)
