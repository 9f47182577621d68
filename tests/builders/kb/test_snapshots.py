"""`entbench build kb` on the real snapshot pair (fixtures/wikidata/entities-{old,new}.json.bz2).

Expectations come from the tests' own stdlib-json reading of the dumps (`tests.builders.kb.support`), and from
the hand-checked facts noted next to them.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.kb.stages import query
from entbench.cards.generic import DROP_COUNTER
from entbench.engine import duck
from entbench.engine.manifest import load_manifest
from entbench.filters.internal import MGENRE_NOPAGE, TABLE7_CLASSES
from tests.builders.kb.support import (
    KB_STAGES,
    NEW_DUMP,
    OLD_DUMP,
    Dump,
    any_rank_items,
    build_kb,
    dump_lines,
    read_dump,
    rows,
    shard_hashes,
    sitelink_keys,
    stats,
    truthy_items,
)
from tests.world_support import SamplesBuilds


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    """One output directory for the module, seeded with the run's shared kb build: builds with
    other parameters reuse the scans."""
    out = tmp_path_factory.mktemp("kb")
    samples_builds.seed(out, "kb")
    return out


@pytest.fixture(scope="module")
def default(out: Path) -> dict[str, Path]:
    """The kb target with the bundled config (Hansel defaults)."""
    return build_kb(out)


@pytest.fixture(scope="module")
def old() -> Dump:
    return read_dump(OLD_DUMP)


@pytest.fixture(scope="module")
def new() -> Dump:
    return read_dump(NEW_DUMP)


def kb_sets(stage_dir: Path) -> tuple[set[str], set[str]]:
    entities = rows(stage_dir, "kb_entities")
    return {r["qid"] for r in entities if r["in_known"]}, {r["qid"] for r in entities if r["in_new"]}


def test_known_and_new_sets(default: dict[str, Path], old: Dump, new: Dump) -> None:
    known, fresh = kb_sets(default["entity_diff"])
    # spec §2.2: E_known = old items with a zhwiki sitelink in the *new* dump; E_new = new items
    # with one whose id the old dump never mentions.
    zh_in_new = {q for q, d in new.items().items() if "zhwiki" in sitelink_keys(d)}
    assert known == set(old.items()) & zh_in_new
    assert fresh == (set(new.items()) & zh_in_new) - set(old.entities) - set(old.redirects)
    # Hand-checked: 38 old items, of which Bile (Q34987), Shin Jung-hyeon (Q494290), Henning
    # Christophersen (Q646148) and the Wikidata Sandbox (Q4115189) have no zhwiki page; of the four
    # items only in the new dump, Constantine the Great and Kevin Bacon have one.
    assert len(old.items()) == 38 and len(known) == 34
    assert set(old.items()) - known == {"Q34987", "Q494290", "Q646148", "Q4115189"}
    assert fresh == {"Q8413", "Q3454165"}
    s = stats(default["entity_diff"])
    assert (s["known_entities"], s["new_entities"], s["new_dump_kept"]) == (34, 2, 36)
    assert s["new_dump_kept_already_in_old_dump"] == 34
    # E_known is no loss: the card's "rows lost" table (counters named `dropped_…`) leaves it out
    assert not [key for key in s if key.startswith("new_dump_kept") and DROP_COUNTER.search(key)]


def test_labels_come_from_the_new_dump(default: dict[str, Path], old: Dump, new: Dump) -> None:
    by_qid = {r["qid"]: r for r in rows(default["entity_diff"], "kb_entities")}
    # Q1's English label changed from "universe" (old) to "Universe" (new).
    assert old.entities["Q1"]["labels"]["en"]["value"] == "universe"
    assert by_qid["Q1"]["label_en"] == "Universe"
    for qid, row in by_qid.items():
        labels = new.entities[qid].get("labels") or {}
        assert row["label_zh"] == (labels.get("zh") or {}).get("value"), qid
    assert set(by_qid["Q1"]) == {
        "qid", "in_known", "in_new", "label_en", "label_zh", "description_en", "description_zh"
    }  # fmt: skip


def test_labels_from_old_fall_back_to_the_new_dump(out: Path, old: Dump, new: Dump) -> None:
    """`labels_from=old`: an entity the old dump has shows its old texts, an E_new entity (absent
    from the old dump) its new ones; every KB entity has a row, once."""
    dirs = build_kb(out, params=["entity_diff.labels_from=old"])
    entities = rows(dirs["entity_diff"], "kb_entities")
    by_qid = {r["qid"]: r for r in entities}
    assert len(by_qid) == len(entities)
    assert by_qid["Q1"]["label_en"] == "universe"
    fresh = {q for q, r in by_qid.items() if r["in_new"]}
    assert fresh == {"Q8413", "Q3454165"} and not fresh & set(old.entities)
    for qid, row in by_qid.items():
        doc = old.entities[qid] if qid in old.entities else new.entities[qid]
        for kind, texts in (
            ("label", doc.get("labels") or {}),
            ("description", doc.get("descriptions") or {}),
        ):
            for lang in ("en", "zh"):
                assert row[f"{kind}_{lang}"] == (texts.get(lang) or {}).get("value"), (qid, kind, lang)
    default = rows(build_kb(out)["entity_diff"], "kb_entities")
    assert {r["qid"] for r in default} == set(by_qid)


def test_redirect_stubs_and_changes_are_reported(default: dict[str, Path], old: Dump, new: Dump) -> None:
    changes = rows(default["entity_diff"], "id_changes")
    # Both dumps carry the API's redirect Q32063953 -> Q1040 (Karlsruhe); no old entity vanished.
    assert new.redirects == {"Q32063953": "Q1040"}
    assert set(old.entities) <= set(new.entities)
    assert changes == [{"qid": "Q32063953", "change": "redirect_stub", "to_qid": "Q1040", "in_known": False}]
    assert stats(default["entity_diff"])["ids_redirect_stub"] == 1
    # The stub is no entity: never in E_known or E_new, while its target Karlsruhe is known.
    known, fresh = kb_sets(default["entity_diff"])
    assert "Q32063953" not in known | fresh and "Q1040" in known


def test_redirected_and_deleted_ids(out: Path, tmp_path: Path, old: Dump) -> None:
    # A new dump derived from the real one: Q44 (beer) merged into Q150 as a redirect stub in the
    # dump's own format, Q82 (printer) gone. No site constraint, so both were in E_known.
    lines = [
        line
        for line in dump_lines(NEW_DUMP)
        if not line.startswith(('{"type":"item","id":"Q44"', '{"type":"item","id":"Q82"'))
    ]
    assert len(lines) == len(dump_lines(NEW_DUMP)) - 2
    lines.append('{"redirects":{"from":"Q44","to":"Q150"}}')
    new = tmp_path / "new.json"
    new.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    dirs = build_kb(out, sources=[f"wikidata_new={new}"], params=["internal_filter.site="])
    changes = {r["qid"]: r for r in rows(dirs["entity_diff"], "id_changes")}
    assert changes["Q44"] == {"qid": "Q44", "change": "redirected", "to_qid": "Q150", "in_known": True}
    assert changes["Q82"] == {"qid": "Q82", "change": "deleted", "to_qid": None, "in_known": True}
    assert changes["Q32063953"]["change"] == "redirect_stub"
    s = stats(dirs["entity_diff"])
    assert (s["ids_redirected"], s["ids_deleted"], s["known_ids_redirected"], s["known_ids_deleted"]) == (
        1,
        1,
        1,
        1,
    )
    # Reported, never mixed in: the merged id is no new entity, and E_known is still the old items.
    known, fresh = kb_sets(dirs["entity_diff"])
    assert known == set(old.items()) and "Q44" not in fresh


def test_filter_stats_and_tables(default: dict[str, Path], old: Dump, new: Dump) -> None:
    s = stats(default["internal_filter"])
    for name, dump in (("old", old), ("new", new)):
        non_items = {q for q, d in dump.entities.items() if d.get("type") != "item"}
        assert s[f"{name}_dropped_not_item"] == len(non_items)  # properties P…
        assert s[f"{name}_entities"] == len(dump.entities)
        removed = {r["qid"] for r in rows(default["internal_filter"], "removed") if r["snapshot"] == name}
        assert removed == non_items
    # No Wikimedia-internal items in this pair (the hierarchy tests cover those).
    assert not [k for k in s if "internal" in k or "dropped_class_" in k]
    assert (s["old_dropped_no_site"], s["new_dropped_no_site"]) == (4, 6)
    assert (s["old_kept"], s["new_kept"]) == (34, 36)


def test_no_site_constraint(out: Path, old: Dump, new: Dump) -> None:
    dirs = build_kb(out, params=["internal_filter.site="])
    known, fresh = kb_sets(dirs["entity_diff"])
    assert known == set(old.items())
    assert fresh == {"Q8413", "Q3454165", "Q17948861", "Q51605722"}


def test_new_means_not_in_known(out: Path, old: Dump, new: Dump) -> None:
    # Filter on Q1's old P31 class (Q1454986): Q1 leaves E_known but passes in the new dump,
    # where its P31 is Q36906466. Only the paper's literal wording puts it into E_new.
    assert truthy_items(old.entities["Q1"], "P31") == {"Q1454986"}
    assert truthy_items(new.entities["Q1"], "P31") == {"Q36906466"}
    base = ["internal_filter.classes=Q1454986"]
    default_dirs = build_kb(out, params=base)
    literal_dirs = build_kb(out, params=[*base, "entity_diff.preset=literal"])
    known, fresh = kb_sets(default_dirs["entity_diff"])
    assert "Q1" not in known and "Q1" not in fresh
    known_lit, fresh_lit = kb_sets(literal_dirs["entity_diff"])
    assert known_lit == known and fresh_lit == fresh | {"Q1"}
    assert stats(default_dirs["internal_filter"])["old_dropped_class_Q1454986"] == 1


def test_class_stats_say_which_filter_classes_occur(out: Path, old: Dump, new: Dump) -> None:
    """Per filter class and dump: its item, the truthy P31/P279 statements naming it and the classes
    under it, against the tests' own reading of the dumps; Q1454986 is Q1's old P31 class."""
    classes = [*TABLE7_CLASSES, "Q1454986", "Q36906466"]
    dirs = build_kb(out, params=[f"internal_filter.classes={','.join(classes)}"])
    s = stats(dirs["internal_filter"])
    for name, dump in (("old", old), ("new", new)):
        values = [v for doc in dump.entities.values() for p in ("P31", "P279") for v in truthy_items(doc, p)]
        parents = {q: truthy_items(doc, "P279") for q, doc in dump.entities.items() if q.startswith("Q")}
        for qid in classes:
            under: set[str] = set()
            frontier = {qid}
            while frontier:
                frontier = {c for c, ps in parents.items() if ps & frontier} - under - {qid}
                under |= frontier
            assert s[f"{name}_class_{qid}_item"] == int(qid in dump.entities), (name, qid)
            assert s[f"{name}_class_{qid}_statements"] == values.count(qid), (name, qid)
            assert s[f"{name}_class_{qid}_subclasses"] == len(under), (name, qid)
    assert s["old_class_Q1454986_statements"] >= 1 and s["new_class_Q36906466_statements"] >= 1
    assert s["old_dropped_class_Q1454986"] == 1  # Q1, as in test_new_means_not_in_known


def test_table7_preset_builds_with_the_checked_classes(out: Path) -> None:
    dirs = build_kb(out, params=["internal_filter.preset=table7"])
    params = json.loads((dirs["internal_filter"] / "_MANIFEST.json").read_text())["params"]
    assert params["classes"] == list(TABLE7_CLASSES) and params["transitive"] is True
    assert params["site"] == "zhwiki" and params["preset"] == "table7"


def mgenre_kept(dump: Dump) -> set[str]:
    """mGENRE's `compress` step, literally: items; skip if any P31/P279 statement (any rank, with a
    datavalue) names a NOPAGE id; keep if some sitelink key ends with "wiki"."""
    kept = set()
    for qid, doc in dump.items().items():
        if any(any_rank_items(doc, p) & set(MGENRE_NOPAGE) for p in ("P31", "P279")):
            continue
        if any(k.endswith("wiki") for k in sitelink_keys(doc)):
            kept.add(qid)
    return kept


def test_mgenre_preset_is_mgenres_rule(out: Path, old: Dump, new: Dump) -> None:
    dirs = build_kb(
        out, params=["internal_filter.preset=mgenre", "wikidata_old.sites=*", "wikidata_new.sites=*"]
    )
    kept = defaultdict(set)
    for row in rows(dirs["internal_filter"], "kept"):
        kept[row["snapshot"]].add(row["qid"])
    assert kept["old"] == mgenre_kept(old)
    assert kept["new"] == mgenre_kept(new)
    # Items without any *wiki sitelink go: the Wikidata Sandbox in both, and two new-only items.
    assert set(old.items()) - kept["old"] == {"Q4115189"}
    assert set(new.items()) - kept["new"] == {"Q4115189", "Q17948861", "Q51605722"}
    # mGENRE reads every rank, entbench truthy statements (spec §1). In this pair the only
    # non-truthy P31/P279 values are Berlin's two deprecated P31 values, neither a NOPAGE class,
    # so the two agree here; test_mgenre_preset_sees_nopage_classes_in_every_rank derives a pair
    # where they do not.
    for dump in (old, new):
        differing = {
            q: any_rank_items(d, p) - truthy_items(d, p)
            for q, d in dump.items().items()
            for p in ("P31", "P279")
            if any_rank_items(d, p) != truthy_items(d, p)
        }
        assert differing == {"Q64": {"Q262166", "Q1307779"}}
        assert not differing["Q64"] & set(MGENRE_NOPAGE)


def with_hidden_nopage_statements(path: Path) -> Path:
    """The real new dump with two real items given a NOPAGE class in a *non-truthy* statement.

    Berlin (Q64): its deprecated P31 "Q262166" becomes Q4167836 (Wikimedia category). Scotland
    (Q22): a normal-rank P31 Q17362920 (Wikimedia duplicated page) next to its preferred P31, so
    the preferred one outranks it. mGENRE reads every statement, so it drops both items; a filter
    that reads truthy statements only sees neither.
    """
    lines = []
    for raw in dump_lines(NEW_DUMP):
        doc = json.loads(raw)
        if doc.get("id") == "Q64":
            for st in doc["claims"]["P31"]:
                value = st["mainsnak"]["datavalue"]["value"]
                if st["rank"] == "deprecated" and value["id"] == "Q262166":
                    value.update({"numeric-id": 4167836, "id": "Q4167836"})
        elif doc.get("id") == "Q22":
            extra = json.loads(json.dumps(doc["claims"]["P31"][0]))
            extra["rank"] = "normal"
            extra["id"] = "Q22$entbench-test-outranked-p31"
            extra["mainsnak"]["datavalue"]["value"].update({"numeric-id": 17362920, "id": "Q17362920"})
            doc["claims"]["P31"].append(extra)
        else:
            lines.append(raw)
            continue
        lines.append(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("[\n" + ",\n".join(lines) + "\n]\n")
    return path


def test_mgenre_preset_sees_nopage_classes_in_every_rank(out: Path, tmp_path: Path) -> None:
    new_path = with_hidden_nopage_statements(tmp_path / "new.json.gz")
    derived = read_dump(new_path)
    # The derivation did what it says: both items now name a NOPAGE class, never truthily.
    for qid, cls in (("Q64", "Q4167836"), ("Q22", "Q17362920")):
        assert cls in any_rank_items(derived.entities[qid], "P31")
        assert cls not in truthy_items(derived.entities[qid], "P31")
    assert {"Q64", "Q22"}.isdisjoint(mgenre_kept(derived))
    dirs = build_kb(
        out,
        sources=[f"wikidata_new={new_path}"],
        params=["internal_filter.preset=mgenre", "wikidata_old.sites=*", "wikidata_new.sites=*"],
    )
    kept = {r["qid"] for r in rows(dirs["internal_filter"], "kept") if r["snapshot"] == "new"}
    # With truthy statements only (ranks=truthy), Berlin and Scotland would be kept.
    assert kept == mgenre_kept(derived)


def reference_top_snaks(old: Dump, known: set[str]) -> list[tuple[str, str, int]]:
    """(property, value, distinct E_known entities), in spec §2.4's order, from the raw old dump."""
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for qid in known:
        doc = old.entities[qid]
        for prop in doc.get("claims") or {}:
            for value in truthy_items(doc, prop):
                holders[(prop, value)].add(qid)
    ordered = sorted(holders.items(), key=lambda kv: (-len(kv[1]), int(kv[0][0][1:]), int(kv[0][1][1:])))
    return [(p, v, len(h)) for (p, v), h in ordered]


def entity_snak_sets(dump: Dump, qids: set[str], rank: dict[tuple[str, str], int]) -> dict[str, list[int]]:
    out = {}
    for qid in qids:
        doc = dump.entities[qid]
        found = {
            rank[(p, v)] for p in (doc.get("claims") or {}) for v in truthy_items(doc, p) if (p, v) in rank
        }
        out[qid] = sorted(found)
    return out


def test_top_snaks_are_distinct_entity_counts(default: dict[str, Path], old: Dump, new: Dump) -> None:
    known, fresh = kb_sets(default["entity_diff"])
    expected = reference_top_snaks(old, known)
    top = sorted(rows(default["top_snaks"], "top_snaks"), key=lambda r: r["rank"])
    assert [(r["property"], r["value"], r["entity_count"]) for r in top] == expected
    assert [r["rank"] for r in top] == list(range(len(expected)))
    # Hand-checked head: 6 known entities are on the continent Europe (P30 Q46) and described by
    # Brockhaus and Efron (P1343 Q2041543); the tie goes to the smaller property number.
    assert expected[:2] == [("P30", "Q46", 6), ("P1343", "Q2041543", 6)]
    # The whole list sits in shard 0 (rank order); other shards are empty.
    s = stats(default["top_snaks"])
    assert s["top_snaks"] == s["distinct_snaks_known"] == len(expected)
    rank = {(p, v): i for i, (p, v, _) in enumerate(expected)}
    got = {r["qid"]: r["snaks"] for r in rows(default["top_snaks"], "entity_snaks")}
    assert got == {**entity_snak_sets(old, known, rank), **entity_snak_sets(new, fresh, rank)}


def test_top_snaks_k_and_coverage(out: Path, old: Dump, new: Dump) -> None:
    k = 4
    dirs = build_kb(out, params=[f"top_snaks.k={k}"])
    known, fresh = kb_sets(dirs["entity_diff"])
    expected = reference_top_snaks(old, known)[:k]
    top = sorted(rows(dirs["top_snaks"], "top_snaks"), key=lambda r: r["rank"])
    assert [(r["property"], r["value"], r["entity_count"]) for r in top] == expected
    # P31 Q5 (human, 4 known entities) is 4th: both new entities, humans, have it.
    assert expected[3] == ("P31", "Q5", 4)
    rank = {(p, v): i for i, (p, v, _) in enumerate(expected)}
    snaks_new = entity_snak_sets(new, fresh, rank)
    snaks_known = entity_snak_sets(old, known, rank)
    s = stats(dirs["top_snaks"])
    assert s["new_with_top_snak"] == sum(1 for v in snaks_new.values() if v) == 2
    assert s["known_with_top_snak"] == sum(1 for v in snaks_known.values() if v)
    assert s["coverage_new"] == 1.0
    assert s["coverage_known"] == round(s["known_with_top_snak"] / len(known), 6) < 1.0


def test_workers_give_identical_bytes(out: Path, default: dict[str, Path], tmp_path: Path) -> None:
    # The scans' own worker-independence is tested with the scan; reuse their shards here so the
    # two-worker build runs exactly the kb stages.
    for stage in ("wikidata_old", "wikidata_new"):
        shutil.copytree(default[stage], tmp_path / "w2" / default[stage].relative_to(out))
    two = build_kb(tmp_path / "w2", workers=2)
    for stage in ("wikidata_old", "wikidata_new", *KB_STAGES):
        assert shard_hashes(two[stage]) == shard_hashes(default[stage]), stage
        assert two[stage].name == default[stage].name  # same fingerprint


def test_a_small_duckdb_cap_gives_identical_bytes(
    out: Path, default: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every kb stage's queries under 16 MiB (about the least they run in: DuckDB's own floor) write
    # the bytes of the default cap; that rows spilled past a cap come back whole is
    # tests/engine/test_duck.py's (these fixtures are too small to spill).
    for stage in ("wikidata_old", "wikidata_new"):
        shutil.copytree(default[stage], tmp_path / "capped" / default[stage].relative_to(out))
    monkeypatch.setattr(duck, "MEMORY_PER_THREAD", 16 << 20)
    capped = build_kb(tmp_path / "capped")
    for stage in KB_STAGES:
        assert shard_hashes(capped[stage]) == shard_hashes(default[stage]), stage


@pytest.mark.parametrize("rows", [8, 64])
def test_ranges_of_ids_give_identical_bytes_and_stats(
    out: Path, default: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    # The fixtures fit in one range; ranges of a few dozen ids (and bounds on every sampled id)
    # split both stages' per-entity work into many, whose rows and counts must add up to the same.
    for stage in ("wikidata_old", "wikidata_new"):
        shutil.copytree(default[stage], tmp_path / "ranged" / default[stage].relative_to(out))
    monkeypatch.setattr(query, "PARTITION_ROWS", rows)
    # The fixtures' one row group a shard would allow only four ranges (`query.max_ranges`).
    monkeypatch.setattr(query, "MAX_READS_PER_ROW_GROUP", 1 << 20)
    ranged = build_kb(tmp_path / "ranged")
    for stage in KB_STAGES:
        assert shard_hashes(ranged[stage]) == shard_hashes(default[stage]), stage
        assert load_manifest(ranged[stage])["stats"] == load_manifest(default[stage])["stats"], stage


def test_ranges_are_bounded_by_the_reads_of_hash_sharded_files(tmp_path: Path) -> None:
    # Every range reads a row group of every shard (the scans shard ids by hash): P ranges over S
    # files of G row groups read G + P*S of them, so P stays within (MAX - 1) * G / S, however
    # many ids ask for more ranges, and never falls below one.
    def shard(name: str, groups: int) -> str:
        path = tmp_path / name
        table = pa.table({"id": [f"Q{i}" for i in range(groups * 10)]})
        pq.write_table(table, path, row_group_size=10)
        return str(path)

    one_group_each = [shard(f"a{i}.parquet", 1) for i in range(6)]
    assert query.max_ranges(one_group_each) == query.MAX_READS_PER_ROW_GROUP - 1
    three_groups = [shard("b.parquet", 3)]
    assert query.max_ranges(three_groups) == 3 * (query.MAX_READS_PER_ROW_GROUP - 1)
    assert query.max_ranges([]) == 1
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW ids AS SELECT * FROM read_parquet({one_group_each!r})")
        ranges = query.id_ranges(con, "SELECT id FROM ids", 10**9, one_group_each)
    finally:
        con.close()
    assert len(ranges) <= query.MAX_READS_PER_ROW_GROUP - 1
    assert ranges[0][0] is None and ranges[-1][1] is None
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


def test_stage_directories_hold_only_outputs(default: dict[str, Path]) -> None:
    # DuckDB spills under the stage's `_scratch`, which is removed when the stage completes.
    expected = {
        "internal_filter": {"kept", "removed"},
        "entity_diff": {"kb_entities", "id_changes"},
        "type_closure": {"part-00000-of-00001.parquet"},
        "coarse_types": {"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"},
        "top_snaks": {"top_snaks", "entity_snaks"},
    }
    for stage, names in expected.items():
        assert {p.name for p in default[stage].iterdir()} == names | {"_MANIFEST.json", "_RUN.json"}, stage


def test_target_file_and_inspect(default: dict[str, Path], out: Path, run_cli: Callable[..., Any]) -> None:
    target = json.loads((out / "targets" / "kb.json").read_text())
    assert target["target"] == "kb"
    assert set(target["stages"]) >= {"wikidata_old", "wikidata_new", *KB_STAGES}
    result = run_cli(["inspect", str(default["internal_filter"])])
    assert result.exit_code == 0
    for line in ("old_dropped_not_item", "new_dropped_no_site", "table kept", "table removed"):
        assert line in result.output
    result = run_cli(["inspect", str(default["top_snaks"]), "--json"])
    assert json.loads(result.output)["stats"]["coverage_new"] == 1.0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (["internal_filter.preset=mgenre"], "needs every sitelink"),
        (["internal_filter.site=frwiki"], "needs the frwiki sitelinks"),
        (["coarse_types.precedence=PER=Q5"], "did not close"),
        (["entity_diff.languages=en,de"], "languages ['de']"),
        (["internal_filter.classes=Q0"], "not item ids"),
        (["coarse_types.precedence=PER"], "PER=Q215627"),
        (["internal_filter.preset=wiki"], "unknown preset"),
    ],
)
def test_user_errors(out: Path, run_cli: Callable[..., Any], params: list[str], message: str) -> None:
    args = ["build", "kb", "--out", str(out), "--no-progress"]
    for p in params:
        args += ["--param", p]
    result = run_cli(args)
    assert result.exit_code == 2, result.output
    assert message in result.output
