"""The paper's §2 statistics: the pure definitions, and the readers over split shards in the real
layout (`schemas.wikireading.SPLIT`, sorted by document then property)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.wikireading import measures
from entbench.builders.wikireading.corpus import (
    coverage_at,
    coverage_curve,
    properties_for,
    summarize,
)
from entbench.builders.wikireading.measures import (
    answer_figures,
    create_answer_views,
    document_summaries,
    train_vocabulary,
    word_counts,
)
from entbench.schemas import wikireading as schema

WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def test_summaries_of_integer_distributions() -> None:
    odd = summarize(Counter([1, 4, 4, 9, 879]))
    assert (odd.count, odd.mean, odd.median, odd.max) == (5, 179.4, 4, 879)
    even = summarize(Counter([1, 2, 3, 10]))
    assert (even.median, even.mean) == (2.5, 4.0)
    assert summarize(Counter()) == summarize({})
    assert summarize({}).count == 0


def test_property_coverage_curve() -> None:
    counts = [5, 60, 20, 10, 5]  # 100 instances, in no particular order
    curve = coverage_curve(counts)
    assert curve == [0.6, 0.8, 0.9, 0.95, 1.0]
    assert coverage_at(curve, 2) == 0.8 and coverage_at(curve, 180) == 1.0
    assert properties_for(curve, 0.75) == 2 and properties_for(curve, 0.99) == 5
    assert coverage_curve([]) == [] and coverage_at([], 20) == 0.0


def test_words_split_on_unicode_whitespace_as_python_does() -> None:
    texts = [f"a{c}b" for c in WHITESPACE] + [f"{c}a{c}{c}b{c}" for c in WHITESPACE] + list(WHITESPACE)
    texts += ["", "  ", "one", f"x{WHITESPACE}y z", f"{WHITESPACE}", "Zürich\u200bis"]  # U+200B: not a space
    assert list(word_counts(pa.array(texts))) == [len(t.split()) for t in texts]
    assert len(WHITESPACE) == 29  # \t…\r, \x1c-\x1f, space, \x85, no-break and the Unicode spaces


def _split_files(tmp_path: Path, rows: list[dict[str, object]], shards: int) -> list[str]:
    """Rows routed by document into `shards` files, each sorted by (document_id, property)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    paths = []
    for shard in range(shards):
        mine = sorted(
            (r for r in rows if int(str(r["document_id"])) % shards == shard),
            key=lambda r: (int(str(r["document_id"])), str(r["property"])),
        )
        path = tmp_path / f"part-{shard:05d}-of-{shards:05d}.parquet"
        pq.write_table(pa.Table.from_pylist(mine, schema=schema.SPLIT), path)
        paths.append(str(path))
    return paths


def _instances(seed: int, documents: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows = []
    for doc in range(documents):
        text = " ".join(
            rng.choice(["alpha", "beta\u00a0gamma", "delta\n\nepsilon"]) for _ in range(rng.randint(1, 40))
        )
        for p in rng.sample(range(1, 60), rng.randint(1, 12)):
            answers = rng.sample(["human", "1776", "Turkey", f"v{doc}-{p}", "4 July 1776"], rng.randint(1, 3))
            rows.append(
                {
                    "key": f"Q{doc}-P{p}",
                    "document_id": doc,
                    "qid": f"Q{doc}",
                    "property": f"P{p}",
                    "property_label": f"property {p}",
                    "question": f"property {p}",
                    "answers": answers,
                    "document": text,
                }
            )
    return rows


@pytest.mark.parametrize("batch_rows", [1, 3, 7, 4096])
def test_document_summaries_follow_documents_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_rows: int
) -> None:
    monkeypatch.setattr(measures, "BATCH_ROWS", batch_rows)  # runs of a document cross batches
    rows = _instances(seed=7, documents=25)
    files = {
        "train": _split_files(tmp_path / "train", rows[: len(rows) // 2], 3),
        "test": _split_files(tmp_path / "test", rows[len(rows) // 2 :], 2),
    }
    by_document: dict[tuple[str, object], list[dict[str, object]]] = {}
    for split, part in (("train", rows[: len(rows) // 2]), ("test", rows[len(rows) // 2 :])):
        for r in part:
            by_document.setdefault((split, r["document_id"]), []).append(r)
    summaries = document_summaries(files)
    assert summaries["instances_per_document"] == summarize(Counter(len(v) for v in by_document.values()))
    assert summaries["document_words"] == summarize(
        Counter(len(str(v[0]["document"]).split()) for v in by_document.values())
    )
    assert summaries["answers_per_instance"] == summarize(Counter(len(r["answers"]) for r in rows))  # type: ignore[arg-type]


def test_answer_figures_and_train_vocabulary(tmp_path: Path) -> None:
    rows = _instances(seed=3, documents=12)
    files = {"train": _split_files(tmp_path / "train", rows, 2)}
    counts = Counter(a for r in rows for a in r["answers"])  # type: ignore[attr-defined]
    dates = Counter(a for r in rows if r["property"] in ("P3", "P5") for a in r["answers"])  # type: ignore[attr-defined]
    with duckdb.connect() as con:
        create_answer_views(con, files)
        figures = answer_figures(con, ["P3", "P5"], top=3)
        assert figures.answers == sum(counts.values())
        assert figures.distinct == len(counts)
        assert figures.unique == sum(1 for n in counts.values() if n == 1)
        assert figures.top == tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        assert (figures.date_answers, figures.date_distinct) == (sum(dates.values()), len(dates))
        assert figures.date_unique == sum(1 for n in dates.values() if n == 1)
        ranked = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        assert train_vocabulary(con, files["train"], 4) == frozenset(ranked[:4])
        assert train_vocabulary(con, files["train"], 0) == frozenset()
