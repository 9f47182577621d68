"""`entbench build wikient` on the real 2016 enwiki fixture (spec §8, EntEval §4.3)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from entbench.builders.enteval.tokens import Tokenizer
from tests.builds import build
from tests.world_support import SamplesBuilds


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def rows(directory: Path, table: str | None = None) -> list[dict[str, Any]]:
    pattern = f"{table}/*.parquet" if table else "*.parquet"
    return [r for f in sorted(directory.glob(pattern)) for r in pq.read_table(f).to_pylist()]


def manifest(directory: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((directory / "_MANIFEST.json").read_text(encoding="utf-8"))
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wikient")
    samples_builds.seed(out, "enteval-tasks")  # the run's shared build holds WikiEnt's stages
    return build("wikient", out=out, progress=False, log=quiet, card=False)


def test_every_mention_is_the_anchor_at_its_offsets(built: dict[str, Path]) -> None:
    instances = rows(built["wikient"])
    assert instances, "the 2016 fixture has links between its own articles"
    pages = {p["page_id"]: p for p in rows(built["wikipedia"], "pages")}
    links = {(link["page_id"], link["ordinal"]): link for link in rows(built["wikipedia"], "links")}
    titles = {t["title"]: t for t in rows(built["title_qid"])}
    tokenizer = Tokenizer.shared()
    for instance in instances:
        link = links[(instance["page_id"], instance["link_ordinal"])]
        page = pages[instance["page_id"]]
        anchor = page["text"][link["start"] : link["end"]]
        assert anchor == link["anchor"]
        words = instance["sentence"].split()
        start, end = instance["mention_start"], instance["mention_end"]
        assert instance["mention"] == " ".join(words[start:end])
        assert "".join(words[start:end]) == "".join(anchor.split()).lower()
        # The sentence is the sentencizer's sentence of the link's paragraph, lowercased.
        starts = page["paragraph_starts"]
        p = link["paragraph"]
        stop = starts[p + 1] - 2 if p + 1 < len(starts) else len(page["text"])
        paragraph = page["text"][starts[p] : stop]
        [analysis] = list(tokenizer.analyse([paragraph]))
        offset = link["start"] - starts[p]
        [(a, b)] = [(a, b) for a, b in analysis.sentences if a <= offset < b]
        assert words == [t.text.lower() for t in analysis.tokens if a <= t.start < b]
        resolved = titles[link["target_normalized"]]
        assert instance["target_title"] == resolved["final_title"]
        assert instance["target_page_id"] == resolved["page_id"]
        assert instance["target_qid"] == resolved["qid"]
    # One instance per link: a sentence with several links is repeated, never merged.
    assert len({(i["page_id"], i["link_ordinal"]) for i in instances}) == len(instances)
    assert any(i["sentence"].startswith("ayn rand accredited aristotle") for i in instances)


def test_mention_is_the_token_span_on_every_row_of_a_real_build(
    tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path
) -> None:
    """The whole 2016 gensim head (206 pages; its links to its own articles are the instances): an
    anchor the tokenizer splits is written as the tokens the offsets select (issue 21). Quotes,
    brackets and hyphens over all its links: `test_wikient_placement`."""
    out = tmp_path_factory.mktemp("wikient-head")
    source = f"wikipedia={fixtures_dir / 'wikipedia' / 'enwiki-201605.pages-articles1.gensim-head.xml.bz2'}"
    dirs = build(
        "wikient",
        out=out,
        sources=[source],
        params=["wikient.lowercase=false"],
        progress=False,
        log=quiet,
        card=False,
    )
    instances = rows(dirs["wikient"])
    assert len(instances) > 100
    links = {(link["page_id"], link["ordinal"]): link["anchor"] for link in rows(dirs["wikipedia"], "links")}
    for instance in instances:
        words = instance["sentence"].split()
        start, end = instance["mention_start"], instance["mention_end"]
        assert 0 <= start < end <= len(words)
        assert instance["mention"] == " ".join(words[start:end])
        anchor = links[(instance["page_id"], instance["link_ordinal"])]
        assert "".join(instance["mention"].split()) == "".join(anchor.split())
    # Anthropology: "[[Anthropology#Focus on the "other cultures"|specialists in 'other cultures']]"
    [other] = [
        i for i in instances if links[(i["page_id"], i["link_ordinal"])] == "specialists in 'other cultures'"
    ]
    assert other["mention"] == "specialists in ' other cultures '"
    assert other["target_title"] == "Anthropology"


def test_descriptions_are_the_first_100_tokens_from_the_first_sentence(built: dict[str, Path]) -> None:
    tokenizer = Tokenizer.shared()
    pages = {p["page_id"]: p for p in rows(built["wikipedia"], "pages")}
    descriptions = {d["page_id"]: d for d in rows(built["wikient_descriptions"])}
    articles = [p for p in pages.values() if p["ns"] == 0 and not p["is_redirect"] and p["text"].strip()]
    assert set(descriptions) == {p["page_id"] for p in articles}
    for page in articles:
        description = descriptions[page["page_id"]]
        words = description["description"].split()
        assert words == tokenizer.words(page["text"])[:100]  # the whole text, tokenised independently
        assert len(words) == description["num_tokens"] <= 100
        first_paragraph = page["text"].split("\n\n")[0]
        [analysis] = list(tokenizer.analyse([first_paragraph]))
        a, b = analysis.sentences[0]
        first_sentence = [t.text for t in analysis.tokens if a <= t.start < b]
        assert words[: len(first_sentence)] == first_sentence[: len(words)]
    for instance in rows(built["wikient"]):
        assert instance["description"] == descriptions[instance["target_page_id"]]["description"].lower()
    # Pinned on the real 2016 lead sentences (the tokenizer splits "self-governed" at its hyphens).
    by_title = {d["title"]: d["description"] for d in descriptions.values()}
    assert by_title["Anarchism"].startswith(
        "Anarchism is a political philosophy that advocates self - governed societies based on "
        "voluntary institutions . "
    )
    assert by_title["Ayn Rand"].startswith(
        "Ayn Rand ( /ˈaɪn ˈrænd/ ; born Alisa Zinov'yevna Rosenbaum , Russian : Али́са Зино́вьевна "
        "Розенба́ум ; February 2 [ O.S. January 20 ] 1905 – March 6 , 1982 )"
    )


def test_every_link_is_an_instance_or_a_counted_drop(built: dict[str, Path]) -> None:
    stats = manifest(built["wikient"])["stats"]
    con = duckdb.connect()
    links = f"read_parquet('{built['wikipedia']}/links/*.parquet')"
    titles = f"read_parquet('{built['title_qid']}/*.parquet')"
    by_status = dict(
        con.execute(
            f"SELECT t.status || CASE WHEN t.page_id IS NULL THEN '/missing' ELSE '' END, count(*) "
            f"FROM {links} l JOIN {titles} t ON t.title = l.target_normalized GROUP BY 1"
        ).fetchall()
    )
    total = con.execute(f"SELECT count(*) FROM {links}").fetchone()
    assert total is not None and stats["links_read"] == total[0]
    assert stats["dropped_unresolved_red_link"] == by_status.get("red_link/missing", 0)
    assert stats.get("dropped_target_not_in_dump", 0) == by_status.get("sitelink/missing", 0)
    assert stats["dropped_target_not_in_dump"] > 0  # New York City, Ethanol: items without pages here
    instances = len(rows(built["wikient"]))
    assert stats["instances"] == instances > 0
    dropped = sum(v for k, v in stats.items() if k.startswith("dropped_"))
    assert dropped + instances == stats["links_read"]
    # No Wikidata item in the fixture has a sitelink to these articles: target_qid stays null.
    assert stats["instances_without_qid"] == instances
    assert stats["tokens_split_at_link_edge"] == 0


def test_lowercasing_is_a_parameter(built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> None:
    out = built["wikient"].parents[2]
    cased = build(
        "wikient", out=out, params=["wikient.lowercase=false"], progress=False, log=quiet, card=False
    )
    assert cased["wikient"] != built["wikient"]  # a different fingerprint, both kept
    descriptions = {d["page_id"]: d["description"] for d in rows(built["wikient_descriptions"])}
    lower = {(r["page_id"], r["link_ordinal"]): r for r in rows(built["wikient"])}
    for row in rows(cased["wikient"]):
        assert row["description"] == descriptions[row["target_page_id"]]
        twin = lower[(row["page_id"], row["link_ordinal"])]
        assert twin["sentence"] == row["sentence"].lower() and twin["mention"] == row["mention"].lower()
        assert (twin["mention_start"], twin["mention_end"]) == (row["mention_start"], row["mention_end"])
    assert any(any(c.isupper() for c in r["sentence"]) for r in rows(cased["wikient"]))


def test_workers_give_identical_bytes(
    built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The dump scans come from the one-worker build, as a resumed build finds them; the two WikiEnt
    # stages, the ones compared, are rebuilt with two workers (the scans' own worker-count tests
    # are tests/builders/wikipedia and tests/builders/wikidata's).
    root, out = built["wikient"].parents[2], tmp_path_factory.mktemp("wikient-2")
    compared = ("wikient_descriptions", "wikient")
    for stage, directory in built.items():
        if stage not in compared:
            shutil.copytree(directory, out / directory.relative_to(root))
    again = build("wikient", out=out, workers=2, progress=False, log=quiet, card=False)
    for stage in compared:
        one, two = manifest(built[stage]), manifest(again[stage])
        assert one["fingerprint"] == two["fingerprint"]
        assert one["outputs"] == two["outputs"]  # every shard's sha256 and row count


def test_drop_reasons_on_a_constructed_world(
    tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path, samples_builds: SamplesBuilds
) -> None:
    """Cases the 2016 sample lacks: QIDs through sitelinks and redirects, an anchor edge inside a word,
    an anchor the sentencizer splits, a linked page with no text, a disambiguation target."""
    out = tmp_path_factory.mktemp("wikient-world")
    source = f"wikipedia={fixtures_dir / 'enteval' / 'enwiki-constructed.xml'}"
    samples_builds.seed(out, "enteval-tasks", sources=[source])
    dirs = build("wikient", out=out, sources=[source], progress=False, log=quiet, card=False)
    stats = manifest(dirs["wikient"])["stats"]
    instances = rows(dirs["wikient"])
    by_mention = Counter((i["mention"], i["target_qid"], i["target_title"]) for i in instances)
    assert by_mention[("uk", "Q145", "United Kingdom")] == 2  # [[UK]] is a redirect
    assert by_mention[("britain", "Q145", "United Kingdom")] == 1
    assert by_mention[("queen", "Q139", "Queen (chess)")] == 3
    assert by_mention[("queen", "Q116", "Monarch")] == 1
    [author] = [i for i in instances if i["mention"] == "authors"]
    words = author["sentence"].split()
    assert words[author["mention_start"] - 1 : author["mention_end"]] == ["co", "authors"]
    assert stats["tokens_split_at_link_edge"] == 1
    assert stats["dropped_link_crosses_sentence"] == 1  # [[Scotland|Scotland. The]]
    assert stats["dropped_target_no_text"] == 1  # [[Empty page]] renders to nothing
    assert stats["dropped_target_not_in_dump"] == 1  # [[ethanol]]: Q153 has no page in this dump
    assert stats["instances_without_qid"] == 1  # [[Queen]], the disambiguation page
    assert (
        sum(v for k, v in stats.items() if k.startswith("dropped_")) + len(instances) == stats["links_read"]
    )

    strict = build(
        "wikient",
        out=out,
        sources=[source],
        params=["wikient.drop_disambiguation_targets=true", "wikient.require_qid=true"],
        progress=False,
        log=quiet,
        card=False,
    )
    strict_stats = manifest(strict["wikient"])["stats"]
    assert strict_stats["dropped_target_disambiguation"] == 1
    assert strict_stats["instances"] == len(instances) - 1
    assert all(i["target_qid"] for i in rows(strict["wikient"]))


def test_no_instance_at_all_is_an_empty_build_with_every_link_counted(
    built: dict[str, Path], fixtures_dir: Path
) -> None:
    """The real DBpedia minidump (2019-2021 enwiki pages) links to none of its own articles: its
    links are red links or reach items whose pages are elsewhere. Every reducer then gets no
    instance, which once crashed the stage (an empty, untyped filter mask)."""
    out = built["wikient"].parents[2]  # the same --out: the wikidata scan is reused
    source = f"wikipedia={fixtures_dir / 'wikipedia' / 'enwiki.dbpedia-minidump.part.xml.bz2'}"
    dirs = build("wikient", out=out, sources=[source], progress=False, log=quiet, card=False)
    stats = manifest(dirs["wikient"])["stats"]
    assert rows(dirs["wikient"]) == [] and stats["instances"] == 0
    assert len(list(dirs["wikient"].glob("part-*.parquet"))) == 2  # both shards written, empty
    assert stats["links_read"] == len(rows(dirs["wikipedia"], "links")) > 0
    assert stats["dropped_unresolved_red_link"] > 0
    assert stats["dropped_target_not_in_dump"] > 0  # e.g. London (Q84): an item, no page here
    assert sum(v for k, v in stats.items() if k.startswith("dropped_")) == stats["links_read"]
    berlin = [d for d in rows(dirs["wikient_descriptions"]) if d["title"] == "Berlin"]
    # Its lead sentence as the real article shows it (the pronunciation templates show their words).
    assert [
        d["description"].startswith(
            "Berlin ( /bɜːrˈlɪn/ bur - LIN , German pronunciation : [ bɛʁˈliːn ] ) is the capital and "
            "largest city of Germany "
        )
        for d in berlin
    ] == [True]
