"""Stage `wikireading_stats`: per-property statistics and the dataset card section (spec §6).

DuckDB aggregates the three splits (reading only the columns each query needs); the definitions
are the pure functions of `entbench.builders.wikireading.entropy` (Hewlett et al. 2016 §2.4–2.5):

* instances per property and split; |A_p| and Ĥ(p) = H(A_p)/log|A_p| over the answer values of
  the `entropy_splits` (default train, as the paper's Table 2; a property with no instance there
  falls back to all splits, counted `entropy_fallback_all_splits`); categorical if Ĥ < 0.7;
* the share of instances with an answer value occurring verbatim (exact substring) in the document;
* test answer values never an answer of the same property in train (and, overall, of any
  property in train: the paper's 30.0%);
* the property's datatype (the Wikidata datatype of its values, from `wikireading_triples`); a
  property whose values are times is a *date property*, Table 3's third group.

It also measures train leakage as Mem-Exact (spec §7): a valid/test instance whose (question,
sorted answers) pair occurs in train (`mem_exact_valid`, `mem_exact_test`).

Once the table is written, `finalize` measures the paper's §2 statistics over all splits
(`entbench.builders.wikireading.corpus`: instances per document, document length, answer-set
sizes, the most frequent answers, unique and date answers, property coverage) and the Mean F1
upper bounds of §4 over `bound_split` (`entbench.builders.wikireading.scoring`), records them in
the manifest and in `_paper_statistics.json`, each beside the paper's figure, and writes
`_DATASET_CARD.md` (a section for the dataset card).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.wikireading.corpus import PAPER_FIGURES, section2_figures
from entbench.builders.wikireading.entropy import (
    CATEGORICAL_THRESHOLD,
    PropertyAggregate,
    overall_shares,
    property_row,
)
from entbench.builders.wikireading.measures import (
    answer_figures,
    create_answer_views,
    document_summaries,
    split_bounds,
    train_vocabulary,
)
from entbench.builders.wikireading.scoring import PAPER_CLASSIFIER_VOCAB, PropertyInfo
from entbench.builders.wikireading.splits import SPLITS
from entbench.builders.wikireading.stats_card import CardInputs, render_card
from entbench.engine.duck import parquet_view, stage_connection
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import wikireading as schema

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

CARD_FILE = "_DATASET_CARD.md"  # a sidecar: `_` keeps Parquet readers off it
FIGURES_FILE = "_paper_statistics.json"
DATE_DATATYPE = "time"


@dataclass(frozen=True)
class StatsParams(Params):
    """`entropy_splits`: splits whose answers define A_p (paper: train); `categorical_threshold`:
    0.7 in the paper; `card_properties`: how many of the most frequent properties the card lists;
    `card_answers`: how many of the most frequent answers; `bound_split`: the split the Mean F1
    bounds are measured on (the paper: test); `classifier_vocab`: the classifier bound's number
    of most frequent train answers (the paper: 50,000)."""

    entropy_splits: Annotated[
        tuple[str, ...],
        Meta(description="splits whose answers define A_p (the paper: train)"),
    ] = ("train",)
    categorical_threshold: Annotated[
        float,
        Meta(gt=0, le=1, description="Ĥ below it: categorical"),
    ] = CATEGORICAL_THRESHOLD
    card_properties: Annotated[
        int,
        Meta(ge=0, description="how many of the most frequent properties the card lists"),
    ] = 20
    card_answers: Annotated[
        int,
        Meta(ge=0, description="how many of the most frequent answers the card lists"),
    ] = 10
    bound_split: Annotated[
        Literal["train", "valid", "test"],
        Meta(description="the split the Mean F1 bounds are measured on (the paper: test)"),
    ] = "test"
    classifier_vocab: Annotated[
        int,
        Meta(
            ge=0,
            description="the classifier bound's number of most frequent train answers (the paper: 50,000)",
        ),
    ] = PAPER_CLASSIFIER_VOCAB

    def __post_init__(self) -> None:
        unknown = [s for s in self.entropy_splits if s not in SPLITS]
        if unknown or not self.entropy_splits:
            raise ValueError(f"entropy_splits must be a non-empty subset of {list(SPLITS)}, got {unknown}")
        if not 0.0 < self.categorical_threshold <= 1.0:
            raise ValueError("categorical_threshold must be within (0, 1]")
        if self.bound_split not in SPLITS:
            raise ValueError(f"bound_split must be one of {list(SPLITS)}, got {self.bound_split!r}")
        if self.classifier_vocab < 0 or self.card_answers < 0 or self.card_properties < 0:
            raise ValueError("classifier_vocab, card_answers and card_properties must be >= 0")


class WikiReadingStats(Stage[StatsParams]):
    """The three splits -> `property_stats`, `_paper_statistics.json` and `_DATASET_CARD.md`."""

    name = "wikireading_stats"
    # 2: the card section cites the paper only; 3: `_DATASET_CARD.md`; 4: datatype and date
    # properties, the §2 statistics and the Mean F1 bounds; 5: the whole-answer-set repeats are no
    # longer called Mem-Exact in the card (the leakage section's audit figure is Mem-Exact)
    version = 5
    layer = "benchmarks"
    inputs = ("wikireading", "wikireading_triples")
    default_num_shards = 1
    shard_key = "property"
    description = (
        "WikiReading per-property statistics (frequency, scaled entropy, verbatim share, date "
        "properties), the paper's §2 statistics and the Mean F1 bounds"
    )

    def outputs(self, params: StatsParams) -> list[Output]:
        """One table, one row per property."""
        return [Output("property_stats", schema.PROPERTY_STATS, ("property",))]

    def shard(self, ctx: StageContext[StatsParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Aggregate all three splits in one DuckDB session."""
        params = ctx.params
        files = {name: ctx.inputs["wikireading"].files(name) for name in SPLITS}
        stats = Stats()
        con = stage_connection(ctx, tasks=ctx.num_shards)
        try:
            _create_view(con, files)
            aggregates = _aggregates(con, params.entropy_splits, stats)
            _overall_counts(con, stats)
            datatypes = _property_datatypes(con, ctx.inputs["wikireading_triples"].files("triples"))
        finally:
            con.close()
        rows = [property_row(agg, params.categorical_threshold) for agg in aggregates]
        for row in rows:
            row["datatype"] = datatypes.get(row["property"])
            row["date_property"] = row["datatype"] == DATE_DATATYPE
            stats.add("instances_total", row["instances"])
            stats.add(f"{row['kind']}_instances", row["instances"])
            stats.add(f"{row['kind']}_properties")
            stats.add("verbatim_instances", round(row["verbatim_share"] * row["instances"]))
            stats.add("test_only_properties", int(row["test_only"]))
            stats.add("date_properties", int(row["date_property"]))
            stats.add("date_instances", row["instances"] if row["date_property"] else 0)
            stats.add("properties_without_datatype", int(row["datatype"] is None))
        stats.add("properties", len(rows))
        return {"property_stats": pa.Table.from_pylist(rows, schema=schema.PROPERTY_STATS)}, stats

    def finalize(self, ctx: StageContext[StatsParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """Shares for the manifest, and the dataset card section."""
        params = ctx.params
        table = pq.read_table(sorted(directory.glob("part-*.parquet"))[0])
        rows = table.to_pylist()
        shares: dict[str, Any] = dict(overall_shares(rows))
        shares["test_answers_unseen_share"] = _share(stats, "test_answers_unseen_any", "test_answers_total")
        shares["mem_exact_valid_share"] = _share(stats, "mem_exact_valid", "valid_instances")
        shares["mem_exact_test_share"] = _share(stats, "mem_exact_test", "test_instances")
        figures, top_answers, answers_total, bounds = _section2(ctx, rows, params)
        document = {
            "paper": dict(PAPER_FIGURES),
            "build": figures,
            "top_answers": [{"answer": a, "answers": n} for a, n in top_answers],
            "answers_total": answers_total,
            "bounds": bounds,
        }
        atomic_write_text(directory / FIGURES_FILE, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        card = render_card(
            CardInputs(
                rows=rows,
                stats=stats,
                shares=shares,
                figures=figures,
                top_answers=top_answers,
                answers_total=answers_total,
                entropy_splits=params.entropy_splits,
                categorical_threshold=params.categorical_threshold,
                card_properties=params.card_properties,
                bound_split=params.bound_split,
                classifier_vocab=params.classifier_vocab,
            )
        )
        atomic_write_text(directory / CARD_FILE, card)
        recorded = {**shares, **{k: v for k, v in figures.items() if v is not None and k != "properties"}}
        return {"files": [CARD_FILE, FIGURES_FILE], **{k: _rounded(v) for k, v in recorded.items()}}


def _section2(
    ctx: StageContext, rows: Sequence[Mapping[str, Any]], params: StatsParams
) -> tuple[dict[str, float | None], list[tuple[str, int]], int, dict[str, Any]]:
    """The §2 figures, the most frequent answers, the number of answers and the bounds."""
    splits = ctx.inputs["wikireading"]
    files = {name: splits.files(name) for name in SPLITS}
    properties = {
        str(r["property"]): PropertyInfo(str(r["property_label"]), str(r["kind"]), bool(r["date_property"]))
        for r in rows
    }
    dates = sorted(p for p, info in properties.items() if info.date)
    con = stage_connection(ctx, tasks=1)
    try:
        create_answer_views(con, files)
        answers = answer_figures(con, dates, params.card_answers)
        vocabulary = train_vocabulary(con, files["train"], params.classifier_vocab)
    finally:
        con.close()
    board = split_bounds(files[params.bound_split], properties, vocabulary)
    overall = board.overall().to_json(with_f1=False)
    bounds = {
        "split": params.bound_split,
        "classifier_vocab": params.classifier_vocab,
        "vocabulary_size": len(vocabulary),
        **overall,
        "groups": {name: s.to_json(with_f1=False) for name, s in board.groups().items()},
    }
    figures = section2_figures(
        document_summaries(files),
        answers,
        [int(r["instances"]) for r in rows],
        {k: overall[k] for k in ("single_value_bound", "classifier_bound")},
    )
    return figures, list(answers.top), answers.answers, bounds


def _property_datatypes(con: duckdb.DuckDBPyConnection, triples: Sequence[str]) -> dict[str, str]:
    """Each property's datatype: the one most of its usable triples have (ties by name)."""
    if not triples:
        return {}
    rows = con.execute(
        "SELECT property, datatype FROM read_parquet(?) WHERE drop_reason IS NULL AND datatype IS NOT NULL "
        "GROUP BY property, datatype ORDER BY property, count(*) DESC, datatype",
        [list(triples)],
    ).fetchall()
    result: dict[str, str] = {}
    for prop, datatype in rows:
        result.setdefault(str(prop), str(datatype))
    return result


def _rounded(value: float) -> float:
    return value if isinstance(value, int) else round(float(value), 6)


def _share(stats: Mapping[str, int], part: str, whole: str) -> float:
    return stats.get(part, 0) / stats[whole] if stats.get(whole) else 0.0


def _create_view(con: duckdb.DuckDBPyConnection, files: Mapping[str, Sequence[str]]) -> None:
    for name, paths in files.items():
        parquet_view(con, f"split_{name}", paths)
    parts = [
        f"SELECT '{name}' AS split, key, document_id, property, property_label, question, answers, document "
        f"FROM split_{name}"
        for name in files
    ]
    con.execute("CREATE VIEW inst AS " + " UNION ALL ".join(parts))


def _aggregates(
    con: duckdb.DuckDBPyConnection, entropy_splits: Sequence[str], stats: Stats
) -> list[PropertyAggregate]:
    """One `PropertyAggregate` per property, in property order."""
    base = con.sql(
        "SELECT property, min(property_label), "
        + ", ".join(f"count(*) FILTER (WHERE split = '{s}')" for s in SPLITS)
        + " FROM inst GROUP BY property ORDER BY property"
    ).fetchall()
    verbatim = dict(
        con.sql(
            "WITH v AS (SELECT key, property, document, unnest(answers) AS a FROM inst) "
            "SELECT property, count(DISTINCT key) FROM v WHERE contains(document, a) GROUP BY property"
        ).fetchall()
    )
    in_splits = ", ".join(f"'{s}'" for s in entropy_splits)
    chosen: dict[str, list[int]] = defaultdict(list)
    for prop, n in con.sql(
        "WITH v AS (SELECT split, property, unnest(answers) AS a FROM inst) "
        f"SELECT property, count(*) FROM v WHERE split IN ({in_splits}) GROUP BY property, a "
        "ORDER BY property, a"
    ).fetchall():
        chosen[prop].append(int(n))
    fallback: dict[str, list[int]] = defaultdict(list)
    for prop, n in con.sql(
        "WITH v AS (SELECT property, unnest(answers) AS a FROM inst) "
        "SELECT property, count(*) FROM v GROUP BY property, a ORDER BY property, a"
    ).fetchall():
        fallback[prop].append(int(n))
    unseen = {
        prop: (int(total), int(missing))
        for prop, total, missing in con.sql(
            "WITH tr AS (SELECT DISTINCT property, unnest(answers) AS a FROM inst WHERE split = 'train'), "
            "te AS (SELECT property, unnest(answers) AS a FROM inst WHERE split = 'test') "
            "SELECT te.property, count(*), count(*) FILTER (WHERE tr.a IS NULL) "
            "FROM te LEFT JOIN tr ON te.property = tr.property AND te.a = tr.a GROUP BY te.property"
        ).fetchall()
    }
    result = []
    for prop, label, train, valid, test in base:
        counts = chosen.get(prop)
        if counts is None:
            stats.add("entropy_fallback_all_splits")
            counts = fallback.get(prop, [])
        total, missing = unseen.get(prop, (0, 0))
        result.append(
            PropertyAggregate(
                property=prop,
                label=label,
                instances_by_split={"train": int(train), "valid": int(valid), "test": int(test)},
                answer_counts=counts,
                verbatim_instances=int(verbatim.get(prop, 0)),
                test_answers=total,
                test_answers_unseen=missing,
            )
        )
    return result


def _overall_counts(con: duckdb.DuckDBPyConnection, stats: Stats) -> None:
    """Split sizes, test answers unseen in train (any property), and Mem-Exact leakage."""
    for split, n, docs in con.sql(
        "SELECT split, count(*), count(DISTINCT document_id) FROM inst GROUP BY split"
    ).fetchall():
        stats.add(f"{split}_instances", int(n))
        stats.add(f"{split}_documents", int(docs))
    (row,) = con.sql(
        "WITH tr AS (SELECT DISTINCT unnest(answers) AS a FROM inst WHERE split = 'train'), "
        "te AS (SELECT unnest(answers) AS a FROM inst WHERE split = 'test') "
        "SELECT count(*), count(*) FILTER (WHERE tr.a IS NULL) FROM te LEFT JOIN tr ON te.a = tr.a"
    ).fetchall()
    stats.add("test_answers_total", int(row[0]))
    stats.add("test_answers_unseen_any", int(row[1]))
    # Mem-Exact (spec §7, Ray Choudhury & Kalra 2023): the evaluation item's input and its whole
    # label set occur together in train. Documents never repeat across splits, so the input that
    # can repeat is the question (the property label).
    for split, hits in con.sql(
        "WITH tr AS (SELECT DISTINCT question, list_sort(answers) AS s FROM inst WHERE split = 'train') "
        "SELECT i.split, count(*) FILTER (WHERE tr.s IS NOT NULL) FROM inst i LEFT JOIN tr "
        "ON i.question = tr.question AND list_sort(i.answers) = tr.s "
        "WHERE i.split <> 'train' GROUP BY i.split"
    ).fetchall():
        stats.add(f"mem_exact_{split}", int(hits))
