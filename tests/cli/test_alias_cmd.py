"""`entbench alias lookup` and `entbench eval alias-table` on an alias table built from real dumps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from entbench.filters.mentions import MentionNormalizer
from tests.builds import build
from tests.world_support import SamplesBuilds

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EN_DBPEDIA = FIXTURES / "wikipedia" / "enwiki.dbpedia-minidump.part.xml.bz2"
HANSEL_EXAMPLE = FIXTURES / "zh-text" / "hansel.readme-example.jsonl"

Run = Callable[[list[str]], Any]


def rows(stage_dir: Path) -> list[dict[str, Any]]:
    files = sorted(stage_dir.glob("*.parquet")) or sorted(stage_dir.glob("*/*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds
) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("cli")
    samples_builds.seed(out, "alias-table", sources=[f"wikipedia={EN_DBPEDIA}"])  # the build lists it
    dirs = build(
        "alias-table",
        out=out,
        sources=(f"wikipedia={EN_DBPEDIA}",),
        progress=False,
        log=lambda m: None,
        card=False,
    )
    return out, dirs


def test_lookup(built: tuple[Path, dict[str, Path]], run_cli: Run) -> None:
    out, _ = built
    result = run_cli(["alias", "lookup", "New  York", "--from", str(out)])
    assert result.exit_code == 0, result.output
    assert "normalised 'New York'" in result.output
    assert "Q60" in result.output and "P(unlinked|m)" in result.output
    (row,) = [line for line in result.output.splitlines() if " Q60 " in line]
    assert row.endswith("  New York City")  # its label beside the QID, from the build's Wikidata dump
    result = run_cli(["alias", "lookup", "London", "--from", str(out), "--json", "--top", "1"])
    payload = json.loads(result.output)
    assert [c["qid"] for c in payload["candidates"]] == ["Q84"]
    assert payload["candidates"][0]["label"] == "London" and payload["candidates"][0]["synthetic"] is False
    assert payload["candidates"][0]["link_count"] == 2
    assert 0 <= payload["mention_stats"]["p_unlinked"] <= 1
    result = run_cli(["alias", "lookup", "Atlantis", "--from", str(out)])
    assert result.exit_code == 0 and "0 candidate(s)" in result.output


def test_lookup_without_a_build_is_a_user_error(tmp_path: Path, run_cli: Run) -> None:
    result = run_cli(["alias", "lookup", "Berlin", "--from", str(tmp_path)])
    assert result.exit_code == 2
    assert "no alias-table build" in result.output


def _dataset(dirs: dict[str, Path], path: Path) -> list[dict[str, Any]]:
    """Hansel-format records from real links (paragraph text, code-point offsets), plus NIL ones."""
    titles = {r["title"]: r["qid"] for r in rows(dirs["title_qid"])}
    pages = {p["page_id"]: p for p in rows(dirs["wikipedia"] / "pages")}
    records = []
    for link in rows(dirs["wikipedia"] / "links"):
        qid = titles.get(link["target_normalized"])
        if not qid:
            continue
        page = pages[link["page_id"]]
        starts = [*page["paragraph_starts"], len(page["text"]) + 2]
        begin, end = starts[link["paragraph"]], starts[link["paragraph"] + 1] - 2
        text = page["text"][begin:end]
        start = link["start"] - begin
        records.append(
            {
                "id": f"test-{len(records)}",
                "text": text,
                "start": start,
                "end": start + len(link["anchor"]),
                "mention": link["anchor"],
                "gold_id": qid,
            }
        )
    assert records and all(r["text"][r["start"] : r["end"]] == r["mention"] for r in records)
    records.append(
        {"id": "nil-1", "text": "Atlantis", "start": 0, "end": 8, "mention": "Atlantis", "gold_id": "NIL_LOC"}
    )
    records.append(
        {"id": "nil-2", "text": "London", "start": 0, "end": 6, "mention": "London", "gold_id": "NIL_PER"}
    )
    records.append(json.loads(HANSEL_EXAMPLE.read_text(encoding="utf-8")))  # real record, gold Q60874
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return records


def test_eval_alias_table(built: tuple[Path, dict[str, Path]], tmp_path: Path, run_cli: Run) -> None:
    out, dirs = built
    dataset = tmp_path / "dev.jsonl"
    records = _dataset(dirs, dataset)
    # expected, from the alias table shards directly
    table: dict[str, list[dict[str, Any]]] = {}
    for row in rows(dirs["alias_table"]):
        table.setdefault(row["mention"], []).append(row)
    norm = MentionNormalizer("hansel")
    hits = {1: 0, 10: 0, 100: 0}
    with_nil = 0
    in_kb = [r for r in records if not r["gold_id"].startswith("NIL")]
    for r in records:
        ranked = [c["qid"] for c in sorted(table.get(norm(r["mention"]), []), key=lambda c: c["rank"])]
        if r["gold_id"].startswith("NIL"):
            with_nil += not ranked
            continue
        with_nil += bool(ranked) and ranked[0] == r["gold_id"]
        for k in hits:
            hits[k] += r["gold_id"] in ranked[:k]
    result = run_cli(["eval", "alias-table", "--dataset", str(dataset), "--from", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["records"], report["in_kb"], report["nil"]) == (len(records), len(in_kb), 2)
    assert report["in_kb_recall"] == {f"R@{k}": hits[k] / len(in_kb) for k in hits}
    assert report["with_nil_recall"]["R@1"] == with_nil / len(records)
    assert 0 < report["in_kb_recall"]["R@1"] < 1  # the Hansel record's gold is not in this table
    # the misses at R@1, with the labels of their QIDs (from the build's Wikidata dump)
    misses = report["misses_at_1"]
    expected = [
        r
        for r in in_kb
        if not table.get(norm(r["mention"]))
        or min(table[norm(r["mention"])], key=lambda c: c["rank"])["qid"] != r["gold_id"]
    ]
    assert [m["gold_id"] for m in misses] == [r["gold_id"] for r in expected][:10]
    entities = {e["id"]: e["label_en"] for e in rows(dirs["wikidata"] / "entities")}
    for miss in misses:
        assert miss["gold_label"] == entities.get(miss["gold_id"])
        assert miss["predicted_label"] == (entities.get(miss["predicted"]) if miss["predicted"] else None)


def test_eval_rejects_bad_input(built: tuple[Path, dict[str, Path]], tmp_path: Path, run_cli: Run) -> None:
    out, _ = built
    missing = run_cli(["eval", "alias-table", "--dataset", str(tmp_path / "none.jsonl"), "--from", str(out)])
    assert missing.exit_code == 2 and "dataset not found" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HANSEL_EXAMPLE.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    result = run_cli(["eval", "alias-table", "--dataset", str(bad), "--from", str(out)])
    assert result.exit_code == 1
    assert f"at byte offset {len(HANSEL_EXAMPLE.read_bytes())}" in result.output
    assert "Traceback" not in result.output
