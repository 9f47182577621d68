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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, cast

from entbench.builders.alias.lookup import AliasTables, lookup
from entbench.builders.alias.stages.alias_table import NORMALIZATION_FILE
from entbench.builders.enteval import ned
from entbench.builders.enteval.stages.common import Describer, TaskOutput, TaskStage, check_matching, parse
from entbench.builders.enteval.stages.sources import TaskParams
from entbench.engine.duck import stage_connection
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats
from entbench.filters.mentions import MentionNormalizer


@dataclass(frozen=True)
class NedParams(TaskParams):
    """`source`: the AIDA CoNLL-YAGO tsv; `max_candidates` (§3.7: 30, gold included); gold matching
    (`min_score`, `scorer`); `lowercase` sentences and descriptions (titles are kept)."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)

    source: str = ""
    max_candidates: int = 30
    lowercase: bool = True
    min_score: float = 100.0
    scorer: str = "ratio"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_candidates < 1:
            raise ValueError("max_candidates must be >= 1")
        check_matching(self.min_score, self.scorer, "drop")


class NedStage(TaskStage):
    """CoNLL-YAGO candidate lists, gold first (`enteval.ned`)."""

    name = "enteval_conll_yago"
    version = 1
    params_type = NedParams
    inputs = ("wikient_descriptions", "title_qid", "alias_table")
    description = "EntEval NED: CoNLL-YAGO with top-30 alias-table candidates, gold first"
    task = "conll_yago"
    files = tuple(ned.FILES.values())
    writes_matches = True

    def build(self, ctx: StageContext, params: TaskParams, stats: Stats) -> TaskOutput:
        """Parse AIDA, match golds, look candidates up, write one line per linked mention."""
        p = cast(NedParams, params)
        mentions: list[ned.AidaMention] = parse(self.read(p, "source"), ned.parse_aida)
        linked = [m for m in mentions if m.gold is not None]
        stats.add("mentions_read", len(mentions))
        stats.add("dropped_nil_mention", len(mentions) - len(linked))
        describer = Describer(
            ctx, [str(m.gold) for m in linked], min_score=p.min_score, scorer=p.scorer, lowercase=p.lowercase
        )
        tables = _alias_tables(ctx)
        normalized = tables.normalize([m.mention for m in linked])
        ranked = lookup(tables, sorted(set(normalized)), top=p.max_candidates)
        articles = _articles(ctx, sorted({c.qid for cands in ranked.values() for c in cands}), p.lowercase)
        output = TaskOutput(matches=list(describer.matches.values()))
        for file in ned.FILES.values():
            output.lines[file] = []
        for mention, key in zip(linked, normalized, strict=True):
            match = describer.matches[str(mention.gold)]
            gold_text = describer.describe(str(mention.gold))
            if match.page_id is None or match.title is None or gold_text is None:
                stats.add("dropped_gold_unmatched")
                continue
            aligned: list[ned.Candidate] = []
            texts = {match.page_id: gold_text}
            for candidate in ranked.get(key, []):
                article = articles.get(candidate.qid)
                if article is None:
                    stats.add("candidates_unaligned")
                    continue
                page_id, title, text = article
                if page_id not in {c.key for c in aligned}:
                    aligned.append(ned.Candidate(page_id, title, candidate.p_e_given_m))
                    texts.setdefault(page_id, text)
            gold = ned.Candidate(match.page_id, match.title, ned.MISSING_GOLD_PRIOR)
            chosen, gold_found = ned.candidate_list(gold, aligned, p.max_candidates)
            stats.add("gold_in_candidates" if gold_found else "gold_missing_prior_1e-6")
            words, start, end = ned.sentence_words(mention, p.lowercase)
            line = ned.ned_line(words, start, end, mention.mention, [(c, texts[c.key]) for c in chosen])
            output.lines[ned.FILES[mention.split]].append(line)
            stats.add(f"mentions_written_{mention.split}")
            stats.add("candidates_written", len(chosen))
        return output


def _alias_tables(ctx: StageContext) -> AliasTables:
    """The upstream alias table and the normaliser it was built with."""
    upstream = ctx.inputs["alias_table"]
    norm = json.loads((Path(upstream.directory) / NORMALIZATION_FILE).read_text(encoding="utf-8"))
    normalizer = MentionNormalizer.from_json(norm)
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
