"""AT-base on the real fixture dumps, checked against an independent recomputation (spec §4)."""

from __future__ import annotations

import bz2
import json
import math
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pyarrow.parquet as pq
import pytest

from entbench.filters.mentions import MentionNormalizer
from entbench.readers.mediawiki.xml_dump import split_header, trim_to_pages
from tests.builds import build
from tests.world_support import SamplesBuilds

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "wikipedia"
EN_DBPEDIA = FIXTURES / "enwiki.dbpedia-minidump.part.xml.bz2"
ZH_DBPEDIA = FIXTURES / "zhwiki.dbpedia-minidump.xml.bz2"
ZH_PARAMS = ("wikipedia.language=zh", "title_qid.site=zhwiki")


def rows(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    files = sorted(stage_dir.glob("*.parquet")) or sorted((stage_dir / table).glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    out = tmp_path_factory.mktemp("alias")
    # The run's shared alias table on the English minidump: its scans and the English table are
    # found done here; builds on other dumps or parameters build what those change.
    samples_builds.seed(out, "alias-table", sources=[f"wikipedia={EN_DBPEDIA}"])
    return out


def build_alias(out: Path, source: Path, params: tuple[str, ...] = (), **kw: Any) -> dict[str, Path]:
    return build(
        "alias-table",
        out=out,
        sources=(f"wikipedia={source}",),
        params=params,
        progress=False,
        log=lambda m: None,
        card=False,
        **kw,
    )


def expected_table(
    dirs: dict[str, Path], normalizer: MentionNormalizer, tw: int = 1, rw: int = 1
) -> dict[tuple[str, str], dict[str, Any]]:
    """AT-base recomputed from the scan and title_qid shards with plain Python."""
    titles = {r["title"]: r for r in rows(dirs["title_qid"], "title_qid")}
    resolved = {t: r["qid"] for t, r in titles.items() if r["qid"] and not r["is_disambiguation"]}
    links: Counter[tuple[str, str]] = Counter()
    for link in rows(dirs["wikipedia"], "links"):
        qid = resolved.get(link["target_normalized"])
        if qid and normalizer(link["anchor"]):
            links[(normalizer(link["anchor"]), qid)] += 1
    flags: dict[tuple[str, str], list[bool]] = defaultdict(lambda: [False, False])
    for page in rows(dirs["wikipedia"], "pages"):
        qid = resolved.get(page["title"])
        if qid and page["ns"] == 0 and normalizer(page["title"]):
            flags[(normalizer(page["title"]), qid)][1 if page["is_redirect"] else 0] = True
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for key in set(links) | set(flags):
        title, redirect = flags.get(key, [False, False])
        count = links[key] + tw * title + rw * redirect
        if count:
            table[key] = {
                "link_count": links[key],
                "title_flag": title,
                "redirect_flag": redirect,
                "count": count,
            }
    totals: Counter[str] = Counter()
    for (mention, _), row in table.items():
        totals[mention] += row["count"]
    by_mention: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key in table:
        by_mention[key[0]].append(key)
    for mention, keys in by_mention.items():
        keys.sort(key=lambda k: (-table[k]["count"], int(k[1][1:])))
        for rank, key in enumerate(keys, 1):
            table[key]["rank"] = rank
            table[key]["p_e_given_m"] = table[key]["count"] / totals[mention]
    return table


def check(
    dirs: dict[str, Path], normalizer: MentionNormalizer, tw: int = 1, rw: int = 1
) -> list[dict[str, Any]]:
    built = rows(dirs["alias_table"], "alias_table")
    expected = expected_table(dirs, normalizer, tw, rw)
    assert {(r["mention"], r["qid"]) for r in built} == set(expected)
    for row in built:
        want = expected[(row["mention"], row["qid"])]
        for column in ("link_count", "title_flag", "redirect_flag", "count", "rank"):
            assert row[column] == want[column], (row, column)
        assert math.isclose(row["p_e_given_m"], want["p_e_given_m"], rel_tol=0, abs_tol=1e-15)
        # components add up to count
        assert row["count"] == row["link_count"] + tw * row["title_flag"] + rw * row["redirect_flag"]
    sums: defaultdict[str, float] = defaultdict(float)
    for row in built:
        sums[row["mention"]] += row["p_e_given_m"]
    assert all(math.isclose(s, 1.0, abs_tol=1e-12) for s in sums.values())
    return built


def test_english_alias_table(out: Path) -> None:
    dirs = build_alias(out, EN_DBPEDIA)
    built = check(dirs, MentionNormalizer("hansel"))
    by_key = {(r["mention"], r["qid"]): r for r in built}
    # "[[London]]" twice; "[[New York City|New York]]"; the Berlin page's own title
    assert by_key[("London", "Q84")]["link_count"] == 2
    assert by_key[("New York", "Q60")]["link_count"] == 1
    assert by_key[("Berlin", "Q64")]["title_flag"]
    # every page title is an alias of its own entity
    titles = {r["title"]: r for r in rows(dirs["title_qid"], "title_qid")}
    for page in rows(dirs["wikipedia"], "pages"):
        entity = titles[page["title"]]
        if not page["is_redirect"] and entity["qid"] and not entity["is_disambiguation"]:
            assert by_key[(page["title"], entity["qid"])]["title_flag"]
    stats = json.loads((dirs["alias_table"] / "_MANIFEST.json").read_text())["stats"]
    assert stats["links_counted"] == sum(r["link_count"] for r in built)
    assert stats["links_counted"] + stats["links_unresolved"] == len(rows(dirs["wikipedia"], "links"))
    assert (dirs["alias_table"] / "_normalization.json").is_file()


def test_weights_are_parameters(out: Path) -> None:
    dirs = build_alias(out, EN_DBPEDIA, ("alias_table.title_weight=3", "alias_table.redirect_weight=0"))
    built = check(dirs, MentionNormalizer("hansel"), tw=3, rw=0)
    assert {(r["mention"], r["count"]) for r in built if r["mention"] == "Berlin"} == {("Berlin", 3)}


def test_chinese_alias_table(out: Path) -> None:
    dirs = build_alias(out, ZH_DBPEDIA, ZH_PARAMS)
    built = check(dirs, MentionNormalizer("hansel", chinese=True))
    assert {(r["mention"], r["qid"]) for r in built} >= {("柏林", "Q64"), ("伦敦", "Q84"), ("法国", "Q142")}
    assert json.loads((dirs["alias_table"] / "_normalization.json").read_text())["chinese"] is True
    # every page title is an alias of its own entity, under its normalised (Simplified) form
    norm = MentionNormalizer("hansel", chinese=True)
    by_key = {(r["mention"], r["qid"]): r for r in built}
    titles = {r["title"]: r for r in rows(dirs["title_qid"], "title_qid")}
    checked = 0
    for page in rows(dirs["wikipedia"], "pages"):
        entity = titles[page["title"]]
        if page["ns"] == 0 and not page["is_redirect"] and entity["qid"] and not entity["is_disambiguation"]:
            assert by_key[(norm(page["title"]), entity["qid"])]["title_flag"]
            checked += 1
    assert checked >= 1


def test_alias_table_kb_over_the_same_dump_is_the_same_table(out: Path) -> None:
    """`alias-table-kb` resolves titles through `wikidata_new` (a build with a kb): over the bundled
    config, where `wikidata` and `wikidata_new` are the same real dump, it must give the rows of
    `alias-table`, and it satisfies the same invariants (Σ P(e|m) = 1, components add up)."""
    plain = build_alias(out, EN_DBPEDIA)
    kb = build(
        "alias-table-kb",
        out=out,
        sources=(f"wikipedia={EN_DBPEDIA}",),
        progress=False,
        log=lambda m: None,
        card=False,
    )
    remapped = {
        "wikipedia": kb["wikipedia"],
        "title_qid": kb["title_qid_kb"],
        "alias_table": kb["alias_table_kb"],
    }
    built = check(remapped, MentionNormalizer("hansel"))
    assert len(built) > 5
    for stage in ("alias_table", "mention_stats"):
        assert rows(kb[f"{stage}_kb"], stage) == rows(plain[stage], stage)


def _page(title: str, page_id: int, text: str, redirect: str | None = None) -> str:
    tag = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{tag}"
        f'    <revision>\n      <id>{page_id}</id>\n      <text xml:space="preserve">{escape(text)}</text>\n'
        "    </revision>\n  </page>\n"
    )


@pytest.fixture(scope="module")
def ambiguous_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real zh 柏林 page plus a few made-up pages: redirects (traditional and simplified) to
    柏林, and anchors 英國/英国 pointing at two entities, so ranking and t2s are exercised.

    Derived test data (the real sample has no redirect or ambiguous anchor that resolves).
    """
    data = bz2.decompress(ZH_DBPEDIA.read_bytes())
    header, start = split_header(data, "x")
    extra = [
        _page("柏林市", 990001, "#REDIRECT [[柏林]]", redirect="柏林"),
        _page("柏林 (德國)", 990002, "#REDIRECT [[柏林]]", redirect="柏林"),
        _page("測試一", 990003, "[[英国|英國]]和[[英國|英国]]、[[纽约|英国]]。[[伦敦]]"),
        _page("英國", 990004, "#REDIRECT [[英国]]", redirect="英国"),
    ]
    body = trim_to_pages(data[start:]) + "".join(extra).encode("utf-8")
    path = tmp_path_factory.mktemp("zh") / "zhwiki-derived.xml"
    path.write_bytes(header + body + b"</mediawiki>\n")
    return path


def test_redirects_ranking_and_conversion(out: Path, ambiguous_dump: Path) -> None:
    dirs = build_alias(out, ambiguous_dump, ZH_PARAMS)
    built = check(dirs, MentionNormalizer("hansel", chinese=True))
    by_key = {(r["mention"], r["qid"]): r for r in built}
    assert by_key[("柏林市", "Q64")]["redirect_flag"]
    assert by_key[("柏林 (德国)", "Q64")]["redirect_flag"]  # 德國 -> 德国 in the mention
    # 英國/英国 both normalise to 英国: 3 anchors to Q145 (one through the 英國 redirect) and one to
    # Q60, plus the 英国 title (Q145) and the 英國 redirect (Q145).
    ying = sorted((r for r in built if r["mention"] == "英国"), key=lambda r: r["rank"])
    assert [(r["qid"], r["link_count"], r["title_flag"], r["redirect_flag"]) for r in ying] == [
        ("Q145", 3, False, True),
        ("Q60", 1, False, False),
    ]
    assert [r["count"] for r in ying] == [4, 1]
    assert math.isclose(ying[0]["p_e_given_m"], 0.8) and math.isclose(ying[1]["p_e_given_m"], 0.2)


def test_mgenre_preset(out: Path) -> None:
    dirs = build_alias(out, ZH_DBPEDIA, (*ZH_PARAMS, "alias_table.preset=mgenre"))
    check(dirs, MentionNormalizer("mgenre", chinese=True))
    doc = json.loads((dirs["alias_table"] / "_normalization.json").read_text())
    assert doc["scheme"] == "mgenre"


def test_hanziconv_converter(out: Path) -> None:
    """`converter=hanziconv`: keys converted as the Hansel paper's alias table was (footnote 3),
    recorded in _normalization.json for lookups and matching."""
    dirs = build_alias(out, ZH_DBPEDIA, (*ZH_PARAMS, "alias_table.converter=hanziconv"))
    check(dirs, MentionNormalizer("hansel", chinese=True, converter="hanziconv"))  # keys as HanziConv's
    doc = json.loads((dirs["alias_table"] / "_normalization.json").read_text())
    assert (doc["scheme"], doc["chinese"], doc["converter"]) == ("hansel", True, "hanziconv")


def test_workers_do_not_change_bytes(out: Path, tmp_path: Path) -> None:
    one = build_alias(out, EN_DBPEDIA)
    # The scans and title_qid come from the one-worker build, as a resumed build finds them; the two
    # stages compared are rebuilt with two workers (the scans' worker tests are their own).
    compared = ("alias_table", "mention_stats")
    for stage, directory in one.items():
        if stage not in compared:
            shutil.copytree(directory, tmp_path / directory.relative_to(out))
    two = build_alias(tmp_path, EN_DBPEDIA, workers=2)

    def hashes(d: Path) -> list[str]:
        manifest = json.loads((d / "_MANIFEST.json").read_text())
        return [s["sha256"] for o in manifest["outputs"].values() for s in o["shards"]]

    for stage in compared:
        assert hashes(one[stage]) == hashes(two[stage])
