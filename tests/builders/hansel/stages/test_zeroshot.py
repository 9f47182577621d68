"""`entbench build hansel-zeroshot`: E_new half uniform, half type-balanced (spec §5; Hansel §3.4)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from entbench.engine.manifest import load_manifest
from tests.builders.hansel.build_support import NEW, build, rows
from tests.builders.kb.support import HIERARCHY_DUMP, NEW_DUMP, dump_lines, read_dump

TYPES = ("PER", "LOC", "ORG", "EVENT", "OTHER")


def pool(dirs: dict[str, Path]) -> list[dict[str, Any]]:
    return sorted(rows(dirs["hansel_zeroshot"], "zeroshot_pool"), key=lambda r: r["pool_index"])


def stats(directory: Path) -> dict[str, Any]:
    result: dict[str, Any] = load_manifest(directory)["stats"]
    return result


@pytest.fixture(scope="module")
def kgtk(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The real KGTK class hierarchy (real P31/P279, so real coarse types) as the new dump; the old
    dump lacks every item whose QID number is divisible by 3, which makes those E_new."""
    old = tmp_path_factory.mktemp("kgtk") / "old.json.gz"
    kept = [line for line in dump_lines(HIERARCHY_DUMP) if int(json.loads(line)["id"][1:]) % 3]
    with gzip.open(old, "wt", encoding="utf-8") as handle:
        handle.write("[\n" + ",\n".join(kept) + "\n]\n")
    return build(
        ("hansel-zeroshot",),
        sources=(f"wikidata_old={old}", f"wikidata_new={HIERARCHY_DUMP}"),
        params=("internal_filter.site=", "hansel_zeroshot.size=200", "hansel_zeroshot.language=en"),
    )


def test_balanced_half_within_one_of_the_target_on_real_types(kgtk: dict[str, Path]) -> None:
    records = pool(kgtk)
    new = {r["qid"]: r for r in rows(kgtk["entity_diff"], "kb_entities") if r["in_new"]}
    coarse = {r["qid"]: r["coarse"] for r in rows(kgtk["coarse_types"], "coarse_types")}
    assert len(new) > 2000 and all(int(q[1:]) % 3 == 0 for q in new)
    assert len(records) == 200 and len({r["qid"] for r in records}) == 200
    assert [r["criterion"] for r in records] == ["uniform"] * 100 + ["balanced"] * 100
    balanced = Counter(r["coarse"] for r in records if r["criterion"] == "balanced")
    for t in TYPES:
        assert abs(balanced[t] - 100 / len(TYPES)) <= 1, (t, balanced)
    uniform = Counter(r["coarse"] for r in records if r["criterion"] == "uniform")
    assert uniform["OTHER"] > uniform["EVENT"]  # the uniform half keeps E_new's skew
    for r in records:
        assert r["qid"] in new and r["coarse"] == coarse[r["qid"]]
        assert r["label"] == new[r["qid"]]["label_en"]
    s = stats(kgtk["hansel_zeroshot"])
    assert {t: s[f"quota_{t}"] for t in TYPES} == dict(balanced)
    assert sum(s[f"available_{t}"] for t in TYPES) == s["e_new_entities"] == len(new)


def test_seeded(kgtk: dict[str, Path]) -> None:
    params = ("internal_filter.site=", "hansel_zeroshot.size=200", "hansel_zeroshot.language=en")
    old = load_manifest(kgtk["wikidata_old"])["sources"]["wikidata_old"]["path"]  # absolute: a tmp file
    sources = (f"wikidata_old={old}", f"wikidata_new={HIERARCHY_DUMP}")
    other = build(("hansel-zeroshot",), sources=sources, params=(*params, "hansel_zeroshot.seed=9"))
    assert {r["qid"] for r in pool(other)} != {r["qid"] for r in pool(kgtk)}


def test_fixture_world_pool_shows_what_annotators_need() -> None:
    dirs = build()
    records = pool(dirs)
    raw = read_dump(NEW).entities
    new = {r["qid"] for r in rows(dirs["entity_diff"], "kb_entities") if r["in_new"]}
    assert len(records) == 20 and {r["qid"] for r in records} <= new
    for r in records:
        doc = raw[r["qid"]]
        assert r["title"] == doc["sitelinks"]["zhwiki"]["title"]
        assert r["label"] == doc["labels"]["zh"]["value"]
        assert r["aliases"] == [a["value"] for a in (doc.get("aliases") or {}).get("zh", [])]
    balanced = Counter(r["coarse"] for r in records if r["criterion"] == "balanced")
    quota = {t: stats(dirs["hansel_zeroshot"])[f"quota_{t}"] for t in TYPES}
    assert dict(balanced) == {t: n for t, n in quota.items() if n}
    assert all(abs(n - 10 / len(TYPES)) <= 1 for n in quota.values())


def test_no_pool_entity_is_a_training_gold() -> None:
    dirs = build()
    golds = {r["gold_id"] for r in rows(dirs["hansel"], "train")}
    assert golds and not golds & {r["qid"] for r in pool(dirs)}
    audit = stats(dirs["hansel_zeroshot_mem_audit"])
    assert audit["leakage_pairs_in_train"] == 0 and audit["leakage_pair_share_pct"] == 0.0
    assert audit["leakage_rows"] == 20


def test_real_new_entity_of_the_bundled_config() -> None:
    # The kb's real pair: Q3454165 (Kevin Bacon) is E_new there, with a real description and alias.
    dirs = build(("hansel-zeroshot",), sources=())
    by_qid = {r["qid"]: r for r in pool(dirs)}
    doc = read_dump(NEW_DUMP).entities  # the bundled config's wikidata_new
    bacon = by_qid["Q3454165"]
    assert bacon["title"] == doc["Q3454165"]["sitelinks"]["zhwiki"]["title"]
    assert bacon["description"] == doc["Q3454165"]["descriptions"]["zh"]["value"]
    assert bacon["aliases"] == [a["value"] for a in doc["Q3454165"]["aliases"]["zh"]]
