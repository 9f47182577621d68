"""NED CoNLL-YAGO: the AIDA reader, gold-first candidate lists and the loader line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from entbench.builders.enteval import ned
from entbench.builders.enteval.errors import SourceError
from tests.builders.enteval.loader_formats import read_conll_yago

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


def mentions() -> list[ned.AidaMention]:
    return list(ned.parse_aida((FIXTURES / "aida-yago2.tsv").read_text(encoding="utf-8").splitlines()))


def test_aida_mentions_splits_and_nil() -> None:
    found = mentions()
    assert [(m.split, m.mention, m.gold) for m in found][:6] == [
        ("train", "queen", "Queen (chess)"),
        ("train", "London", "London"),
        ("train", "UK", "United Kingdom"),
        ("train", "France", "France"),
        ("train", "Aristotle", "Aristotle"),
        ("train", "EU", None),  # --NME--
    ]
    united = [m for m in found if m.mention == "United Kingdom"]
    assert [(m.split, m.sentence[m.start : m.end]) for m in united] == [("testa", ("United", "Kingdom"))]
    assert {m.split for m in found} == {"train", "testa", "testb"}
    assert len(found) == 17


def test_gold_title_from_url_or_yago_name() -> None:
    assert ned.gold_title(["x", "B", "x", "S\\u00e3o_Paulo"]) == "São Paulo"
    assert ned.gold_title(["x", "B", "x", "Y", "http://en.wikipedia.org/wiki/S%C3%A3o_Paulo"]) == "São Paulo"
    assert ned.gold_title(["x", "B", "x", "--NME--"]) is None


@pytest.mark.parametrize(
    ("lines", "line"),
    [(["-DOCSTART- (1 A)", "x\tI\tx\tX"], 2), (["-DOCSTART- (1 A)", "x\tB\tx"], 2), (["\tB"], 1)],
)
def test_aida_errors(lines: list[str], line: int) -> None:
    with pytest.raises(SourceError) as err:
        list(ned.parse_aida(lines))
    assert err.value.line == line


def test_gold_first_renormalised_and_missing_gold_at_1e_minus_6() -> None:
    ranked = [ned.Candidate(1, "A", 0.5), ned.Candidate(2, "B", 0.3), ned.Candidate(3, "C", 0.1)]
    chosen, found = ned.candidate_list(ned.Candidate(2, "B", 0.0), ranked, max_candidates=30)
    assert found and [c.key for c in chosen] == [2, 1, 3]
    kept = math.fsum([0.5, 0.3, 0.1])
    assert [c.prior for c in chosen] == [0.3 / kept, 0.5 / kept, 0.1 / kept]
    chosen, found = ned.candidate_list(ned.Candidate(9, "Z", 0.0), ranked, max_candidates=30)
    total = math.fsum([1e-6, 0.5, 0.3, 0.1])
    assert not found and [c.key for c in chosen] == [9, 1, 2, 3]
    assert [c.prior for c in chosen] == [1e-6 / total, 0.5 / total, 0.3 / total, 0.1 / total]
    # At most max_candidates, the gold included: a missing gold takes the last place.
    chosen, _ = ned.candidate_list(ned.Candidate(9, "Z", 0.0), ranked, max_candidates=3)
    assert [c.key for c in chosen] == [9, 1, 2]
    chosen, _ = ned.candidate_list(ned.Candidate(9, "Z", 0.0), [], max_candidates=30)
    assert [(c.key, c.prior) for c in chosen] == [(9, 1.0)]


def test_line_read_back_by_the_loader(tmp_path: Path) -> None:
    mention = next(m for m in mentions() if m.mention == "United Kingdom")
    words, start, end = ned.sentence_words(mention, lowercase=True)
    chosen, _ = ned.candidate_list(
        ned.Candidate(102, "United Kingdom", 0.0), [ned.Candidate(101, "London", 0.25)], 30
    )
    texts = {102: "the united kingdom is a country .", 101: "london is a city ."}
    line = ned.ned_line(words, start, end, mention.mention, [(c, texts[c.key]) for c in chosen])
    path = tmp_path / "testa.final.txt"
    path.write_text(line + "\n", encoding="utf-8")
    contexts, descs = read_conll_yago(path)
    assert contexts == [[["fans", "from", "the", "united", "kingdom", "cheered", "."], 3, 5]]
    [candidates] = descs
    assert [c[2] for c in candidates] == [1, 0]  # the loader labels the first candidate gold
    assert [c[3] for c in candidates] == [["United", "Kingdom"], ["London"]]  # names split on "_"
    assert sum(c[1] for c in candidates) == pytest.approx(1.0)
    assert candidates[0][1] == pytest.approx(1e-6 / (1e-6 + 0.25))
