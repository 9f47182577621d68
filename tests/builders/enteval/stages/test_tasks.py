"""`entbench build enteval-tasks` on the bundled config: every file read back as the EntEval loaders
read it, name matching audited, skipped tasks listed, errors, and byte identity."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench.builders.enteval import ned
from tests.builders.enteval import loader_formats as loaders
from tests.builds import build
from tests.conftest import SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[[list[str]], Result]


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def table(directory: Path, name: str) -> list[dict[str, Any]]:
    files = (sorted(directory.glob(f"{name}/*.parquet")) if name else []) or sorted(
        directory.glob("*.parquet")
    )
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def stats(directory: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((directory / "_MANIFEST.json").read_text(encoding="utf-8"))["stats"]
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> dict[str, Path]:
    # The run's shared build seeds this module's own directory (the tests below build into it).
    out = tmp_path_factory.mktemp("tasks")
    samples_builds.seed(out, "enteval-tasks")
    return build("enteval-tasks", out=out, progress=False, log=quiet, card=False)


def task_dir(built: dict[str, Path]) -> Path:
    return built["enteval_tasks"] / "_enteval"


def test_every_task_is_built_and_its_files_exist(built: dict[str, Path]) -> None:
    tasks = {t["task"]: t for t in table(built["enteval_tasks"], "tasks")}
    assert set(tasks) == {"kore", "wikisrs", "ert", "conll_yago", "rare", "cap", "cerp", "et", "efp"}
    assert {t["status"] for t in tasks.values()} == {"built"}
    for task in tasks.values():
        lines = 0
        for name in task["files"]:
            text = (task_dir(built) / name).read_text(encoding="utf-8")
            lines += text.count("\n")
        assert lines == task["lines"]
    listed = json.loads((built["enteval_tasks"] / "_MANIFEST.json").read_text(encoding="utf-8"))["files"]
    assert sorted(listed) == sorted(f"_enteval/{n}" for t in tasks.values() for n in t["files"])


def test_kore_scores_and_descriptions(built: dict[str, Path]) -> None:
    heads, groups, firsts = loaders.read_kore(task_dir(built) / "KORE/all.txt")
    assert len(heads) == 2  # the third seed has an unmatched candidate: its group is left out whole
    assert [int(x) for group in firsts for x in group] == loaders.kore_gold_scores(groups)
    descriptions = {
        d["title"]: d["description"].lower().split() for d in table(built["wikient_descriptions"], "")
    }
    assert heads[0] == descriptions["Aristotle"]  # attached by title, lowercased, <= 100 tokens
    assert groups[0][0] == descriptions["Ayn Rand"]  # "Ayn_Rand" in the source
    assert stats(built["enteval_kore"])["dropped_group_unmatched_name"] == 1


def test_matches_keep_every_score_and_report_unmatched(built: dict[str, Path]) -> None:
    matches = {m["name"]: m for m in table(built["enteval_wikisrs"], "matches")}
    assert (matches["AynRand"]["method"], matches["AynRand"]["title"]) == ("redirect", "Ayn Rand")
    assert (matches["academy awards"]["method"], matches["academy awards"]["title"]) == (
        "casefold",
        "Academy Awards",
    )
    fuzzy = matches["Abraham Lincon"]
    assert fuzzy["method"] == "fuzzy" and fuzzy["title"] == "Abraham Lincoln" and 90 <= fuzzy["score"] < 100
    missing = matches["Steve Jobs"]
    assert missing["method"] == "unmatched" and missing["page_id"] is None
    assert missing["best_title"] is not None and missing["best_score"] < 90
    assert stats(built["enteval_wikisrs"])["names_unmatched"] == 1
    rows = loaders.read_wikisrs(task_dir(built) / "wikisrs/WikiSRS_relatedness.csv.pro")
    assert [(score, " ".join(a), " ".join(b)) for score, a, b, _, _ in rows] == [
        (72.5, "Aristotle", "Ayn Rand"),
        (55.25, "AynRand", "Anarchism"),
        (61.0, "Abraham Lincon", "Alabama"),
        (48.3333, "academy awards", "Allan Dwan"),
        (20.0, "Albedo", "International Atomic Time"),
    ]
    assert len(loaders.read_wikisrs(task_dir(built) / "wikisrs/WikiSRS_similarity.csv.pro")) == 4


def test_ert_samples_per_relation(built: dict[str, Path]) -> None:
    splits = {s: loaders.read_ert(task_dir(built) / f"ERT/{s}.txt") for s in ("train", "dev", "test")}
    counts = {s: Counter(row[0] for row in rows) for s, rows in splits.items()}
    relations = {"influence.influence_node.influenced_by", "award.award_category.nominees"}
    # The fixture config asks 1/2/2 per relation; relation 3 has too few tuples, relation 4 no article.
    assert counts == {s: dict.fromkeys(relations, n) for s, n in (("train", 1), ("dev", 2), ("test", 2))}
    chosen = [tuple(" ".join(x) for x in row[:3]) for rows in splits.values() for row in rows]
    assert len(set(chosen)) == len(chosen) == 10
    assert stats(built["enteval_ert"])["dropped_relation_too_small:location.location.people_born_here"] == 3


def test_conll_yago_gold_first(built: dict[str, Path]) -> None:
    contexts, descs = loaders.read_conll_yago(task_dir(built) / "conll-yago/train.final.txt")
    # The bundled `wikipedia` source has the articles of only two gold titles, and its links reach no
    # Wikidata item, so the alias table offers no candidate: the gold alone, prior 1e-6 -> 1.
    assert [
        (c[0][c[1] : c[2]], [(d[2], d[1], d[3]) for d in ds]) for c, ds in zip(contexts, descs, strict=True)
    ] == [(["aristotle"], [(1, 1.0, ["Aristotle"])])]
    assert stats(built["enteval_conll_yago"])["dropped_nil_mention"] == 1


def test_rare_has_four_candidates_and_the_splits(built: dict[str, Path]) -> None:
    total = 0
    for split in ("train", "valid", "test"):
        labels, contexts, descs = loaders.read_rare(task_dir(built) / f"rare/{split}.txt")
        assert all(len(c) == 4 for c in contexts) and all(len(d) == 4 for d in descs)
        assert all(0 <= label < 4 for label in labels)
        total += len(labels)
    assert total == 7  # eight instances, one with three candidates
    assert stats(built["enteval_rare"])["dropped_not_four_candidates"] == 1


def test_cap_and_cerp_are_balanced(built: dict[str, Path]) -> None:
    for kind in ("same", "next"):
        for split in ("train", "dev", "test"):
            items = loaders.read_cap(task_dir(built) / f"CAP/{kind}/{split}.txt")
            labels = Counter(item[2] for item in items)
            assert labels[1] == labels[0]
            for (w1, s1, e1), (w2, s2, e2), _ in items:
                assert w1 == w2 and 0 <= s1 < e1 <= len(w1) and 0 <= s2 < e2 <= len(w2)
    rows = [r for s in ("train", "dev", "test") for r in loaders.read_cerp(task_dir(built) / f"CERP/{s}.txt")]
    labels = Counter(r[0] for r in rows)
    assert labels[0] == labels[1] > 0
    cerp = stats(built["enteval_cerp"])
    assert cerp["rule1_negatives"] > 0 and cerp["rule2_negatives"] > 0 and cerp["rule3_positives"] > 0
    # Rule 3 makes negated statements positive, so "not" does not give the label away.
    negated = Counter(r[0] for r in rows if "not" in r[1][0])
    assert negated[0] > 0 and negated[1] > 0


def test_unconfigured_tasks_are_skipped_and_listed(built: dict[str, Path], tmp_path: Path) -> None:
    out = built["enteval_tasks"].parents[2]
    params = ["enteval_kore.source=", *(f"enteval_cap.{f}=" for f in ("train", "dev", "test", "vectors"))]
    dirs = build("enteval-tasks", out=out, params=params, progress=False, log=quiet, card=False)
    tasks = {t["task"]: t for t in table(dirs["enteval_tasks"], "tasks")}
    assert (tasks["kore"]["status"], tasks["cap"]["status"]) == ("skipped_no_source", "skipped_no_source")
    assert tasks["kore"]["files"] == [] and tasks["ert"]["status"] == "built"
    s = stats(dirs["enteval_tasks"])
    assert (s["tasks_built"], s["tasks_skipped"], s["skipped:kore"], s["skipped:cap"]) == (7, 2, 1, 1)
    assert not (dirs["enteval_tasks"] / "_enteval" / "KORE").exists()
    assert stats(dirs["enteval_kore"]) == {"skipped_no_source": 1}


def test_user_and_data_errors(run_cli: RunCli, tmp_path: Path, fixtures_dir: Path) -> None:
    out = str(tmp_path / "out")

    def build_with(param: str) -> Result:
        command = ["build", "enteval-tasks", "--out", out, "--no-progress", "--config", str(SAMPLES_CONFIG)]
        return run_cli([*command, "--param", param])

    partial = build_with("enteval_cap.vectors=")
    assert partial.exit_code == 2 and "given without vectors" in partial.output
    missing = build_with("enteval_kore.source=nope.txt")
    # A relative --param path is taken from the current directory, and named in full.
    assert missing.exit_code == 2 and f"file not found: {Path.cwd() / 'nope.txt'}" in missing.output
    bad = tmp_path / "kore.txt"
    bad.write_text("Aristotle\n\tAltruism\nAyn Rand\n\tAnarchism\n\tAltruism\n", encoding="utf-8")
    broken = build_with(f"enteval_kore.source={bad}")
    assert broken.exit_code == 1
    assert f"{bad} at byte offset 20: line 3: seed 'Ayn Rand' has 2 candidates" in broken.output


def test_source_content_is_fingerprinted(built: dict[str, Path], tmp_path: Path, fixtures_dir: Path) -> None:
    out = built["enteval_tasks"].parents[2]
    copy = tmp_path / "kore.txt"
    shutil.copyfile(fixtures_dir / "enteval" / "kore.txt", copy)

    def build_with_copy() -> dict[str, Path]:
        params = [f"enteval_kore.source={copy}"]
        return build("enteval-tasks", out=out, params=params, progress=False, log=quiet, card=False)

    same = build_with_copy()
    before = (same["enteval_tasks"] / "_enteval/KORE/all.txt").read_bytes()
    assert before == (task_dir(built) / "KORE/all.txt").read_bytes()
    copy.write_text(
        copy.read_text(encoding="utf-8").replace("\tAltruism\n\tAnarchism", "\tAnarchism\n\tAltruism")
    )
    edited = build_with_copy()
    assert edited["enteval_kore"] != same["enteval_kore"]  # new content, new fingerprint: rebuilt
    _, groups, _ = loaders.read_kore(edited["enteval_tasks"] / "_enteval/KORE/all.txt")
    _, old_groups, _ = loaders.read_kore(task_dir(built) / "KORE/all.txt")
    assert groups[0][1:3] == [old_groups[0][2], old_groups[0][1]]


def test_seeds_are_parameters(built: dict[str, Path]) -> None:
    out = built["enteval_tasks"].parents[2]
    other = build(
        "enteval-tasks",
        out=out,
        params=["enteval_ert.seed=7", "enteval_cerp.seed=7"],
        progress=False,
        log=quiet,
        card=False,
    )
    for name in ("ERT/train.txt", "CERP/train.txt"):
        assert (other["enteval_tasks"] / "_enteval" / name).read_bytes() != (
            task_dir(built) / name
        ).read_bytes()
    # Same seed, same bytes: the default build again is up to date and identical.
    again = build("enteval-tasks", out=out, progress=False, log=quiet, card=False)
    assert again["enteval_tasks"] == built["enteval_tasks"]


def test_workers_give_identical_bytes(
    built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The upstream stages (the dump scans, the alias table, WikiEnt's) come from the one-worker
    # build, as a resumed build finds them; every EntEval stage, the ones compared, is rebuilt with
    # two workers. (The upstream stages' own worker-count tests are in their datasets' tests.)
    root, out = built["enteval_tasks"].parents[2], tmp_path_factory.mktemp("tasks-2")
    for stage, directory in built.items():
        if not stage.startswith("enteval_"):
            shutil.copytree(directory, out / directory.relative_to(root))
    two = build("enteval-tasks", out=out, workers=2, progress=False, log=quiet, card=False)
    for stage in [s for s in built if s.startswith("enteval_")]:
        one = json.loads((built[stage] / "_MANIFEST.json").read_text(encoding="utf-8"))
        other = json.loads((two[stage] / "_MANIFEST.json").read_text(encoding="utf-8"))
        assert one["fingerprint"] == other["fingerprint"]
        assert (one["outputs"], one["files"]) == (other["outputs"], other["files"])


def test_ned_with_alias_table_candidates(
    tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path, samples_builds: SamplesBuilds
) -> None:
    """On the constructed world, whose titles have Wikidata sitelinks, the alias table has candidates."""
    source = f"wikipedia={fixtures_dir / 'enteval' / 'enwiki-constructed.xml'}"
    out = tmp_path_factory.mktemp("ned")
    samples_builds.seed(out, "enteval-tasks", sources=[source])
    dirs = build(
        "enteval-tasks",
        out=out,
        sources=[source],
        progress=False,
        log=quiet,
        card=False,
    )
    lines: dict[tuple[str, str], list[list[Any]]] = {}
    for split in ned.SPLITS:
        contexts, descs = loaders.read_conll_yago(
            dirs["enteval_tasks"] / f"_enteval/conll-yago/{split}.final.txt"
        )
        for (words, s, e), candidates in zip(contexts, descs, strict=True):
            lines[(split, " ".join(words[s:e]))] = candidates
            assert [c[2] for c in candidates] == [1] + [0] * (len(candidates) - 1)
            assert sum(c[1] for c in candidates) == pytest.approx(1.0)
            assert len(candidates) <= 30
            assert len({"_".join(c[3]) for c in candidates}) == len(candidates)
    names = {key: ["_".join(c[3]) for c in candidates] for key, candidates in lines.items()}
    assert names[("train", "queen")] == ["Queen_(chess)"]  # lowercase anchors only ever meant the piece
    assert names[("testa", "britain")] == ["United_Kingdom"]  # a redirect title and an anchor
    # "Queen" is an anchor of Monarch and of Queen (chess), once each (ties by QID number): the gold
    # (Monarch) first, the other candidate after it, priors as the alias table has them.
    assert names[("testb", "queen")] == ["Monarch", "Queen_(chess)"]
    assert [c[1] for c in lines[("testb", "queen")]] == [0.5, 0.5]
    # The gold of "the capital" (Berlin) is not among the alias candidates (London): prior 1e-6, then
    # renormalised with London's 1.0.
    capital = lines[("testa", "the capital")]
    assert names[("testa", "the capital")] == ["Berlin", "London"]
    assert capital[0][1] == pytest.approx(1e-6 / (1e-6 + 1.0)) and capital[1][1] == pytest.approx(
        1 / (1 + 1e-6)
    )
    s = stats(dirs["enteval_conll_yago"])
    assert s["gold_missing_prior_1e-6"] >= 1 and s["gold_in_candidates"] >= 1
