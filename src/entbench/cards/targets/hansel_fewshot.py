"""The `hansel-fewshot` card: how the corpus's alias matches became annotation candidates (Hansel
§3.3, appendix A), and the candidates themselves.

The `hansel_fewshot` stage counts phrases and occurrences at each rule
(`phrases_dropped_<rule>`, `occurrences_dropped_<rule>`), then how many phrases it drew uniformly
and among the ambiguous ones; its table `fewshot_candidates` holds one record per drawn phrase.
"""

from __future__ import annotations

from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt, integer_histogram, md_table
from entbench.cards.hub import HANSEL
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import stage_link
from entbench.cards.targets.hansel import conversion_section, wiki_section

#: The rules in the order the stage applies them (`hansel.fewshot`), with what dropping means.
RULES = {
    "single_character": "a single character",
    "p_unlinked": "P(unlinked|m) too high",
    "few_known_candidates": "too few E_known candidates",
}
COLUMNS = ("id", "text", "start", "end", "mention", "criterion", "candidates", "at1", "at1_p")
SHOWN = 10
CONTEXT_CHARS = 12


def fewshot_section(view: BuildView) -> Section | None:
    """The phrase funnel (table and plot), candidates per record, and the first records."""
    stage = view.find("fewshot_candidates", columns=COLUMNS)
    if stage is None:
        return None
    stats = view.stats(stage)
    params = view.manifests[stage]["params"]
    steps = [
        ("matched in the corpus", "matched"),
        *((f"dropped: {why}", f"dropped_{rule}") for rule, why in RULES.items()),
        ("kept", "kept"),
    ]
    funnel = [
        (label, int(stats.get(f"phrases_{key}", 0)), int(stats.get(f"occurrences_{key}", 0)))
        for label, key in steps
    ]
    funnel[-1] = (funnel[-1][0], funnel[-1][1], funnel[0][2] - sum(o for _, _, o in funnel[1:-1]))
    blocks: list[Block] = [
        f"Every alias-table phrase found in the corpus, checked against the rules (at least "
        f"{params.get('min_chars', '–')} characters, P(unlinked|m) ≤ {params.get('max_p_unlinked', '–')}, "
        f"at least {params.get('min_known_candidates', '–')} E_known candidates), then drawn: half "
        f"uniformly, half among ambiguous phrases (`{stage_link(stage)}`).",
        md_table(["step", "phrases", "occurrences"], funnel, "lrr"),
        Chart(
            "phrase_funnel.png",
            f"{view.target}: corpus phrases by rule",
            tuple(label for label, _, _ in funnel),
            (
                ("phrases", tuple(float(p) for _, p, _ in funnel)),
                ("occurrences", tuple(float(o) for _, _, o in funnel)),
            ),
            xlabel="count",
            style="barh",
        ),
        f"Drawn: {fmt(int(stats.get('drawn_uniform', 0)))} uniformly and "
        f"{fmt(int(stats.get('drawn_ambiguous', 0)))} among ambiguous phrases, of `size` = "
        f"{params.get('size', '–')} asked ({fmt(int(stats.get('draws_short', 0)))} short: the kept "
        "phrases allowed no more).",
    ]
    source = {"f": (stage, "fewshot_candidates")}
    per_record = {
        int(n): int(c)
        for n, c in view.query("SELECT len(candidates) AS n, count(*) FROM f GROUP BY n", source)
    }
    labels, values = integer_histogram(per_record, max_bins=30)
    blocks.append(
        Chart(
            "candidates_per_record.png",
            f"{view.target}: E_known candidates shown per record",
            labels,
            (("", values),),
            xlabel="candidates",
            ylabel="records",
            style="hist",
        )
    )
    rows = view.query(
        'SELECT id, text, start, "end", criterion, len(candidates), at1, candidates[1].label, at1_p '
        f"FROM f ORDER BY example_index LIMIT {SHOWN}",
        source,
    )
    if rows:
        blocks.append(
            f"The first {len(rows)} records (the mention in **bold**, AT@1 = the most likely candidate):"
        )
        blocks.append(
            md_table(
                ["id", "context", "drawn", "candidates", "AT@1", "AT@1 label", "P(AT@1|m)"],
                [
                    (i, _context(str(text), int(s), int(e)), c, int(k), q, lab or "–", round(float(p), 4))
                    for i, text, s, e, c, k, q, lab, p in rows
                ],
                "lllrllr",
            )
        )
    return Section("Few-shot candidates", tuple(blocks))


def _context(text: str, start: int, end: int) -> str:
    """The mention in bold with a few characters either side (code points, as the offsets)."""
    left = max(0, start - CONTEXT_CHARS)
    right = min(len(text), end + CONTEXT_CHARS)
    before = ("…" if left else "") + text[left:start]
    after = text[end:right] + ("…" if right < len(text) else "")
    return f"{before}**{text[start:end]}**{after}".replace("\n", " ")


register_card(
    "hansel-fewshot",
    sections=(wiki_section, fewshot_section, conversion_section),
    splits=("fewshot_candidates",),
    summary=(
        "Hansel few-shot candidates (Xu et al. 2022, §3.3, appendix A): alias-table matches over a raw "
        "corpus, sampled uniformly over phrases and over ambiguous phrases, for annotation."
    ),
    content=Content(
        wikipedia="the matched phrases, which are alias-table mentions (the wiki's link anchors, "
        "titles and redirects), and P(unlinked|m) measured on the wiki's article text",
        wikidata="the candidate QIDs with their labels and descriptions",
        other="the contexts, passages of the raw `corpus` source (the bundled fixture's corpus is "
        "zhwiki text, CC BY-SA)",
    ),
    hub=HANSEL,
)
