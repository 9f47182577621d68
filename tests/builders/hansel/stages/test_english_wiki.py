"""The Hansel targets with `--source wiki=…` on real English pages (issue 36: Hansel for any wiki).

The wiki is `fixtures/hansel-en/enwiki-fixture.xml.bz2`: real enwiki pages the other fixtures do
not use (Accessibility, Computer accessibility, Anarchism and Toronto), with the Wikidata pair
derived from their titles (`fixtures/hansel-en/PROVENANCE.md`). The build is the real use: only
`--source` and `--param`, no config, so every other parameter is its documented default; the kb's
site is the one parameter a non-Chinese wiki needs (`internal_filter.site=enwiki`).

Expectations come from the raw files (stdlib json and the wikitext), not from entbench's stages.
"""

from __future__ import annotations

import bz2
import json
import re
from pathlib import Path
from typing import Any

import pytest

from entbench import api
from entbench.engine.manifest import load_manifest
from entbench.errors import UserError
from tests.builders.hansel.build_support import rows
from tests.builders.kb.support import read_dump
from tests.conftest import FIXTURES

EN = FIXTURES / "hansel-en"
DUMP, OLD, NEW = EN / "enwiki-fixture.xml.bz2", EN / "wikidata-old.json.gz", EN / "wikidata-new.json.gz"
SOURCES = (f"wiki={DUMP}", f"wikidata_old={OLD}", f"wikidata_new={NEW}")
#: One validation document; seed 17 holds out the smallest (Accessibility), so train alone has
#: more than 1,000 records (the default seed 0 holds out Toronto: 651 train, 544 validation).
PARAMS = ("internal_filter.site=enwiki", "hansel.validation_docs=1", "hansel.seed=17")
E_NEW_PAGE = "Computer accessibility"  # its item is only in the new dump (PROVENANCE)


def quiet_build(out: Path, *params: str, target: str = "hansel-train", card: bool = False) -> dict[str, Path]:
    """`target` on the English fixtures; the card only when asked (one test reads the first build's)."""
    return api.build(
        target,
        sources=SOURCES,
        params=[*PARAMS, *params],
        out=out,
        progress=False,
        log=lambda _m: None,
        card=card,
    )


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hansel-en")


@pytest.fixture(scope="module")
def dirs(out: Path) -> dict[str, Path]:
    return quiet_build(out, card=True)  # read by test_the_card_says_which_wiki_built_it


@pytest.fixture(scope="module")
def records(dirs: dict[str, Path]) -> list[dict[str, Any]]:
    return rows(dirs["hansel"], "train") + rows(dirs["hansel"], "validation")


@pytest.fixture(scope="module")
def pages(dirs: dict[str, Path]) -> dict[int, dict[str, Any]]:
    return {p["page_id"]: p for p in rows(dirs["wiki"], "pages")}


def enwiki_qids(path: Path) -> dict[str, str]:
    """enwiki title -> QID of a raw dump (stdlib json)."""
    out = {}
    for qid, doc in read_dump(path).entities.items():
        link = (doc.get("sitelinks") or {}).get("enwiki")
        if link:
            out[link["title"]] = qid
    return out


def test_more_than_1000_english_records_spell_their_mentions_at_their_offsets(
    dirs: dict[str, Path], records: list[dict[str, Any]], pages: dict[int, dict[str, Any]]
) -> None:
    train = rows(dirs["hansel"], "train")
    assert len(train) >= 1000 and len(records) - len(train) >= 100
    links = {(link["page_id"], link["ordinal"]): link for link in rows(dirs["wiki"], "links")}
    for r in records:
        assert r["text"][r["start"] : r["end"]] == r["mention"] != ""
        # the offsets point into the page: the context is where the link is
        text = pages[r["page_id"]]["text"]
        lo = r["context_start"]
        anchor = links[(r["page_id"], r["ordinal"])]["anchor"]
        assert text[lo + r["start"] : lo + r["end"]] == r["mention"] == anchor
    assert {pages[r["page_id"]]["title"] for r in train} == {"Anarchism", "Toronto"}
    assert {pages[r["page_id"]]["title"] for r in records} - {"Anarchism", "Toronto"} == {"Accessibility"}
    assert "is the most populous city in Canada and the provincial capital of Ontario" in " ".join(
        r["text"] for r in train
    )


def test_no_gold_is_an_e_new_entity_and_the_e_new_page_is_held_out(
    dirs: dict[str, Path], records: list[dict[str, Any]], pages: dict[int, dict[str, Any]]
) -> None:
    old, new = enwiki_qids(OLD), enwiki_qids(NEW)
    e_new = set(new.values()) - set(old.values())
    assert len(e_new) > 100
    assert not {r["gold_id"] for r in records} & e_new
    assert {r["gold_id"] for r in records} <= set(old.values())
    # E_new is really linked to from the pages, and those links are not records
    scan_links = [link for link in rows(dirs["wiki"], "links") if new.get(link["target_normalized"]) in e_new]
    assert len(scan_links) > 100
    recorded = {(r["page_id"], r["ordinal"]) for r in records}
    assert not recorded & {(link["page_id"], link["ordinal"]) for link in scan_links}
    held_out = next(p for p in pages.values() if p["title"] == E_NEW_PAGE)
    assert held_out["page_id"] not in {r["page_id"] for r in records}
    documents = {d["page_id"]: d["status"] for d in rows(dirs["hansel_links"], "documents")}
    assert documents[held_out["page_id"]] == "e_new_page"


def test_no_conversion_touched_the_english_text(
    dirs: dict[str, Path], records: list[dict[str, Any]], pages: dict[int, dict[str, Any]]
) -> None:
    for r in records:
        lo = r["context_start"]
        assert r["text"] == pages[r["page_id"]]["text"][lo : lo + len(r["text"])]
    stats = load_manifest(dirs["hansel"])["stats"]
    assert stats["mentions_changed_by_t2s"] == 0 and stats["contexts_not_converged"] == 0
    assert load_manifest(dirs["hansel"])["params"]["converter"] == "opencc"  # the default, unused here
    siteinfo = json.loads((dirs["wiki"] / "_siteinfo.json").read_text(encoding="utf-8"))
    assert (siteinfo["dbname"], siteinfo["language"]) == ("enwiki", "en")


def test_english_link_trails_join_the_mention(records: list[dict[str, Any]]) -> None:
    """enwiki's link trail is `[a-z]+`: `[[bus]]es` is the mention "buses" (Accessibility)."""
    wikitext = bz2.decompress(DUMP.read_bytes()).decode("utf-8")
    assert "[[bus]]es" in wikitext and "[[screen reader]]s" in wikitext
    mentions = {r["mention"] for r in records}
    assert {"buses", "screen readers"} <= mentions


def test_sentence_contexts_follow_english_sentences(out: Path, records: list[dict[str, Any]]) -> None:
    """`hansel.context=sentence` on an English wiki: spaCy's English sentences, whose abbreviations
    ("U.S.", "St.") end none; the paragraph context of the same mention is longer."""
    sentence = {r["id"]: r for r in rows(quiet_build(out, "hansel.context=sentence")["hansel"], "train")}
    paragraph = {r["id"]: r for r in records}
    czolgosz = next(r for r in sentence.values() if r["mention"] == "Leon Czolgosz")
    assert czolgosz["text"] == (
        "For example, U.S. President McKinley's assassin Leon Czolgosz claimed to have been influenced "
        "by anarchist and feminist Emma Goldman."
    )
    imier = next(r for r in sentence.values() if r["mention"] == "St. Imier Congress")
    assert imier["text"].startswith("In response, the federalist sections formed their own International at")
    assert imier["text"].endswith("adopting a revolutionary anarchist program.")
    for key, r in sentence.items():
        assert r["text"] in paragraph[key]["text"] and r["mention"] == paragraph[key]["mention"]
    assert sum(len(r["text"]) < len(paragraph[k]["text"]) for k, r in sentence.items()) > len(sentence) / 2


def test_a_kb_of_another_wiki_is_a_user_error(tmp_path: Path) -> None:
    """Left at its default, the kb keeps the items with a zhwiki sitelink: an English build says
    which parameter to pass instead of linking to another wiki's items."""
    with pytest.raises(UserError, match=r"the wiki is enwiki, but the kb keeps the items with a zhwiki"):
        api.build("hansel-train", sources=SOURCES, out=tmp_path, progress=False, log=lambda _m: None)


def test_the_card_says_which_wiki_built_it(out: Path, dirs: dict[str, Path]) -> None:
    readme = (out / "cards" / "hansel-train" / "README.md").read_text(encoding="utf-8")
    wiki = readme[readme.index("## Wiki") :]
    assert re.search(r"\| `wiki` \| `enwiki` \| `en` \| en\.wikipedia\.org \| none \|", wiki), wiki[:800]
    assert "Not applied: the wiki's language is `en`" in readme


def test_the_kb_and_the_zero_shot_pool_of_an_english_wiki(out: Path, dirs: dict[str, Path]) -> None:
    """`hansel-kb` and `hansel-zeroshot` take the site and language from the dump: enwiki titles
    and URLs, English labels, the pages' first paragraphs as they are."""
    built = quiet_build(out, "hansel_zeroshot.size=20", target="hansel-kb")
    built.update(quiet_build(out, "hansel_zeroshot.size=20", target="hansel-zeroshot"))
    kb = {r["id"]: r for r in rows(built["hansel_kb"], "kb")}
    new = enwiki_qids(NEW)
    pages = {p["title"]: p for p in rows(dirs["wiki"], "pages") if not p["is_redirect"]}
    for title in ("Accessibility", "Anarchism", "Computer accessibility", "Toronto"):
        entity = kb[new[title]]
        assert (entity["title"], entity["label"], entity["text_status"]) == (title, title, "page")
        assert entity["url"] == "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")
        assert entity["text"] == pages[title]["text"].partition("\n\n")[0].strip()
    assert kb[new["Computer accessibility"]]["split"] == "new"
    params = load_manifest(built["hansel_kb"])["params"]
    assert (params["site"], params["language"]) == ("", "")  # the defaults: the wiki's own
    pool = rows(built["hansel_zeroshot"], "zeroshot_pool")
    assert len(pool) == 20
    for r in pool:
        assert kb[r["qid"]]["split"] == "new" and r["title"] == r["label"] == kb[r["qid"]]["title"]
        assert r["url"] is None or r["url"].startswith("https://en.wikipedia.org/wiki/")
