"""NED's prior-only accuracy (EntEval §3.7: 58.2%) against a brute-force count over the written files,
and candidates from a `mention<TAB>entity<TAB>count` dictionary instead of the alias table, on the
constructed world (`fixtures/enteval/enwiki-constructed.xml`, whose titles have Wikidata items)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entbench.builders.enteval import ned
from entbench.builders.enteval.errors import SourceError
from tests.builders.enteval import loader_formats as loaders
from tests.builds import build
from tests.conftest import FIXTURES
from tests.world_support import SamplesBuilds

#: CrossWikis-style entries: titles with `_`, one URL-escaped, one with no article in the dump.
DICTIONARY = """\
Queen\tMonarch\t7
Queen\tQueen_%28chess%29\t3
Queen\tElizabeth_II\t5
the capital\tLondon\t6
the capital\tBerlin\t2
Britain\tUnited_Kingdom\t9
Berlin\tBerlin\t4
Berlin\tBerlin\t1
UK\tUnited_Kingdom\t3
"""


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def read_all(task_dir: Path) -> dict[str, list[tuple[list[str], list[list[Any]]]]]:
    """Per split: (mention words, candidates [desc, prior, label, name words]) as the loader reads them."""
    out = {}
    for split in ned.SPLITS:
        contexts, descs = loaders.read_conll_yago(task_dir / f"conll-yago/{split}.final.txt")
        out[split] = [(c[0][c[1] : c[2]], d) for c, d in zip(contexts, descs, strict=True)]
    return out


def brute_force(lines: list[tuple[list[str], list[list[Any]]]]) -> int:
    """Lines whose gold (the loader's label 1) has a prior above every other candidate's."""
    right = 0
    for _, candidates in lines:
        gold = [c[1] for c in candidates if c[2] == 1]
        others = [c[1] for c in candidates if c[2] == 0]
        right += gold[0] > max(others, default=-1.0)
    return right


@pytest.fixture(scope="module")
def builds(
    tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds
) -> dict[str, tuple[dict[str, Any], Path]]:
    base = tmp_path_factory.mktemp("ned")
    source = f"wikipedia={FIXTURES / 'enteval' / 'enwiki-constructed.xml'}"
    dictionary = base / "crosswikis.tsv"
    dictionary.write_text(DICTIONARY, encoding="utf-8")
    result = {}
    for name, params in (
        ("alias", []),
        ("dictionary", [f"enteval_conll_yago.candidate_dictionary={dictionary}"]),
    ):
        # Both start from the run's shared build on this world: the dictionary's only rebuilds
        # the stages its parameter reaches.
        samples_builds.seed(base / name, "enteval-tasks", sources=[source])
        dirs = build(  # no test here reads the card: not drawn
            "enteval-tasks",
            out=base / name,
            sources=[source],
            params=params,
            progress=False,
            log=quiet,
            card=False,
        )
        stats = json.loads((dirs["enteval_conll_yago"] / "_MANIFEST.json").read_text(encoding="utf-8"))[
            "stats"
        ]
        result[name] = (stats, dirs["enteval_tasks"] / "_enteval")
    return result


@pytest.mark.parametrize("name", ["alias", "dictionary"])
def test_prior_only_accuracy_is_the_brute_force_count(
    builds: dict[str, tuple[dict[str, Any], Path]], name: str
) -> None:
    stats, task_dir = builds[name]
    lines = read_all(task_dir)
    total = right = 0
    for split, rows in lines.items():
        correct = brute_force(rows)
        assert stats.get(f"prior_only_correct_{split}", 0) == correct
        assert stats.get(f"mentions_written_{split}", 0) == len(rows)
        if rows:
            assert stats[f"prior_only_accuracy_{split}"] == pytest.approx(correct / len(rows), abs=1e-6)
        total, right = total + len(rows), right + correct
    assert 0 < right < total  # some lines right, some wrong: the count tells them apart
    assert stats["prior_only_accuracy"] == pytest.approx(right / total, abs=1e-6)


def test_candidates_come_from_the_dictionary(builds: dict[str, tuple[dict[str, Any], Path]]) -> None:
    stats, task_dir = builds["dictionary"]
    lines = {(split, " ".join(m)): c for split, rows in read_all(task_dir).items() for m, c in rows}
    names = {key: ["_".join(c[3]) for c in candidates] for key, candidates in lines.items()}
    priors = {key: [c[1] for c in candidates] for key, candidates in lines.items()}
    # Monarch 7 and Queen (chess) 3 of the mention's 15; Elizabeth II has no article: discarded.
    assert names[("testb", "queen")] == ["Monarch", "Queen_(chess)"]
    assert priors[("testb", "queen")] == pytest.approx([0.7, 0.3])
    # The gold (Berlin, 2 of 8) after London (6 of 8) in the dictionary: first, but not the highest.
    assert names[("testa", "the capital")] == ["Berlin", "London"]
    assert priors[("testa", "the capital")] == pytest.approx([0.25, 0.75])
    # The dictionary is looked up as AIDA writes the mention: lowercase "queen" has no entry.
    assert names[("train", "queen")] == ["Queen_(chess)"]
    assert stats["candidates_unaligned"] == 1 and stats["gold_missing_prior_1e-6"] >= 1


def test_dictionary_lines_are_checked(tmp_path: Path) -> None:
    entries = ned.read_dictionary(DICTIONARY.splitlines(), {"Berlin", "Queen"}, top=2)
    assert entries["Berlin"] == [ned.DictionaryEntry("Berlin", 1.0)]  # a repeated pair adds up
    assert [e.title for e in entries["Queen"]] == ["Monarch", "Elizabeth II"]  # top 2 by count
    assert entries["Queen"][0].prior == pytest.approx(7 / 15)  # over all 15, not the top 2
    with pytest.raises(SourceError, match="line 2: count must be a positive integer"):
        ned.read_dictionary(["a\tB\t1", "a\tC\tmany"], {"a"}, top=30)
    with pytest.raises(SourceError, match="line 1: expected mention<TAB>entity<TAB>count"):
        ned.read_dictionary(["a B 1"], {"a"}, top=30)
