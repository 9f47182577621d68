"""Stage `wikireading_stats`: per-property statistics and the dataset card section (spec §6).

DuckDB aggregates the three splits (reading only the columns each query needs); the definitions
are the pure functions of `entbench.builders.wikireading.entropy` (Hewlett et al. 2016 §2.4–2.5):

* instances per property and split; |A_p| and Ĥ(p) = H(A_p)/log|A_p| over the answer values of
  the `entropy_splits` (default train, as the paper's Table 2; a property with no instance there
  falls back to all splits, counted `entropy_fallback_all_splits`); categorical if Ĥ < 0.7;
* the share of instances with an answer value occurring verbatim (exact substring) in the document;
* test answer values never an answer of the same property in train (and, overall, of any
  property in train: the paper's 30.0%).

It also measures train leakage as Mem-Exact (spec §7): a valid/test instance whose (question,
sorted answers) pair occurs in train (`mem_exact_valid`, `mem_exact_test`).

`_DATASET_CARD.md` (a section for the dataset card) is written next to the shard.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from entbench.builders.wikireading.entropy import (
    CATEGORICAL_THRESHOLD,
    PAPER_FIGURES,
    PropertyAggregate,
    overall_shares,
    property_row,
)
from entbench.builders.wikireading.splits import SPLITS
from entbench.engine.duck import parquet_view, stage_connection
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import Output, Params, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import wikireading as schema

CARD_FILE = "_DATASET_CARD.md"  # a sidecar: `_` keeps Parquet readers off it


@dataclass(frozen=True)
class StatsParams(Params):
    """`entropy_splits`: splits whose answers define A_p (paper: train); `categorical_threshold`:
    0.7 in the paper; `card_properties`: how many of the most frequent properties the card lists."""

    entropy_splits: tuple[str, ...] = ("train",)
    categorical_threshold: float = CATEGORICAL_THRESHOLD
    card_properties: int = 20

    def __post_init__(self) -> None:
        unknown = [s for s in self.entropy_splits if s not in SPLITS]
        if unknown or not self.entropy_splits:
            raise ValueError(f"entropy_splits must be a non-empty subset of {list(SPLITS)}, got {unknown}")
        if not 0.0 < self.categorical_threshold <= 1.0:
            raise ValueError("categorical_threshold must be within (0, 1]")


class WikiReadingStats(Stage):
    """The three splits -> `property_stats` and `_DATASET_CARD.md`."""

    name = "wikireading_stats"
    # 2: the card section cites the paper only; 3: `_DATASET_CARD.md`; 4: the whole-answer-set repeats
    # are no longer called Mem-Exact in the card (the leakage section's audit figure is Mem-Exact)
    version = 4
    layer = "benchmarks"
    params_type = StatsParams
    inputs = ("wikireading",)
    default_num_shards = 1
    shard_key = "property"
    description = "WikiReading per-property statistics: frequency, scaled entropy, verbatim share"

    def outputs(self, params: Params) -> list[Output]:
        """One table, one row per property."""
        return [Output("property_stats", schema.PROPERTY_STATS, ("property",))]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Aggregate all three splits in one DuckDB session."""
        params = cast(StatsParams, ctx.params)
        files = {name: ctx.inputs["wikireading"].files(name) for name in SPLITS}
        stats = Stats()
        con = stage_connection(ctx, tasks=ctx.num_shards)
        try:
            _create_view(con, files)
            aggregates = _aggregates(con, params.entropy_splits, stats)
            _overall_counts(con, stats)
        finally:
            con.close()
        rows = [property_row(agg, params.categorical_threshold) for agg in aggregates]
        for row in rows:
            stats.add("instances_total", row["instances"])
            stats.add(f"{row['kind']}_instances", row["instances"])
            stats.add(f"{row['kind']}_properties")
            stats.add("verbatim_instances", round(row["verbatim_share"] * row["instances"]))
            stats.add("test_only_properties", int(row["test_only"]))
        stats.add("properties", len(rows))
        return {"property_stats": pa.Table.from_pylist(rows, schema=schema.PROPERTY_STATS)}, stats

    def finalize(self, ctx: StageContext, directory: Path, stats: Stats) -> dict[str, Any]:
        """Shares for the manifest, and the dataset card section."""
        params = cast(StatsParams, ctx.params)
        table = pq.read_table(sorted(directory.glob("part-*.parquet"))[0])
        rows = table.to_pylist()
        shares: dict[str, Any] = dict(overall_shares(rows))
        shares["test_answers_unseen_share"] = _share(stats, "test_answers_unseen_any", "test_answers_total")
        shares["mem_exact_valid_share"] = _share(stats, "mem_exact_valid", "valid_instances")
        shares["mem_exact_test_share"] = _share(stats, "mem_exact_test", "test_instances")
        card = render_card(rows, stats, shares, params)
        atomic_write_text(directory / CARD_FILE, card)
        return {"files": [CARD_FILE], **{k: round(v, 6) for k, v in shares.items()}}


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


def render_card(
    rows: Sequence[Mapping[str, Any]],
    stats: Mapping[str, int],
    shares: Mapping[str, float],
    params: StatsParams,
) -> str:
    """The WikiReading section of a dataset card, in Markdown."""

    def pct(x: float) -> str:
        return f"{100 * x:.1f}%"

    lines = [
        "## WikiReading",
        "",
        "Built by `entbench build wikireading` (Hewlett et al. 2016): one instance per "
        "(item, property) of the truthy statements, the item's article as the document, the "
        "property label as the question and the set of rendered values as the answer.",
        "",
        "| split | instances | documents |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {s} | {stats.get(f'{s}_instances', 0):,} | {stats.get(f'{s}_documents', 0):,} |" for s in SPLITS
    ]
    lines += [
        "",
        f"Properties: {len(rows):,} ({stats.get('categorical_properties', 0):,} categorical, "
        f"{stats.get('relational_properties', 0):,} relational; threshold Ĥ < {params.categorical_threshold} "
        f"over the {', '.join(params.entropy_splits)} answers).",
        "",
        "| measure | this build | paper (2016) |",
        "|---|---:|---:|",
        f"| instances of categorical properties | {pct(shares['categorical_instance_share'])} | "
        f"{pct(PAPER_FIGURES['categorical_instance_share'])} |",
        f"| instances of relational properties | {pct(shares['relational_instance_share'])} | "
        f"{pct(PAPER_FIGURES['relational_instance_share'])} |",
        f"| instances with an answer verbatim in the document | {pct(shares['verbatim_instance_share'])} | "
        f"{pct(PAPER_FIGURES['verbatim_instance_share'])} |",
        f"| test answers never seen in train | {pct(shares['test_answers_unseen_share'])} | "
        f"{pct(PAPER_FIGURES['test_answers_unseen_share'])} |",
        f"| valid instances whose (question, whole answer set) repeats a train instance | "
        f"{pct(shares['mem_exact_valid_share'])} | – |",
        f"| test instances whose (question, whole answer set) repeats a train instance | "
        f"{pct(shares['mem_exact_test_share'])} | – |",
        "",
        f"Most frequent properties (top {params.card_properties}):",
        "",
        "| property | label | instances | Ĥ(p) | kind | verbatim | test unseen |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    top = sorted(rows, key=lambda r: (-int(r["instances"]), str(r["property"])))[: params.card_properties]
    for r in top:
        unseen = "–" if r["test_unseen_share"] is None else pct(float(r["test_unseen_share"]))
        lines.append(
            f"| {r['property']} | {r['property_label']} | {int(r['instances']):,} | "
            f"{float(r['scaled_entropy']):.3f} | {r['kind']} | {pct(float(r['verbatim_share']))} | {unseen} |"
        )
    return "\n".join(lines) + "\n"
