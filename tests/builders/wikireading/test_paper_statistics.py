"""The paper's §2 statistics and Mean F1 bounds of `wikireading_stats`, on the demo world's build:
each figure recomputed here straight from the split shards, and shown in the card beside the
paper's (Hewlett et al. 2016 §2, §4)."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from entbench.builders.wikireading.corpus import PAPER_FIGURES
from entbench.engine.manifest import load_manifest

SPLITS = ("train", "valid", "test")


def stage_dir(out: Path, stage: str) -> Path:
    return out / json.loads((out / "targets" / "wikireading.json").read_text())["stages"][stage]


def rows_of(directory: Path) -> list[dict[str, Any]]:
    return [r for f in sorted(directory.glob("part-*.parquet")) for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def built(world_out: Path) -> dict[str, Any]:
    splits = {s: rows_of(stage_dir(world_out, "wikireading") / s) for s in SPLITS}
    stats_dir = stage_dir(world_out, "wikireading_stats")
    return {
        "splits": splits,
        "instances": [r for s in SPLITS for r in splits[s]],
        "properties": {r["property"]: r for r in rows_of(stats_dir)},
        "triples": rows_of(stage_dir(world_out, "wikireading_triples")),  # one table: shards at the top
        "figures": json.loads((stats_dir / "_paper_statistics.json").read_text()),
        "manifest": load_manifest(stats_dir)["stats"],
        "card": (world_out / "cards" / "wikireading" / "README.md").read_text(encoding="utf-8"),
    }


def test_date_properties_are_those_whose_values_are_times(built: dict[str, Any]) -> None:
    datatypes: dict[str, Counter[str]] = {}
    for t in built["triples"]:
        if t["drop_reason"] is None and t["datatype"]:
            datatypes.setdefault(t["property"], Counter())[t["datatype"]] += 1
    for prop, row in built["properties"].items():
        assert row["datatype"] == datatypes[prop].most_common(1)[0][0]
        assert row["date_property"] == (row["datatype"] == "time")
    dates = {p for p, r in built["properties"].items() if r["date_property"]}
    assert {"P569", "P571"} <= dates  # date of birth, inception
    assert built["manifest"]["date_properties"] == len(dates)


def test_section2_figures_match_the_splits(built: dict[str, Any]) -> None:
    figures, instances = built["figures"]["build"], built["instances"]
    per_document = Counter(r["document_id"] for r in instances)
    words = {r["document_id"]: len(r["document"].split()) for r in instances}
    assert figures["instances_per_document_mean"] == pytest.approx(statistics.mean(per_document.values()))
    assert figures["instances_per_document_median"] == statistics.median(per_document.values())
    assert figures["instances_per_document_max"] == max(per_document.values())
    assert figures["document_words_mean"] == pytest.approx(statistics.mean(words.values()))
    assert figures["document_words_median"] == statistics.median(words.values())
    assert figures["answers_per_instance_max"] == max(len(r["answers"]) for r in instances)
    answers = Counter(a for r in instances for a in r["answers"])
    total = sum(answers.values())
    (top, n), *_ = sorted(answers.items(), key=lambda kv: (-kv[1], kv[0]))
    assert built["figures"]["top_answers"][0] == {"answer": top, "answers": n}
    assert figures["top_answer_share"] == pytest.approx(n / total)
    assert figures["unique_answer_share"] == pytest.approx(
        sum(v == 1 for v in answers.values()) / len(answers)
    )
    dates = {p for p, r in built["properties"].items() if r["date_property"]}
    date_answers = Counter(a for r in instances if r["property"] in dates for a in r["answers"])
    assert 0 < figures["date_answer_share"] == pytest.approx(sum(date_answers.values()) / total)
    assert figures["date_unique_answer_share"] == pytest.approx(
        sum(v == 1 for v in date_answers.values()) / len(date_answers)
    )
    by_property = sorted(Counter(r["property"] for r in instances).values(), reverse=True)
    assert figures["properties"] == len(by_property)
    assert figures["top20_property_coverage"] == pytest.approx(sum(by_property[:20]) / len(instances))
    assert figures["top180_property_coverage"] == pytest.approx(sum(by_property[:180]) / len(instances))
    test = built["splits"]["test"]
    single = sum((Fraction(2, 1 + len(r["answers"])) for r in test), Fraction(0)) / len(test)
    assert figures["single_value_bound"] == float(single)
    assert built["figures"]["paper"] == dict(PAPER_FIGURES)
    for name in ("instances_per_document_mean", "document_words_median", "single_value_bound"):
        assert built["manifest"][name] == pytest.approx(figures[name], abs=1e-6)


def test_card_shows_the_figures_beside_the_papers(built: dict[str, Any]) -> None:
    card, figures = built["card"], built["figures"]["build"]
    per_doc = f"{figures['instances_per_document_mean']:,.2f}"
    assert f"| instances per document: mean | {per_doc} | 5.31 |" in card
    assert f"| instances per document: max | {figures['instances_per_document_max']:,} | 879 |" in card
    assert f"| document length in words: mean | {figures['document_words_mean']:,.1f} | 489.2 |" in card
    assert "| document length in words: median |" in card and "| 203 |" in card
    assert f"| Mean F1 bound of a single-value answer | {figures['single_value_bound']:.3f} | 0.963 |" in card
    assert "| Mean F1 bound of a classifier over the 50,000 most frequent train answers |" in card
    assert "0.831 (50,000) |" in card
    assert "| unique answers (occurring once), share of distinct answers |" in card and "| 54.7% |" in card
    assert "| instances covered by the top 20 properties |" in card and "| 75.0% |" in card
    top = built["figures"]["top_answers"][0]["answer"]
    assert f"| most frequent answer, share of all answers | {top}: " in card and "human: almost 7.0%" in card
    assert "![wikireading: instances covered by the k most frequent properties" in card
