"""CERP: ConceptNet statements, the paper's three rules, per-class sampling, loader lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from entbench.builders.enteval import cerp
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.tokens import Tokenizer
from entbench.builders.enteval.vectors import average, parse_vectors
from tests.builders.enteval.loader_formats import read_cerp

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"
EXCLUDED = ("/r/RelatedTo", "/r/Synonym", "/r/TranslationOf")


def statements(stats: cerp.ParseStats | None = None) -> list[cerp.Statement]:
    lines = (FIXTURES / "conceptnet-assertions.csv").read_text(encoding="utf-8").splitlines()
    return cerp.parse_assertions(lines, EXCLUDED, ("likely to find",), stats or cerp.ParseStats())


def test_filters_count_their_drops() -> None:
    stats = cerp.ParseStats()
    found = statements(stats)
    assert stats.counts == {
        "excluded_phrase": 1,
        "excluded_relation": 1,
        "not_english": 1,
        "no_surface_text": 1,
    }
    assert len(found) == 14
    dog = found[0]
    assert (dog.prefix, dog.first, dog.middle, dog.second, dog.suffix) == (
        "",
        "a dog",
        " is a type of ",
        "pet",
        "",
    )


def test_bad_assertion_lines() -> None:
    with pytest.raises(SourceError) as err:
        cerp.parse_assertions(["a\tb\tc"], (), (), cerp.ParseStats())
    assert err.value.line == 1
    with pytest.raises(SourceError):
        cerp.parse_assertions(["u\t/r/IsA\t/c/en/a\t/c/en/b\t{not json"], (), (), cerp.ParseStats())


@pytest.mark.parametrize(
    ("surface", "negated"),
    [
        ("[[a dog]] is a type of [[pet]]", "a dog is not a type of pet"),  # §3.4: 'is' to 'is not'
        ("[[a dog]] can [[bark]]", "a dog can not bark"),
        ("[[a bird]] has [[wings]]", "a bird does not have wings"),
        ("[[a cat]] wants [[milk]]", "a cat does not want milk"),
        ("You can use [[a saw]] to [[cut wood]]", "You can not use a saw to cut wood"),
        ("[[wood]] [[cut]]", None),
    ],
)
def test_rule_2_negation(surface: str, negated: str | None) -> None:
    line = "\t".join(["u", "/r/X", "/c/en/a", "/c/en/b", '{"surfaceText": "' + surface + '"}'])
    [statement] = cerp.parse_assertions([line], (), (), cerp.ParseStats())
    result = cerp.negate(statement)
    if negated is None:
        assert result is None
    else:
        assert result is not None
        text = result.prefix + result.first + result.middle + result.second + result.suffix
        assert text == negated and (result.first, result.second) == (statement.first, statement.second)


def test_rule_1_picks_similar_surfaces_but_never_a_known_fact() -> None:
    found = statements()
    vectors = parse_vectors((FIXTURES / "vectors.4d.txt").read_text(encoding="utf-8").splitlines())
    words = Tokenizer.shared().words
    known = cerp.known_index(found)
    isa = [s for s in found if s.relation == "/r/IsA"]
    pool = cerp.Pool([(s.second, v) for s in isa if (v := average(words(s.second), vectors)) is not None])
    dog = isa[0]  # a dog is a type of pet
    pet = average(words("pet"), vectors)
    assert pet is not None
    # The nearest surface to "pet" other than itself, with the known fact (dog IsA pet) excluded.
    choices = pool.nearest(pet, {"pet"}, 10)
    assert choices[0] == "animal"  # cos(pet, animal) is the highest in the fixture vectors
    replaced = cerp.replacement(dog, 1, pool, pet, known, neighbours=1, seed=3)
    assert replaced == "animal"
    # "a cat is a type of pet" is known: pet can never replace the tail of "a cat is a type of ...".
    cat = isa[1]
    for seed in range(20):
        assert cerp.replacement(cat, 1, pool, np.array([1.0, 0.75, 0.0, 0.125]), known, 3, seed) != "pet"


def test_sample_is_balanced_split_in_thirds_and_seeded(tmp_path: Path) -> None:
    words = Tokenizer.shared().words
    positives = [cerp.instance(s, 1, words, True) for s in statements()]
    negatives = [cerp.instance(n, 0, words, True) for s in statements() if (n := cerp.negate(s)) is not None]
    pos = [p for p in positives if p is not None]
    neg = [n for n in negatives if n is not None]
    splits = cerp.sample(pos, neg, per_class=6000, seed=1111)
    n = min(len(pos), len(neg))
    assert [len(splits[s]) for s in cerp.SPLITS] == cerp.thirds(2 * n)
    everything = [i for s in cerp.SPLITS for i in splits[s]]
    assert sum(i.label for i in everything) == n == len(everything) - n
    assert cerp.sample(list(reversed(pos)), list(reversed(neg)), 6000, 1111) == splits
    assert cerp.sample(pos, neg, 6000, 7) != splits
    path = tmp_path / "train.txt"
    path.write_text("".join(cerp.cerp_line(i) + "\n" for i in splits["train"]), encoding="utf-8")
    for row, item in zip(read_cerp(path), splits["train"], strict=True):
        label, (words1, s1, e1), (_, s2, e2) = row
        assert label == item.label
        assert words1[s1:e1] == list(item.words[item.first[0] : item.first[1]])
        assert words1[s2:e2] == list(item.words[item.second[0] : item.second[1]])
