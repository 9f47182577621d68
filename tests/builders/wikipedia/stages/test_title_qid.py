"""`title_qid` on the real fixture dumps, plus redirect edge cases the real sample does not contain."""

from __future__ import annotations

import bz2
import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pyarrow.parquet as pq
import pytest

from entbench.readers.mediawiki.xml_dump import read_header, split_header, trim_to_pages
from tests.builds import build

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "wikipedia"
EN_2016 = FIXTURES / "enwiki-201605.pages-articles1.head-part.xml.bz2"
EN_DBPEDIA = FIXTURES / "enwiki.dbpedia-minidump.part.xml.bz2"
ZH_DBPEDIA = FIXTURES / "zhwiki.dbpedia-minidump.xml.bz2"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build directory for the module: the Wikidata scan is built once and reused."""
    return tmp_path_factory.mktemp("build")


def build_titles(
    out: Path, *sources: str, params: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    dirs = build(
        "title-qid", out=out, sources=sources, params=params, progress=False, log=lambda m: None, card=False
    )
    stage = dirs["title_qid"]
    rows = {}
    for f in sorted(stage.glob("*.parquet")):
        for row in pq.read_table(f).to_pylist():
            rows[row["title"]] = row
    return rows, json.loads((stage / "_MANIFEST.json").read_text())


def test_sitelinks_resolve_real_link_targets(out: Path) -> None:
    rows, manifest = build_titles(out, f"wikipedia={EN_DBPEDIA}")
    # Wikidata fixture: Q84 London, Q64 Berlin, Q142 France (enwiki sitelinks)
    assert rows["London"]["qid"] == "Q84" and rows["London"]["status"] == "sitelink"
    assert rows["London"]["link_count"] == 2
    assert rows["Berlin"]["qid"] == "Q64" and rows["Berlin"]["page_id"] is not None
    assert rows["France"]["qid"] == "Q142"
    assert rows["Food (disambiguation)"]["is_disambiguation"]  # flagged by the scan
    assert rows["Angela Merkel"]["status"] == "no_sitelink"  # a page in the dump, no item in the fixture
    stats = manifest["stats"]
    links = manifest["inputs"]["wikipedia"]
    assert links  # fingerprinted input
    total_links = sum(r["link_count"] for r in rows.values())
    counted = stats["links_resolved"] + sum(
        v
        for k, v in stats.items()
        if k.startswith("links_unresolved_") and k != "links_unresolved_special_namespace"
    )
    assert counted == total_links
    assert stats["links_unresolved_red_link"] > 0
    assert stats["links_unresolved_special_namespace"] >= 1  # "[[:Category:Video games set in Berlin]]"


def test_real_redirects_are_followed(out: Path) -> None:
    rows, _ = build_titles(out, f"wikipedia={EN_2016}")
    academy = rows["AcademyAwards"]  # "#REDIRECT [[Academy Awards]]"
    assert (academy["final_title"], academy["hops"], academy["status"]) == (
        "Academy Awards",
        1,
        "no_sitelink",
    )
    assert academy["page_id"] == rows["Academy Awards"]["page_id"] == 324
    assert rows["History of Afghanistan"]["status"] == "red_link"  # target of AfghanistanHistory
    no_hops, _ = build_titles(out, f"wikipedia={EN_2016}", params=("title_qid.max_hops=0",))
    assert no_hops["AcademyAwards"]["status"] == "redirect_too_deep"


def test_chinese_titles_resolve_with_the_site_parameter(out: Path) -> None:
    rows, manifest = build_titles(
        out,
        f"wikipedia={ZH_DBPEDIA}",
        params=("wikipedia.language=zh", "title_qid.site=zhwiki"),
    )
    assert rows["柏林"]["qid"] == "Q64"
    assert rows["伦敦"]["qid"] == "Q84"  # "[[伦敦]]" in the page
    assert "site_zhwiki" in manifest["stats"]


def _redirect(title: str, target: str, page_id: int) -> str:
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <redirect title={quoteattr(target)} />\n    <revision>\n      <id>{page_id}</id>\n"
        f'      <text xml:space="preserve">#REDIRECT [[{escape(target)}]]</text>\n'
        "    </revision>\n  </page>\n"
    )


@pytest.fixture(scope="module")
def edge_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real dbpedia minidump plus made-up redirects: a loop, a long chain, a namespace target.

    Derived test data: the real sample has no such chains, so these few redirect pages are
    written here (the header and every other page are the real dump's).
    """
    data = bz2.decompress(EN_DBPEDIA.read_bytes())
    header, start = split_header(data, "x")
    assert header == read_header(str(EN_DBPEDIA))
    extra = [_redirect("Berlin, Germany", "Berlin", 990001)]
    extra += [_redirect("Loop A", "Loop B", 990002), _redirect("Loop B", "Loop A", 990003)]
    extra += [_redirect(f"Chain {i}", f"Chain {i + 1}", 990010 + i) for i in range(11)]
    extra.append(_redirect("Chain 11", "Berlin", 990021))
    extra.append(_redirect("About this wiki", "Wikipedia:About", 990030))
    body = trim_to_pages(data[start:]) + "\n".join(extra).encode("utf-8")
    path = tmp_path_factory.mktemp("edge") / "enwiki-edge.xml"
    path.write_bytes(header + body + b"\n</mediawiki>\n")
    return path


def test_redirect_edge_cases(out: Path, edge_dump: Path) -> None:
    rows, manifest = build_titles(out, f"wikipedia={edge_dump}")
    berlin = rows["Berlin, Germany"]
    assert (berlin["qid"], berlin["status"], berlin["hops"], berlin["final_title"]) == (
        "Q64",
        "redirect",
        1,
        "Berlin",
    )
    assert rows["Loop A"]["status"] == rows["Loop B"]["status"] == "redirect_loop"
    assert rows["Loop A"]["qid"] is None
    assert rows["Chain 0"]["status"] == "redirect_too_deep"  # 12 hops to Berlin
    assert (rows["Chain 5"]["status"], rows["Chain 5"]["hops"], rows["Chain 5"]["qid"]) == (
        "redirect",
        7,
        "Q64",
    )
    assert rows["About this wiki"]["status"] == "special_namespace"
    assert rows["About this wiki"]["final_title"] == "Wikipedia:About"
    # Chain k needs 12 - k hops: Chain 2..11 arrive within 10, Chain 0 and 1 do not.
    chains = {f"Chain {i}": rows[f"Chain {i}"]["status"] for i in range(12)}
    assert chains == {f"Chain {i}": "redirect_too_deep" if i < 2 else "redirect" for i in range(12)}
    stats = manifest["stats"]
    assert stats["titles_redirect_loop"] == 2
    assert stats["titles_redirect_too_deep"] == 2
    assert stats["titles_special_namespace"] == 2  # the redirect and its target title itself
    assert rows["Wikipedia:About"]["status"] == "special_namespace"
