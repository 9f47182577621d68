"""`entbench build hansel-kb` on the real zhwiki fixture pages (Hansel §3.3, §4.1): every entity of
E_known ∪ E_new with its zhwiki title and first paragraph in Simplified Chinese, and its URL.

Expectations come from the raw fixture files read here with the standard library (the XML dump's
wikitext is not re-rendered: the first paragraph is cut from the scan's text, which the Wikipedia
scan's own tests check against the pages), and from OpenCC itself, not entbench's wrapper.
"""

from __future__ import annotations

import shutil
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

import opencc
import pytest
from hanziconv import HanziConv

from entbench.engine.manifest import load_manifest
from entbench.schemas.hansel import KB_TEXT_STATUSES
from tests.builders.hansel.build_support import NEW, OLD, build, rows, zhwiki_sitelinks
from tests.builders.kb.support import read_dump

TO_SIMPLIFIED = opencc.OpenCC("t2s")


@pytest.fixture(scope="module")
def dirs() -> dict[str, Path]:
    return build()


@pytest.fixture(scope="module")
def kb(dirs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in rows(dirs["hansel_kb"], "kb")}


@pytest.fixture(scope="module")
def pages(dirs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """The scan's articles by title."""
    return {p["title"]: p for p in rows(dirs["wiki"], "pages") if p["ns"] == 0}


def test_one_row_per_kb_entity_with_its_set_type_and_labels(
    kb: dict[str, dict[str, Any]], dirs: dict[str, Path]
) -> None:
    entities = {r["qid"]: r for r in rows(dirs["entity_diff"], "kb_entities")}
    coarse = {r["qid"]: r["coarse"] for r in rows(dirs["coarse_types"], "coarse_types")}
    assert set(kb) == set(entities) and len(kb) > 1000
    for qid, row in kb.items():
        entity = entities[qid]
        assert row["split"] == ("known" if entity["in_known"] else "new")
        assert row["type"] == coarse[qid]
        assert (row["label"], row["description"]) == (entity["label_zh"], entity["description_zh"])
    assert Counter(r["split"] for r in kb.values()) == {
        "known": sum(e["in_known"] for e in entities.values()),
        "new": sum(e["in_new"] for e in entities.values()),
    }


def test_every_gold_entity_of_hansel_train_is_in_it(
    kb: dict[str, dict[str, Any]], dirs: dict[str, Path]
) -> None:
    golds = {r["gold_id"] for split in ("train", "validation") for r in rows(dirs["hansel"], split)}
    assert len(golds) > 300
    assert golds <= set(kb)
    assert all(kb[q]["split"] == "known" for q in golds)
    # The training set's most linked entities are among those whose page the dump holds.
    assert any(kb[q]["text"] for q in golds)


def test_titles_and_urls_are_the_sitelinks(kb: dict[str, dict[str, Any]]) -> None:
    sitelinks = {q: t for t, q in zhwiki_sitelinks(NEW).items()}
    old_sitelinks = {q: t for t, q in zhwiki_sitelinks(OLD).items()}
    changed = 0
    for qid, row in kb.items():
        title = sitelinks.get(qid, old_sitelinks.get(qid))
        assert title is not None, qid  # the filter keeps only entities with a zhwiki sitelink
        assert row["title"] == TO_SIMPLIFIED.convert(title)
        changed += row["title"] != title
        assert row["url"] == "https://zh.wikipedia.org/wiki/" + urllib.parse.quote(
            title.replace(" ", "_"), safe=";:@$!*(),/~"
        )
    assert changed > 50  # Traditional titles, e.g. 文學 -> 文学
    assert kb["Q64"]["url"] == "https://zh.wikipedia.org/wiki/%E6%9F%8F%E6%9E%97"  # 柏林


def test_texts_are_the_simplified_first_paragraphs_of_the_pages(
    kb: dict[str, dict[str, Any]], pages: dict[str, dict[str, Any]]
) -> None:
    with_text = {q: r for q, r in kb.items() if r["text"]}
    # Every article of the dump whose title is a KB entity's sitelink (the page 民族 is E_new's).
    sitelinks = {q: t for t, q in zhwiki_sitelinks(NEW).items()}
    expected = {q for q in kb if sitelinks.get(q) in pages}
    assert set(with_text) == expected and len(expected) == 7
    for qid, row in with_text.items():
        page = pages[sitelinks[qid]]
        first = page["text"].split("\n\n")[0].strip()
        assert first and row["text"] == TO_SIMPLIFIED.convert(first)
        assert TO_SIMPLIFIED.convert(row["text"]) == row["text"]  # Simplified: a fixed point
        assert row["page_id"] == page["page_id"] and row["text_status"] == "page"
        assert "\n\n" not in row["text"] and page["text"].startswith(first)
    # 聯邦共和國 in the page; {{lang-de|Berlin}} and its IPA shown as MediaWiki shows them (issue 32)
    assert kb["Q64"]["text"].startswith("柏林（德语：Berlin[bɛʁˈliːn]）是德意志联邦共和国首都")
    new_page = [r for r in with_text.values() if r["split"] == "new"]
    assert [r["title"] for r in new_page] == ["民族"]  # an E_new entity keeps its page's text


def test_entities_without_a_page_keep_label_and_description(
    kb: dict[str, dict[str, Any]], dirs: dict[str, Path]
) -> None:
    without = [r for r in kb.values() if not r["text"]]
    assert without and all(r["text_status"] == "page_not_in_dump" and r["page_id"] is None for r in without)
    described = [r for r in without if r["description"]]
    assert described  # the real items (e.g. Q145 英国) keep their Wikidata description
    stats = load_manifest(dirs["hansel_kb"])["stats"]
    counted = Counter(r["text_status"] for r in kb.values())
    assert {k.removeprefix("text_"): v for k, v in stats.items() if k.startswith("text_")} == counted
    assert set(counted) <= set(KB_TEXT_STATUSES)
    assert stats["texts_not_converged"] == stats["titles_not_converged"] == 0


def test_aliases_are_the_new_dumps(kb: dict[str, dict[str, Any]]) -> None:
    dump = read_dump(NEW).entities
    for qid, row in kb.items():
        aliases = [a["value"] for a in (dump.get(qid, {}).get("aliases") or {}).get("zh", [])]
        assert row["aliases"] == aliases, qid
    assert sum(bool(r["aliases"]) for r in kb.values()) > 100


def test_candidates_and_pool_show_the_kb_texts(kb: dict[str, dict[str, Any]], dirs: dict[str, Path]) -> None:
    shown = 0
    for record in rows(dirs["hansel_fewshot"], "fewshot_candidates"):
        for candidate in record["candidates"]:
            row = kb[candidate["qid"]]
            assert (candidate["title"], candidate["text"], candidate["url"]) == (
                row["title"],
                row["text"],
                row["url"],
            )
            shown += bool(candidate["text"])
    assert shown > 0
    for entity in rows(dirs["hansel_zeroshot"], "zeroshot_pool"):
        row = kb[entity["qid"]]
        assert (entity["text"], entity["url"]) == (row["text"], row["url"])
        assert entity["id"] == f"hansel-zeroshot-{entity['pool_index']}"


def test_hanziconv_converts_as_the_paper(dirs: dict[str, Path], tmp_path: Path) -> None:
    root = dirs["hansel_kb"].parents[2]
    out = tmp_path / "hanziconv"
    shutil.copytree(root, out)
    converted = build(("hansel-kb",), params=("hansel_kb.converter=hanziconv",), out=out)
    assert load_manifest(converted["hansel_kb"])["params"]["converter"] == "hanziconv"
    texts = {p["page_id"]: p["text"] for p in rows(dirs["wiki"], "pages")}
    with_text = [r for r in rows(converted["hansel_kb"], "kb") if r["text"]]
    assert len(with_text) == 7
    for row in with_text:
        assert row["text"] == HanziConv.toSimplified(texts[row["page_id"]].split("\n\n")[0].strip())


def test_a_site_the_scans_did_not_keep_is_a_user_error(tmp_path: Path, run_cli: Any) -> None:
    result = run_cli(["build", "hansel-kb", "--param", "hansel_kb.site=jawiki", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "needs the jawiki sitelinks" in result.output
    bad = run_cli(["build", "hansel-kb", "--param", "hansel_kb.site=wikidatawiki", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "Wikipedia's site id" in bad.output
