"""P(unlinked|m) equals a brute-force count over the real fixture pages (Hansel appendix A, spec §4)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.alias.matching import segments
from entbench.builders.alias.stages import mention_stats
from entbench.engine import external_sort
from entbench.filters.mentions import MentionNormalizer
from tests.builds import build
from tests.world_support import SamplesBuilds

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "wikipedia"
EN_DBPEDIA = FIXTURES / "enwiki.dbpedia-minidump.part.xml.bz2"
ZH_DBPEDIA = FIXTURES / "zhwiki.dbpedia-minidump.xml.bz2"
ZH_2018 = FIXTURES / "zhwiki-201807.wiki-dump-reader.part1.xml.bz2"


def rows(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    files = sorted(stage_dir.glob("*.parquet")) or sorted((stage_dir / table).glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def leftmost_longest(text: str, keys: set[str]) -> list[str]:
    """Brute force: at each position the longest key starting there; skip past it; else move on."""
    lengths = sorted({len(k) for k in keys}, reverse=True)
    found = []
    i = 0
    while i < len(text):
        for n in lengths:
            if text[i : i + n] in keys:
                found.append(text[i : i + n])
                i += n
                break
        else:
            i += 1
    return found


def brute_force(dirs: dict[str, Path], normalizer: MentionNormalizer) -> dict[str, dict[str, int]]:
    keys = {r["mention"] for r in rows(dirs["alias_table"], "alias_table")}
    links: dict[int, list[tuple[int, int]]] = {}
    for link in rows(dirs["wikipedia"], "links"):
        links.setdefault(link["page_id"], []).append((link["start"], link["end"]))
    counts = {k: Counter[str]() for k in keys}
    for page in rows(dirs["wikipedia"], "pages"):
        if page["ns"] != 0 or page["is_redirect"]:
            continue
        spans = sorted(links.get(page["page_id"], []))
        seen: dict[bool, set[str]] = {True: set(), False: set()}
        for start, end, linked in segments(len(page["text"]), spans):
            # each segment normalised on its own: an independent path from the stage's whole-page one
            piece = normalizer.segment_for_matching(page["text"][start:end])
            for key in leftmost_longest(piece, keys):
                counts[key]["linked" if linked else "unlinked"] += 1
                seen[linked].add(key)
        for linked, found in seen.items():
            for key in found:
                counts[key]["docs_linked" if linked else "docs_unlinked"] += 1
    return {k: dict(c) for k, c in counts.items()}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    out = tmp_path_factory.mktemp("stats")
    # The run's shared alias table on the English minidump: its scans and the English table are
    # found done here; builds on other dumps or parameters build what those change.
    samples_builds.seed(out, "alias-table", sources=[f"wikipedia={EN_DBPEDIA}"])
    return out


@pytest.mark.parametrize(
    ("source", "params", "chinese"),
    [
        (EN_DBPEDIA, (), False),
        (ZH_DBPEDIA, ("wikipedia.language=zh", "title_qid.site=zhwiki"), True),
        (ZH_2018, (), True),
        # the vocabulary matched in parts of 2 mentions (`mention_partitions`): the same counts
        (EN_DBPEDIA, ("mention_stats.partition_mentions=2",), False),
        (
            ZH_DBPEDIA,
            ("wikipedia.language=zh", "title_qid.site=zhwiki", "mention_stats.partition_mentions=2"),
            True,
        ),
        # more shards than the alias table has: each reducer picks its keys from the listed mentions,
        # listed here one sorted run per alias-table shard (`MENTION_RUN_BYTES`), and read in parts
        (EN_DBPEDIA, ("mention_stats.num_shards=3", "mention_stats.partition_mentions=2"), False),
    ],
    ids=[
        "enwiki-dbpedia",
        "zhwiki-berlin",
        "zhwiki-2018",
        "enwiki-dbpedia-parts",
        "zhwiki-berlin-parts",
        "enwiki-dbpedia-3-shards-runs",
    ],
)
def test_p_unlinked_equals_brute_force(
    out: Path, source: Path, params: tuple[str, ...], chinese: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[int] = []
    if "mention_stats.num_shards=3" in params:
        monkeypatch.setattr(mention_stats, "MENTION_RUN_BYTES", 1)
        flush = external_sort._RunWriter.flush

        def counting(writer: Any) -> None:
            runs.append(len(writer.paths))
            flush(writer)

        monkeypatch.setattr(external_sort._RunWriter, "flush", counting)
    dirs = build(
        "alias-table",
        out=out,
        sources=(f"wikipedia={source}",),
        params=params,
        progress=False,
        log=lambda m: None,
        card=False,
    )
    in_parts = any("partition_mentions" in p for p in params)
    assert ("phases_seconds" in json.loads((dirs["mention_stats"] / "_RUN.json").read_text())) == in_parts
    normalizer = MentionNormalizer("hansel", chinese=chinese)
    expected = brute_force(dirs, normalizer)
    stats = {r["mention"]: r for r in rows(dirs["mention_stats"], "mention_stats")}
    assert set(stats) == set(expected)  # one row per alias-table mention
    for mention, row in stats.items():
        want = expected[mention]
        linked, unlinked = want.get("linked", 0), want.get("unlinked", 0)
        assert (row["linked_occurrences"], row["unlinked_occurrences"]) == (linked, unlinked), mention
        assert (row["docs_linked"], row["docs_unlinked"]) == (
            want.get("docs_linked", 0),
            want.get("docs_unlinked", 0),
        )
        if linked + unlinked:
            assert row["p_unlinked"] == unlinked / (linked + unlinked)
            assert 0.0 <= row["p_unlinked"] <= 1.0
        else:
            assert row["p_unlinked"] is None
    assert any(r["linked_occurrences"] and r["unlinked_occurrences"] for r in stats.values())
    if "mention_stats.num_shards=3" in params:
        assert len(runs) > 1  # the mentions were merged from several sorted runs
        assert len(list(dirs["mention_stats"].glob("*.parquet"))) == 3


def test_longest_match_wins_on_real_text(out: Path) -> None:
    # In the zh 柏林 page "柏林" is an alias (the page title); a linked "[[柏林墙]]" anchor is not an
    # alias here, so "柏林" inside it counts as a linked occurrence, and the stage agrees with the
    # brute force above; with 纽约 and 英国 as keys nothing overlaps differently.
    dirs = build(
        "alias-table",
        out=out,
        sources=(f"wikipedia={ZH_DBPEDIA}",),
        params=("wikipedia.language=zh", "title_qid.site=zhwiki"),
        progress=False,
        log=lambda m: None,
        card=False,
    )
    stats = {r["mention"]: r for r in rows(dirs["mention_stats"], "mention_stats")}
    text = next(p["text"] for p in rows(dirs["wikipedia"], "pages") if p["title"] == "柏林")
    assert stats["柏林"]["linked_occurrences"] + stats["柏林"]["unlinked_occurrences"] == text.count("柏林")


@pytest.mark.parametrize("flush_ids", [1, 7, 4_000_000])
def test_counts_fold_the_same_whenever_they_flush(monkeypatch: pytest.MonkeyPatch, flush_ids: int) -> None:
    """Occurrences and documents per mention id, folded in one go or after every few matches."""
    monkeypatch.setattr(mention_stats, "FLUSH_IDS", flush_ids)
    rng = random.Random(flush_ids)
    counter = mention_stats._Counter()
    expected: dict[str, Counter[int]] = {k: Counter() for k in ("linked", "unlinked", "dl", "du")}
    for _ in range(60):
        page = [[rng.randrange(12) for _ in range(rng.randrange(6))] for _ in range(2)]
        linked, unlinked = counter.ids
        before = len(linked), len(unlinked)
        linked.extend(page[0])
        unlinked.extend(page[1])
        counter.page_done(*before)
        expected["linked"].update(page[0])
        expected["unlinked"].update(page[1])
        expected["dl"].update(set(page[0]))
        expected["du"].update(set(page[1]))
    rows, ids = counter.table(pa.array([f"m{i}" for i in range(12)]))
    table = rows.to_pylist()
    seen = sorted(set(expected["linked"]) | set(expected["unlinked"]))
    assert ids.tolist() == seen
    assert [r["mention"] for r in table] == [f"m{i}" for i in seen]
    for row, i in zip(table, seen, strict=True):
        assert (row["linked_occurrences"], row["unlinked_occurrences"]) == (
            expected["linked"][i],
            expected["unlinked"][i],
        )
        assert (row["docs_linked"], row["docs_unlinked"]) == (expected["dl"][i], expected["du"][i])
