"""ESR writers (KORE, WikiSRS) read back by the loaders' own parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from entbench.builders.enteval import esr
from entbench.builders.enteval.errors import SourceError
from tests.builders.enteval.loader_formats import kore_gold_scores, read_kore, read_wikisrs

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


def describe(name: str) -> str | None:
    return None if name == "Steve Jobs" else f"about {name.lower()} ."


def test_kore_groups_from_the_fixture() -> None:
    groups = esr.parse_kore((FIXTURES / "kore.txt").read_text(encoding="utf-8").splitlines())
    assert [g.seed for g in groups] == ["Aristotle", "Academy Awards", "Abraham Lincoln"]
    assert groups[0].candidates == ("Ayn_Rand", "Altruism", "Anarchism", "Achilles")
    assert {len(g.candidates) for g in groups} == {4}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("\tOrphan\nSeed\n\tA\n", 1),  # a candidate before any seed
        ("Seed\n\tA\n\tB\nOther\n\tC\n", 4),  # unequal groups: the loader could not stack them
        ("Seed\nOther\n\tC\n", 1),  # a seed without candidates
    ],
)
def test_kore_source_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(SourceError) as err:
        esr.parse_kore(text.splitlines())
    assert err.value.line == line


def test_kore_scores_are_n_minus_1_to_0_and_groups_stay_whole(tmp_path: Path) -> None:
    groups = esr.parse_kore((FIXTURES / "kore.txt").read_text(encoding="utf-8").splitlines())
    lines, dropped = esr.kore_lines(groups, describe)
    assert dropped == ["Abraham Lincoln"]  # its candidate Steve Jobs has no article: the whole group goes
    path = tmp_path / "all.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    heads, candidates, firsts = read_kore(path)
    assert heads == [["about", "aristotle", "."], ["about", "academy", "awards", "."]]
    assert [len(g) for g in candidates] == [4, 4]
    assert candidates[0][0] == ["about", "ayn_rand", "."]
    # The written first fields are the loader's own gold scores for each position.
    gold = kore_gold_scores(candidates)
    assert [int(x) for group in firsts for x in group] == gold == [3, 2, 1, 0, 3, 2, 1, 0]


def test_wikisrs_columns_by_header_name_and_four_decimals(tmp_path: Path) -> None:
    text = "Mean\tStdDev\tTerm2\tTerm1\n72.5\t1\tAyn Rand\tAristotle\n48.333333\t2\tAllan Dwan\tSteve Jobs\n"
    pairs = esr.parse_wikisrs(text.splitlines())
    assert [(p.score, p.first, p.second) for p in pairs] == [
        (72.5, "Aristotle", "Ayn Rand"),
        (48.333333, "Steve Jobs", "Allan Dwan"),
    ]
    lines, dropped = esr.wikisrs_lines(pairs, describe)
    assert dropped == 1
    path = tmp_path / "WikiSRS_relatedness.csv.pro"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert read_wikisrs(path) == [
        (72.5, ["Aristotle"], ["Ayn", "Rand"], ["about", "aristotle", "."], ["about", "ayn", "rand", "."])
    ]
    assert lines[0].startswith("72.5000\tAristotle\tAyn Rand\t")


def test_wikisrs_errors() -> None:
    with pytest.raises(SourceError) as err:
        esr.parse_wikisrs(["Term1\tTerm2\tScore", "a\tb\t1"])
    assert err.value.line == 1 and "Mean" in str(err.value)
    with pytest.raises(SourceError) as err:
        esr.parse_wikisrs(["Term1\tTerm2\tMean", "a\tb\tmany"])
    assert err.value.line == 2


def test_the_test_reader_reads_enteval_s_released_file() -> None:
    """Two real lines of EntEval's own WikiSRS file: the reader (and so the format) is the loader's."""
    rows = read_wikisrs(FIXTURES / "enteval-release.WikiSRS_relatedness.head2.csv.pro")
    assert [(score, first, second) for score, first, second, _, _ in rows] == [
        (100.0, ["Moscow"], ["Moscow", "Kremlin"]),
        (98.8333, ["Vladimir", "Putin"], ["Moscow"]),
    ]
    # Their shape is what our writer produces: names as written, lowercased word tokens, <= ~100.
    for _, _, _, desc1, desc2 in rows:
        assert all(w == w.lower() for w in desc1 + desc2)
        assert 90 <= len(desc1) <= 110
