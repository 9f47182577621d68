"""Rare: four candidates, the loader's 150-word window, blocks closed by an empty line."""

from __future__ import annotations

from pathlib import Path

import pytest

from entbench.builders.enteval import rare
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.sampling import proportional
from entbench.builders.enteval.tokens import Tokenizer
from tests.builders.enteval.loader_formats import read_rare

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


GOOD = (
    '{"id": "ok", "context": "a **blank** b", "candidates": [{"name": "x", "description": "y"}], "answer": 0}'
)


def instances() -> list[rare.RareInstance]:
    return rare.parse_rare((FIXTURES / "rare.jsonl").read_text(encoding="utf-8").splitlines())


def test_fixture_parses() -> None:
    found = instances()
    assert len(found) == 8 and [len(i.candidates) for i in found].count(3) == 1


@pytest.mark.parametrize(
    "line",
    [
        '{"context": "no marker", "candidates": [], "answer": 0}',
        '{"context": "**blank** **blank**", "candidates": [], "answer": 0}',
        '{"context": "a **blank**", "candidates": [{"name": "x", "description": "y"}], "answer": 1}',
        '{"context": "a **blank**", "candidates": [{"name": "x"}], "answer": 0}',
        "[1, 2]",
        "{not json",
    ],
)
def test_bad_instances(line: str) -> None:
    with pytest.raises(SourceError) as err:
        rare.parse_rare([GOOD, line])
    assert err.value.line == 2


def test_window_is_what_the_loader_keeps(tmp_path: Path) -> None:
    long = next(i for i in instances() if i.id == "r5")
    block = rare.rare_block(long, Tokenizer.shared().words, lowercase=True)
    assert block is not None and len(block) == 7 and block[-1] == ""
    words = block[0].split()
    index = words.index(rare.BLANK)
    assert index == 150 and len(words) - index - 1 == 149  # words[index-150 : index+150]
    path = tmp_path / "test.txt"
    path.write_text("".join(line + "\n" for line in block), encoding="utf-8")
    labels, contexts, descs = read_rare(path)
    assert labels == [0]
    [candidates] = contexts
    assert len(candidates) == rare.CANDIDATES == len(descs[0])
    # The loader's own cut leaves the written window unchanged; each candidate fills the blank.
    new_words, start, end = candidates[0]
    assert new_words[:start] == words[:index] and new_words[start:end] == ["Ingrid", "Salo"]
    assert new_words[end:] == words[index + 1 :]
    assert descs[0][0][:3] == ["ingrid", "salo", "was"]


def test_a_candidate_without_words_drops_the_instance() -> None:
    one = instances()[0]
    empty = rare.RareInstance(one.id, one.left, one.right, (("x", " "), *one.candidates[1:]), 0, 1)
    assert rare.rare_block(empty, Tokenizer.shared().words, lowercase=True) is None


def test_proportional_split_sizes() -> None:
    assert proportional(20000, (10000, 4000, 4000)) == [10000, 4000, 4000]
    assert proportional(7, (10000, 4000, 4000)) == [4, 2, 1]
    assert sum(proportional(1001, (10000, 4000, 4000))) == 1001
    assert proportional(0, (10000, 4000, 4000)) == [0, 0, 0]
