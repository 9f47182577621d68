"""The paper's 10% rule (§2.2): dev sentences reserved from train, seeded, whole sentences only."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from entbench.builders.edge_probing.dev_split import split_dev
from entbench.errors import UserError
from entbench.readers.edge_probing.conll import read_conll_tags
from entbench.readers.edge_probing.items import EPItem, read_conllu

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
EWT_DEV = FIXTURES / "ud-ewt" / "v2.2" / "en_ewt-ud-dev.conllu.gz"
CHUNK_TRAIN = FIXTURES / "edge-probing-layouts" / "conll2000" / "train.txt"


def test_a_tenth_of_the_sentences_drawn_with_the_seed_and_kept_whole() -> None:
    items = read_conllu(EWT_DEV, "pos")
    split = split_dev(items, 0.1, seed=7, mode="eptest")
    sentences = sorted({it.sentence_index for it in items})
    assert (split.train_sentences, split.dev_sentences) == (2002, 200)
    drawn = set(random.Random(7).sample(sentences, 200))
    assert {it.sentence_index for it in split.dev} == drawn
    assert {it.sentence_index for it in split.train}.isdisjoint(drawn)
    # Every item lands on one side, in file order; whole sentences move.
    assert split.dev_items == sum(1 for it in items if it.sentence_index in drawn) == len(split.dev)
    assert sorted(split.train + split.dev, key=lambda it: (it.sentence_index, it.target_index)) == items
    assert split.stats()["train_items_left"] == len(items) - len(split.dev)
    assert split_dev(items, 0.1, seed=7, mode="eptest") == split
    assert split_dev(items, 0.1, seed=8, mode="eptest").dev != split.dev


def test_dev_items_with_a_label_the_train_left_never_has_are_dropped_and_counted() -> None:
    items = read_conll_tags(CHUNK_TRAIN, "conll2000-chunk")
    # Give one sentence a label no other sentence has, then find a seed that reserves it.
    rare = [
        it._replace(labels=("B-LST",)) if (it.sentence_index, it.target_index) == (3, 0) else it
        for it in items
    ]
    seed = next(s for s in range(100) if random.Random(s).sample(range(10), 1) == [3])
    split = split_dev(rare, 0.1, seed=seed, mode="strict")
    assert {it.sentence_index for it in split.train} == set(range(10)) - {3}
    assert split.dev_unseen_label_drops == 1
    assert split.dev_items == 7 and len(split.dev) == 6  # "Shares of the bank closed lower ."
    assert all(it.labels != ("B-LST",) for it in split.dev)


@pytest.mark.parametrize(
    ("fraction", "message"),
    [
        (0.0, "between 0 and 1"),
        (1.0, "between 0 and 1"),
        (0.01, "leaves no dev sentence"),
        (0.99, "leaves no train"),
    ],
)
def test_a_split_that_leaves_a_side_empty_is_a_user_error(fraction: float, message: str) -> None:
    items: list[EPItem] = read_conll_tags(CHUNK_TRAIN, "conll2000-chunk")
    with pytest.raises(UserError, match=message):
        split_dev(items, fraction, seed=0, mode="eptest")
