"""ERT: tuples, seeded 5/10/10 sampling per relation, loader-format lines."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from entbench.builders.enteval import ert
from entbench.builders.enteval.errors import SourceError
from tests.builders.enteval.loader_formats import read_ert

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


def world(relations: int = 4, per_relation: int = 30) -> list[ert.RelationTuple]:
    return [
        ert.RelationTuple(f"Entity {r}-{i}", f"domain.type.relation_{r}", f"Other {i}")
        for r in range(relations)
        for i in range(per_relation + r * 3)
    ]


def test_fixture_tuples_parse() -> None:
    tuples = ert.parse_tuples((FIXTURES / "freebase-tuples.tsv").read_text(encoding="utf-8").splitlines())
    assert len(tuples) == 15  # the comment line is skipped; the duplicate line is kept for the sampler
    assert tuples[0] == ert.RelationTuple("Ayn Rand", "influence.influence_node.influenced_by", "Aristotle")


@pytest.mark.parametrize("line", ["only\ttwo", "a\tbad relation\tb", "a\t\tb"])
def test_bad_lines(line: str) -> None:
    with pytest.raises(SourceError) as err:
        ert.parse_tuples(["a\tr.s.t\tb", line])
    assert err.value.line == 2


def test_five_ten_ten_per_relation_disjoint_and_seeded() -> None:
    tuples = world()
    sample = ert.sample(tuples, (5, 10, 10), seed=1111)
    for relation in {t.relation for t in tuples}:
        counts = [sum(t.relation == relation for t in sample.splits[s]) for s in ert.SPLITS]
        assert counts == [5, 10, 10]
    chosen = [t for s in ert.SPLITS for t in sample.splits[s]]
    assert len(set(chosen)) == len(chosen)
    # Deterministic, independent of input order; another seed picks other tuples.
    shuffled = list(tuples)
    random.Random(7).shuffle(shuffled)
    assert ert.sample(shuffled, (5, 10, 10), seed=1111).splits == sample.splits
    other = ert.sample(tuples, (5, 10, 10), seed=42).splits
    assert set(other["train"]) != set(sample.splits["train"])


def test_relations_with_too_few_tuples_are_left_out_whole() -> None:
    enough = world(relations=1, per_relation=25)  # exactly 5 + 10 + 10
    small = [ert.RelationTuple(f"x{i}", "small.rel.ation", f"y{i}") for i in range(24)]
    duplicates = [ert.RelationTuple("x0", "small.rel.ation", "y0")] * 3  # counted once
    sample = ert.sample([*enough, *small, *duplicates], (5, 10, 10), seed=1)
    assert sample.too_small == ["small.rel.ation"]
    assert sum(len(sample.splits[s]) for s in ert.SPLITS) == 25
    assert all(t.relation != "small.rel.ation" for s in ert.SPLITS for t in sample.splits[s])


def test_lines_read_back_by_the_loader(tmp_path: Path) -> None:
    sample = ert.sample(world(relations=2), (5, 10, 10), seed=3)
    for split in ert.SPLITS:
        path = tmp_path / f"{split}.txt"
        lines = [ert.ert_line(t, lambda name: f"{name.lower()} is a thing .") for t in sample.splits[split]]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        rows = read_ert(path)
        assert [(label, " ".join(e1)) for label, e1, _, _, _ in rows] == [
            (t.relation, t.first) for t in sample.splits[split]
        ]
    # ERTEval numbers labels from train: every dev/test label occurs in train.
    train = {r[0] for r in read_ert(tmp_path / "train.txt")}
    assert {r[0] for r in read_ert(tmp_path / "dev.txt")} <= train
    assert {r[0] for r in read_ert(tmp_path / "test.txt")} <= train
