"""Reading a build's WikiReading splits for the §2 statistics and the Mean F1 bounds.

The definitions are pure (`corpus`, `scoring`); this module streams the split shards into them.
Documents are read a record batch at a time, and each document's words are counted once: a shard
is sorted by (document_id, property) and a document never straddles splits or shards, so a
document's instances are one run of rows. Answer counts are DuckDB aggregates (they spill to disk
on a full dump); bounds stream the evaluated split's answers through `scoring.ScoreBoard`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.builders.wikireading.corpus import AnswerFigures, Summary, summarize
from entbench.builders.wikireading.scoring import PropertyInfo, ScoreBoard

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

#: Rows of a split read at a time by `document_summaries`. Each repeats its document (once per
#: instance), read as plain strings: measured over the harness's WikiReading splits, Arrow's peak
#: for one row group was 15 MiB at 512 rows against 44 at 4096, and 47-50 read as a dictionary at
#: any batch size (a row group's `document` is written PLAIN: too many distinct values).
BATCH_ROWS = 512


def word_counts(documents: pa.Array) -> np.ndarray:
    """Words of each document: runs of non-whitespace characters, as Python's `str.split()` finds
    them (Arrow's Unicode whitespace is Python's on every code point; Arrow splits a trimmed text
    the same way, and an empty one into one empty word, hence the trim and the zero)."""
    trimmed = pc.utf8_trim_whitespace(documents)
    lengths = pc.list_value_length(pc.utf8_split_whitespace(trimmed)).to_numpy(zero_copy_only=False)
    empty = pc.equal(trimmed, "").to_numpy(zero_copy_only=False)
    return np.where(empty, 0, lengths)


def document_summaries(files: Mapping[str, Sequence[str]]) -> dict[str, Summary]:
    """`instances_per_document`, `document_words` and `answers_per_instance` over every shard of
    every split (`files`: split -> shard files)."""
    per_document: Counter[int] = Counter()
    words: Counter[int] = Counter()
    sizes: Counter[int] = Counter()
    for paths in files.values():
        for path in paths:
            current: list[int] = []  # [document_id, instances] of the run still open
            # One thread: read on Arrow's pool, the process's peak over the same shards swung by
            # ~25 MiB from run to run (155-187 MiB at 1 GB of enwiki); on one it was steady, and
            # as fast.
            shard = pq.ParquetFile(path)
            for batch in shard.iter_batches(
                columns=["document_id", "answers", "document"], batch_size=BATCH_ROWS, use_threads=False
            ):
                if batch.num_rows == 0:
                    continue
                sizes.update(pc.list_value_length(batch.column("answers")).to_pylist())
                ids = batch.column("document_id").to_numpy()
                starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
                lengths = np.diff(np.append(starts, ids.size))
                if current and int(ids[0]) == current[0]:  # the open document goes on
                    current[1] += int(lengths[0])
                    starts, lengths = starts[1:], lengths[1:]
                    if starts.size == 0:
                        continue
                if current:
                    per_document[current[1]] += 1
                per_document.update(int(n) for n in lengths[:-1])
                firsts = batch.column("document").take(pa.array(starts))
                words.update(int(n) for n in word_counts(firsts))
                current = [int(ids[starts[-1]]), int(lengths[-1])]
            if current:
                per_document[current[1]] += 1
    return {
        "instances_per_document": summarize(per_document),
        "document_words": summarize(words),
        "answers_per_instance": summarize(sizes),
    }


def create_answer_views(con: duckdb.DuckDBPyConnection, files: Mapping[str, Sequence[str]]) -> None:
    """The view `answers(split, key, property, a)`: one row per answer value of every split."""
    parts = []
    for split, paths in files.items():
        con.read_parquet(list(paths)).create_view(f"answers_{split}", replace=True)
        parts.append(f"SELECT '{split}' AS split, key, property, unnest(answers) AS a FROM answers_{split}")
    con.execute("CREATE OR REPLACE VIEW answers AS " + " UNION ALL ".join(parts))


def answer_figures(con: duckdb.DuckDBPyConnection, date_properties: Sequence[str], top: int) -> AnswerFigures:
    """Answer counts over the `answers` view (`create_answer_views`); the `top` most frequent
    answers by count, ties by the answer string."""
    con.execute("CREATE OR REPLACE TEMP TABLE date_props (property VARCHAR)")
    if date_properties:
        con.executemany("INSERT INTO date_props VALUES (?)", [(p,) for p in date_properties])
    con.execute(
        "CREATE OR REPLACE TEMP TABLE answer_counts AS SELECT a, count(*) AS n FROM answers GROUP BY a"
    )
    answers, distinct, unique = _counts(con, "answer_counts")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE date_counts AS SELECT a, count(*) AS n FROM answers "
        "SEMI JOIN date_props USING (property) GROUP BY a"
    )
    date_answers, date_distinct, date_unique = _counts(con, "date_counts")
    rows = con.execute("SELECT a, n FROM answer_counts ORDER BY n DESC, a LIMIT ?", [top]).fetchall()
    return AnswerFigures(
        answers=answers,
        distinct=distinct,
        unique=unique,
        top=tuple((str(a), int(n)) for a, n in rows),
        date_answers=date_answers,
        date_distinct=date_distinct,
        date_unique=date_unique,
    )


def _counts(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, int, int]:
    row = con.execute(
        f"SELECT coalesce(sum(n), 0), count(*), count(*) FILTER (WHERE n = 1) FROM {table}"
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def train_vocabulary(con: duckdb.DuckDBPyConnection, train_files: Sequence[str], size: int) -> frozenset[str]:
    """The `size` most frequent answer values of train (ties by the answer string): the classes a
    classifier over the N most frequent answers can predict (§4; the paper's N is 50,000)."""
    if size <= 0 or not train_files:
        return frozenset()
    rows = con.execute(
        "SELECT a FROM (SELECT unnest(answers) AS a FROM read_parquet(?)) GROUP BY a "
        "ORDER BY count(*) DESC, a LIMIT ?",
        [list(train_files), size],
    ).fetchall()
    return frozenset(str(a) for (a,) in rows)


def gold_rows(files: Sequence[str]) -> Iterator[tuple[str, str, list[str]]]:
    """(key, property, answers) of every instance of a split, in shard order."""
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(
            columns=["key", "property", "answers"], batch_size=BATCH_ROWS
        ):
            yield from zip(
                batch.column("key").to_pylist(),
                batch.column("property").to_pylist(),
                batch.column("answers").to_pylist(),
                strict=True,
            )


def split_bounds(
    files: Sequence[str], properties: Mapping[str, PropertyInfo], vocabulary: frozenset[str]
) -> ScoreBoard:
    """The single-value and classifier bounds of a split (no predictions: every F1 is 0)."""
    board = ScoreBoard(properties, vocabulary)
    for _key, prop, answers in gold_rows(files):
        board.add(prop, answers, None)
    return board
