"""Stage `hansel_fewshot`: few-shot annotation candidates from alias matches (spec §5; Hansel §3.3, app. A).

"We first use AT-base to match against the corpora to generate candidates, then sample ambiguous
mentions diversified by mention-text for human annotation." (Hansel §3.3)

Over `hansel_corpus.matches`, every matched phrase is checked against the rules of
`hansel.fewshot` (no single-character mentions, P(unlinked|m) <= `max_p_unlinked` from the alias
table's mention statistics, at least `min_known_candidates` E_known candidates), phrases are drawn
half uniformly and half among the ambiguous ones (at least `ambiguous_candidates` alias-table
candidates), one occurrence each, with one seeded generator (`seed`). Each drawn occurrence
becomes a record `hansel-fewshot-N` (numbered in (doc_id, start) order) with its context
(`context`, `window`; corpus paragraphs are lines, `paragraph_sep`; sentences in the alias table's
wiki language; converted to Simplified with the alias table's `converter` when its keys are Chinese,
as `hansel_corpus` converted the texts), the E_known candidates of its phrase in alias-table order
with their P(e|m), label and description in `language` ('': the alias table's wiki's; at most
`max_candidates`; 0 = all) and what annotators read of each, "its entity description (first
paragraph in Wikipedia) and the original Wikipedia link" (§3.3: title, first paragraph and URL
from `hansel_kb`), and AT@1, the first of them: annotators discard an example whose AT@1 is right
(Hansel §3.3).

Stats: `phrases_matched`, `occurrences_matched`; per rule `phrases_dropped_<reason>` and
`occurrences_dropped_<reason>`; `phrases_kept`, `phrases_ambiguous`; `drawn_uniform`,
`drawn_ambiguous` and `draws_short` (how many fewer than `size` the pools allowed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.hansel.context import ContextMode, context_bounds, to_simplified
from entbench.builders.hansel.fewshot import (
    AMBIGUOUS,
    AMBIGUOUS_CANDIDATES,
    UNIFORM,
    Phrase,
    Rules,
    drop_reason,
    sample_phrases,
)
from entbench.builders.hansel.splits import record_id
from entbench.builders.hansel.stages.corpus import alias_language, alias_normalizer, text_converter
from entbench.engine.duck import parquet_view, stage_connection
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats, counted
from entbench.schemas import hansel as schema
from entbench.schemas.base import column_suffix


@dataclass(frozen=True)
class HanselFewshotParams(Params):
    """Rules (appendix A defaults), sampling (`size` phrases, `seed`) and what records show."""

    size: Annotated[
        int,
        Meta(ge=0, description="phrases to draw"),
    ] = 5000
    seed: Annotated[
        int,
        Meta(description="the sampling seed"),
    ] = 0
    min_chars: Annotated[
        int,
        Meta(ge=0, description="shortest phrase kept (no single characters)"),
    ] = Rules.min_chars
    max_p_unlinked: Annotated[
        float,
        Meta(ge=0, le=1, description="phrases more often unlinked than this are dropped"),
    ] = Rules.max_p_unlinked
    min_known_candidates: Annotated[
        int,
        Meta(ge=1, description="fewest E_known candidates a phrase needs"),
    ] = Rules.min_known_candidates
    ambiguous_candidates: Annotated[
        int,
        Meta(ge=0, description="candidates that make a phrase ambiguous"),
    ] = AMBIGUOUS_CANDIDATES
    max_candidates: Annotated[
        int,
        Meta(ge=0, description="candidates shown per record (0 = all)"),
    ] = 10
    context: Annotated[
        ContextMode,
        Meta(description="`paragraph`, `sentence` or `window`"),
    ] = "paragraph"
    window: Annotated[
        int,
        Meta(ge=0, description="`window`: code points on each side"),
    ] = 100
    paragraph_sep: Annotated[
        str,
        Meta(min_length=1, description="what separates paragraphs in a corpus text"),
    ] = "\n"
    language: Annotated[
        str,
        Meta(description="language of candidate labels and descriptions; empty: the alias table's wiki's"),
    ] = ""

    def rules(self) -> Rules:
        """The filter thresholds."""
        return Rules(self.min_chars, self.max_p_unlinked, self.min_known_candidates)


@dataclass(eq=False)
class HanselFewshot(Stage[HanselFewshotParams]):
    """Sampled few-shot candidates with alias-table candidates for annotators."""

    # 2: candidates carry their title, first paragraph and URL (hansel_kb); 3: the wiki's language
    # for labels and sentences, conversion only when the alias table's keys are Chinese
    version = 3
    layer = "benchmarks"
    default_num_shards = 1
    description = "Hansel few-shot candidates: alias matches, appendix A rules and sampling"
    progress_items = "candidates"

    stage_name: str
    _: KW_ONLY
    corpus: str
    alias_table: str
    mention_stats: str
    entity_texts: str
    kb: str = "entity_diff"

    def __post_init__(self) -> None:
        self.inputs = (self.corpus, self.alias_table, self.mention_stats, self.kb, self.entity_texts)

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How many corpus phrases matched the alias table, and how many had candidates enough."""
        matched = counted(stats, "phrases_matched")
        few = counted(stats, "phrases_dropped_few_known_candidates")
        return (
            f"{matched:,} phrase(s) of the corpus match the alias table, {few:,} of them with fewer than "
            f"two E_known candidates; {counted(stats, 'candidates'):,} candidate(s) drawn of "
            f"{params.get('size', '?')} asked"
        )

    def outputs(self, params: HanselFewshotParams) -> list[Output]:
        """One table, `fewshot_candidates`."""
        return [Output("fewshot_candidates", schema.FEWSHOT, ("example_index",))]

    def shard(self, ctx: StageContext[HanselFewshotParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Filter, sample and assemble the records (one global task: the draws are global)."""
        params = ctx.params
        stats = Stats()
        # the corpus texts were converted as the alias table's keys were: contexts keep to it
        alias_table = ctx.inputs[self.alias_table]
        converter = text_converter(alias_normalizer(alias_table))
        language = params.language or alias_language(alias_table)
        kb_files = ctx.inputs[self.kb].files("kb_entities")
        kb_columns = pq.read_schema(kb_files[0]).names
        suffix = column_suffix(language)
        label = f"k.label_{suffix}" if f"label_{suffix}" in kb_columns else "NULL"
        description = f"k.description_{suffix}" if f"description_{suffix}" in kb_columns else "NULL"
        con = stage_connection(ctx, tasks=1, ordered=False)  # one global task: the draws are global
        try:
            for view, stage, table in (
                ("matches", self.corpus, "matches"),
                ("docs", self.corpus, "docs"),
                ("alias", self.alias_table, "alias_table"),
                ("ms", self.mention_stats, "mention_stats"),
                ("kb", self.kb, "kb_entities"),
                ("texts", self.entity_texts, "kb"),
            ):
                parquet_view(con, view, ctx.inputs[stage].files(table))
            phrases = con.execute(
                "SELECT m.key, m.n, count(a.qid), count(a.qid) FILTER (WHERE k.in_known), "
                "any_value(s.p_unlinked) "
                "FROM (SELECT key, count(*) AS n FROM matches GROUP BY key) m "
                "LEFT JOIN alias a ON a.mention = m.key LEFT JOIN kb k ON k.qid = a.qid "
                "LEFT JOIN ms s ON s.mention = m.key GROUP BY m.key, m.n ORDER BY m.key"
            ).fetchall()
            kept, ambiguous, info = self._filter(phrases, params, stats)
            draws = sample_phrases(kept, ambiguous, params.size, params.seed)
            stats.add("drawn_uniform", sum(d.criterion == UNIFORM for d in draws))
            stats.add("drawn_ambiguous", sum(d.criterion == AMBIGUOUS for d in draws))
            stats.add("draws_short", params.size - len(draws))
            con.register(
                "draws",
                pa.table(
                    {
                        "key": pa.array([d.key for d in draws], pa.string()),
                        "criterion": pa.array([d.criterion for d in draws], pa.string()),
                        "occurrence": pa.array([d.occurrence for d in draws], pa.int64()),
                    }
                ),
            )
            chosen = con.execute(
                'SELECT d.key, d.criterion, m.doc_id, m.start, m."end", docs.text FROM ('
                'SELECT key, doc_id, start, "end", '
                "row_number() OVER (PARTITION BY key ORDER BY doc_id, start) - 1 AS occurrence "
                "FROM matches WHERE key IN (SELECT key FROM draws)) m "
                "JOIN draws d ON d.key = m.key AND d.occurrence = m.occurrence "
                "JOIN docs ON docs.doc_id = m.doc_id ORDER BY m.doc_id, m.start"
            ).fetchall()
            candidates: dict[str, list[dict[str, Any]]] = {}
            con.execute(
                "CREATE TEMP TABLE shown AS SELECT a.mention, a.qid, a.p_e_given_m, a.rank, "
                f"{label} AS label, {description} AS description "
                "FROM alias a JOIN kb k ON k.qid = a.qid AND k.in_known "
                "WHERE a.mention IN (SELECT key FROM draws)"
            )
            # The KB's texts of the candidates shown only (the whole KB holds every first paragraph).
            for key, qid, p, rank, lab, desc, title, text, url in con.execute(
                "SELECT s.mention, s.qid, s.p_e_given_m, s.rank, s.label, s.description, t.title, "
                "coalesce(t.text, ''), t.url FROM shown s LEFT JOIN (SELECT id, title, text, url FROM texts "
                "WHERE id IN (SELECT qid FROM shown)) t ON t.id = s.qid ORDER BY s.mention, s.rank"
            ).fetchall():
                candidates.setdefault(key, []).append(
                    {
                        "qid": qid,
                        "p_e_given_m": p,
                        "rank": rank,
                        "label": lab,
                        "description": desc,
                        "title": title,
                        "text": text,
                        "url": url,
                    }
                )
        finally:
            con.close()
        rows = []
        for index, (key, criterion, doc_id, start, end, text) in enumerate(chosen):
            lo, hi = context_bounds(
                text,
                start,
                end,
                params.context,
                paragraph_sep=params.paragraph_sep,
                window=params.window,
                language=language,
            )
            context, converged = to_simplified(text[lo:hi], converter)
            stats.add("contexts_not_converged", not converged)
            shown = candidates[key][: params.max_candidates] if params.max_candidates else candidates[key]
            n, n_candidates, p_unlinked = info[key]
            rows.append(
                {
                    "id": record_id("fewshot", index),
                    "text": context,
                    "start": start - lo,
                    "end": end - lo,
                    "mention": context[start - lo : end - lo],
                    "example_index": index,
                    "doc_id": doc_id,
                    "doc_start": lo,
                    "key": key,
                    "criterion": criterion,
                    "occurrences": n,
                    "p_unlinked": p_unlinked,
                    "candidates_in_table": n_candidates,
                    "candidates": shown,
                    "at1": shown[0]["qid"],
                    "at1_p": shown[0]["p_e_given_m"],
                }
            )
        stats.add("candidates", len(rows))
        return {"fewshot_candidates": pa.Table.from_pylist(rows, schema=schema.FEWSHOT)}, stats

    @staticmethod
    def _filter(
        phrases: list[tuple[str, int, int, int, float | None]], params: HanselFewshotParams, stats: Stats
    ) -> tuple[dict[str, int], list[str], dict[str, tuple[int, int, float | None]]]:
        """Apply the rules: kept phrase -> occurrences, the ambiguous ones, and per-phrase facts."""
        rules = params.rules()
        kept: dict[str, int] = {}
        ambiguous: list[str] = []
        info: dict[str, tuple[int, int, float | None]] = {}
        for key, n, n_candidates, n_known, p_unlinked in phrases:
            stats.add("phrases_matched")
            stats.add("occurrences_matched", int(n))
            reason = drop_reason(Phrase(key, p_unlinked, int(n_candidates), int(n_known)), rules)
            if reason is not None:
                stats.add(f"phrases_dropped_{reason}")
                stats.add(f"occurrences_dropped_{reason}", int(n))
                continue
            stats.add("phrases_kept")
            kept[key] = int(n)
            info[key] = (int(n), int(n_candidates), p_unlinked)
            if n_candidates >= params.ambiguous_candidates:
                stats.add("phrases_ambiguous")
                ambiguous.append(key)
        return kept, ambiguous, info
