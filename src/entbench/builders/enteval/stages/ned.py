"""NED task stage (EntEval §3.7; spec §8): `enteval_conll_yago`, AIDA CoNLL-YAGO with alias-table
candidates.

Per linked mention: the gold article is its Wikipedia title matched to an article of the dump
(`Describer`, by default exact, redirect or case-insensitive only: `min_score = 100`); candidates
are the mention's top `max_candidates` entries of the alias table (`alias_table`, spec §4; the
mention normalised as the table was), each aligned to its enwiki article through its sitelink title
(`title_qid`) and described (`wikient_descriptions`). Candidates without an article or description
are discarded (`candidates_unaligned`); a gold without one drops the mention
(`dropped_gold_unmatched`), since the paper attached a description to every gold by hand. The gold
goes first; missing from the candidates it gets prior 1e-6; priors are renormalised.

With `candidate_dictionary` (a `mention<TAB>entity<TAB>count` file, e.g. CrossWikis in that form)
the candidates are the mention's top `max_candidates` dictionary entries instead (the mention as
written in AIDA), each title aligned to an article by exact, redirect or case-insensitive match.

The prior-only accuracy (§3.7: 58.2%) is counted per split (`prior_only_correct_<split>`,
`prior_only_tied_<split>` beside `mentions_written_<split>`) and given as shares in the manifest
(`prior_only_accuracy`, `prior_only_accuracy_<split>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from msgspec import Meta

from entbench.builders.alias.lookup import AliasTables, lookup
from entbench.builders.enteval import ned
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.stages.common import Describer, TaskOutput, TaskStage, check_scorer, parse
from entbench.builders.enteval.stages.sources import SourceLines, TaskParams
from entbench.builders.enteval.tsv import clean
from entbench.engine.duck import stage_connection
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats
from entbench.filters.mentions import MentionNormalizer


@dataclass(frozen=True)
class NedParams(TaskParams):
    """`source`: the AIDA CoNLL-YAGO tsv; `candidate_dictionary`: candidates from this file instead
    of the alias table; `max_candidates` (§3.7: 30, gold included); gold matching (`min_score`,
    `scorer`); `lowercase` sentences and descriptions (titles are kept)."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)
    OPTIONAL_SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("candidate_dictionary",)

    source: Annotated[
        str,
        Meta(description="the AIDA CoNLL-YAGO tsv"),
    ] = ""
    candidate_dictionary: Annotated[
        str,
        Meta(
            description=(
                "a `mention<TAB>entity<TAB>count` file (e.g. CrossWikis in that form) to take "
                "candidates from instead of the alias table"
            )
        ),
    ] = ""
    max_candidates: Annotated[
        int,
        Meta(ge=1, description="candidates per mention, gold included"),
    ] = 30
    lowercase: Annotated[
        bool,
        Meta(description="lowercase sentences and descriptions"),
    ] = True
    min_score: Annotated[
        float,
        Meta(ge=0, le=100, description="gold title matching: 100 = exact, redirect or case-insensitive only"),
    ] = 100.0
    scorer: Annotated[
        str,
        Meta(description="the fuzzy scorer"),
    ] = "ratio"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_scorer(self.scorer)


class NedStage(TaskStage[NedParams]):
    """CoNLL-YAGO candidate lists, gold first (`enteval.ned`)."""

    name = "enteval_conll_yago"
    version = 2  # 2: prior-only accuracy counted; candidates from a dictionary
    inputs = ("wikient_descriptions", "title_qid", "alias_table")
    description = "EntEval NED: CoNLL-YAGO with top-30 alias-table (or dictionary) candidates, gold first"
    task = "conll_yago"
    files = tuple(ned.FILES.values())
    writes_matches = True

    def build(self, ctx: StageContext[NedParams], p: NedParams, stats: Stats) -> TaskOutput:
        """Parse AIDA, match golds, look candidates up, write one line per linked mention."""
        mentions: list[ned.AidaMention] = parse(self.read(p, "source"), ned.parse_aida)
        linked = [m for m in mentions if m.gold is not None]
        stats.add("mentions_read", len(mentions))
        stats.add("dropped_nil_mention", len(mentions) - len(linked))
        describer = Describer(
            ctx, [str(m.gold) for m in linked], min_score=p.min_score, scorer=p.scorer, lowercase=p.lowercase
        )
        if p.candidate_dictionary:
            candidates = _dictionary_candidates(ctx, p, linked, stats)
        else:
            candidates = _alias_candidates(ctx, p, linked, stats)
        output = TaskOutput(matches=list(describer.matches.values()))
        for file in ned.FILES.values():
            output.lines[file] = []
        for mention, ranked in zip(linked, candidates, strict=True):
            match = describer.matches[str(mention.gold)]
            gold_text = describer.describe(str(mention.gold))
            if match.page_id is None or match.title is None or gold_text is None:
                stats.add("dropped_gold_unmatched")
                continue
            aligned: list[ned.Candidate] = []
            texts = {match.page_id: gold_text}
            for candidate, text in ranked:
                if candidate.key not in {c.key for c in aligned}:
                    aligned.append(candidate)
                    texts.setdefault(candidate.key, text)
            gold = ned.Candidate(match.page_id, match.title, ned.MISSING_GOLD_PRIOR)
            chosen, gold_found = ned.candidate_list(gold, aligned, p.max_candidates)
            stats.add("gold_in_candidates" if gold_found else "gold_missing_prior_1e-6")
            words, start, end = ned.sentence_words(mention, p.lowercase)
            line = ned.ned_line(words, start, end, mention.mention, [(c, texts[c.key]) for c in chosen])
            output.lines[ned.FILES[mention.split]].append(line)
            stats.add(f"mentions_written_{mention.split}")
            stats.add("candidates_written", len(chosen))
            verdict = ned.prior_only(chosen)
            if verdict != "wrong":
                stats.add(f"prior_only_{verdict}_{mention.split}")
        return output

    def finalize(self, ctx: StageContext[NedParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """The prior-only accuracy, overall and per split, as shares of the mentions written."""
        if "skipped_no_source" in stats:
            return {}
        shares: dict[str, Any] = {}
        written = correct = 0
        for split in ned.SPLITS:
            n, right = stats.get(f"mentions_written_{split}", 0), stats.get(f"prior_only_correct_{split}", 0)
            written, correct = written + n, correct + right
            shares[f"prior_only_accuracy_{split}"] = round(right / n, 6) if n else None
        shares["prior_only_accuracy"] = round(correct / written, 6) if written else None
        return shares


#: A mention's candidates: each aligned to its article (page id, title, prior) with its description.
Ranked = list[tuple[ned.Candidate, str]]


def _alias_candidates(
    ctx: StageContext, p: NedParams, linked: Sequence[ned.AidaMention], stats: Stats
) -> list[Ranked]:
    """Each mention's top alias-table candidates that have an article, in rank order."""
    tables = _alias_tables(ctx)
    normalized = tables.normalize([m.mention for m in linked])
    ranked = lookup(tables, sorted(set(normalized)), top=p.max_candidates)
    articles = _articles(ctx, sorted({c.qid for cands in ranked.values() for c in cands}), p.lowercase)
    result: list[Ranked] = []
    for key in normalized:
        aligned: Ranked = []
        for candidate in ranked.get(key, []):
            article = articles.get(candidate.qid)
            if article is None:
                stats.add("candidates_unaligned")
                continue
            page_id, title, text = article
            aligned.append((ned.Candidate(page_id, title, candidate.p_e_given_m), text))
        result.append(aligned)
    return result


def _dictionary_candidates(
    ctx: StageContext, p: NedParams, linked: Sequence[ned.AidaMention], stats: Stats
) -> list[Ranked]:
    """Each mention's top dictionary entries that match an article title, in rank order."""
    keys = [clean(m.mention) for m in linked]
    source = SourceLines(p.source_path("candidate_dictionary"))
    try:
        entries = ned.read_dictionary(iter(source), set(keys), p.max_candidates)
    except SourceError as exc:
        raise source.error(exc) from exc
    titles = Describer(
        ctx,
        sorted({e.title for found in entries.values() for e in found}),
        min_score=100.0,
        scorer=p.scorer,
        lowercase=p.lowercase,
    )
    result: list[Ranked] = []
    for key in keys:
        aligned: Ranked = []
        for entry in entries.get(key, []):
            match = titles.matches[entry.title]
            text = titles.describe(entry.title)
            if match.page_id is None or match.title is None or text is None:
                stats.add("candidates_unaligned")
                continue
            aligned.append((ned.Candidate(match.page_id, match.title, entry.prior), text))
        result.append(aligned)
    return result


def _alias_tables(ctx: StageContext) -> AliasTables:
    """The upstream alias table and the normaliser it was built with."""
    upstream = ctx.inputs["alias_table"]
    normalizer = MentionNormalizer.from_json(upstream.side_file("normalization"))
    return AliasTables(tuple(upstream.files("alias_table")), (), normalizer)


def _articles(ctx: StageContext, qids: Sequence[str], lowercase: bool) -> dict[str, tuple[int, str, str]]:
    """QID -> (page id, title, description) of its article: the page its sitelink title leads to."""
    if not qids:
        return {}
    con = stage_connection(ctx, tasks=ctx.num_shards)
    try:
        rows = con.execute(
            "SELECT t.qid, d.page_id, d.title, d.description "
            "FROM read_parquet($titles) t JOIN read_parquet($descriptions) d ON d.page_id = t.page_id "
            "WHERE t.status = 'sitelink' AND t.qid IN (SELECT unnest($qids)) ORDER BY t.qid, d.page_id",
            {
                "titles": ctx.inputs["title_qid"].files("title_qid"),
                "descriptions": ctx.inputs["wikient_descriptions"].files("descriptions"),
                "qids": list(qids),
            },
        ).fetchall()
    finally:
        con.close()
    result: dict[str, tuple[int, str, str]] = {}
    for qid, page_id, title, text in rows:
        result.setdefault(str(qid), (int(page_id), str(title), str(text).lower() if lowercase else str(text)))
    return result
