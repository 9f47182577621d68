"""`entbench build wikipedia` on the real fixture dumps: flags, offsets, determinism, input formats."""

from __future__ import annotations

import bz2
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from entbench.builders.wikipedia.stages import scan
from entbench.builders.wikipedia.stages.scan import EXPANSION, _multistream_tasks
from entbench.readers.mediawiki.xml_dump import (
    READER_ENV,
    iter_pages,
    multistream_index_path,
    page_pieces,
    read_stream_offsets,
    split_header,
    trim_to_pages,
)
from tests.builds import build

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "wikipedia"
EN_2016 = FIXTURES / "enwiki-201605.pages-articles1.head-part.xml.bz2"
EN_DBPEDIA = FIXTURES / "enwiki.dbpedia-minidump.part.xml.bz2"
ZH_DBPEDIA = FIXTURES / "zhwiki.dbpedia-minidump.xml.bz2"


def run(out: Path, *, sources: tuple[str, ...] = (), params: tuple[str, ...] = (), **kw: Any) -> Path:
    dirs = build(
        "wikipedia",
        out=out,
        sources=sources,
        params=params,
        progress=False,
        log=lambda m: None,
        card=False,
        **kw,
    )
    return dirs["wikipedia"]


def read(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in sorted((stage_dir / table).glob("part-*.parquet")):
        rows += pq.read_table(f).to_pylist()
    return rows


def shard_hashes(stage_dir: Path) -> dict[str, list[str]]:
    manifest = json.loads((stage_dir / "_MANIFEST.json").read_text())
    return {t: [s["sha256"] for s in o["shards"]] for t, o in manifest["outputs"].items()}


@pytest.fixture(scope="module")
def en_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(tmp_path_factory.mktemp("en"), chunk_mb=1)


def test_pages_flags_and_redirects(en_build: Path) -> None:
    pages = {p["title"]: p for p in read(en_build, "pages")}
    assert len(pages) == 84
    assert sum(p["is_redirect"] for p in pages.values()) == 66
    assert pages["AccessibleComputing"]["redirect_target"] == "Computer accessibility"
    assert (
        pages["AssistiveTechnology"]["redirect_target"] == "Assistive technology"
    )  # "[[Assistive_technology]]"
    assert pages["AccessibleComputing"]["text"] == ""
    anarchism = pages["Anarchism"]
    assert not anarchism["is_redirect"] and anarchism["redirect_target"] is None
    assert anarchism["revision_id"] == 716551092 and anarchism["page_id"] == 12
    assert not any(p["is_disambiguation"] for p in pages.values())
    stats = json.loads((en_build / "_MANIFEST.json").read_text())["stats"]
    assert stats["pages_seen"] == stats["pages_written"] == 84
    assert stats["links_article"] == stats["links_written"]
    assert (en_build / "_siteinfo.json").is_file()


def test_every_link_anchor_matches_the_text(en_build: Path) -> None:
    texts = {p["page_id"]: p for p in read(en_build, "pages")}
    links = read(en_build, "links")
    assert len(links) > 3000
    for link in links:
        page = texts[link["page_id"]]
        assert page["text"][link["start"] : link["end"]] == link["anchor"]
        assert page["paragraph_starts"][link["paragraph"]] <= link["start"]
    by_page: dict[int, list[int]] = {}
    for link in links:
        by_page.setdefault(link["page_id"], []).append(link["ordinal"])
    assert all(ords == list(range(len(ords))) for ords in by_page.values())


def test_disambiguation_page_flagged(tmp_path: Path) -> None:
    stage = run(tmp_path, sources=(f"wikipedia={EN_DBPEDIA}",))
    pages = {p["title"]: p for p in read(stage, "pages")}
    assert pages["Food (disambiguation)"]["is_disambiguation"]
    assert not pages["Berlin"]["is_disambiguation"]
    assert "Category:Pininfarina" not in pages  # namespace 14: dropped and counted
    stats = json.loads((stage / "_MANIFEST.json").read_text())["stats"]
    assert stats["dropped_namespace_14"] == 1


def test_language_parameter_reads_localised_names(tmp_path: Path) -> None:
    # The zh minidump's header claims enwiki; language=zh makes `分類:` a category again.
    src = (f"wikipedia={ZH_DBPEDIA}",)
    plain = read(run(tmp_path / "a", sources=src), "links")
    zh = read(run(tmp_path / "b", sources=src, params=("wikipedia.language=zh",)), "links")
    assert any(link["target"].startswith("分類:") for link in plain)
    assert not any(link["target"].startswith("分類:") for link in zh)
    assert {"联邦州"} <= {link["anchor"] for link in zh}


def test_workers_do_not_change_bytes(tmp_path: Path, en_build: Path) -> None:
    two = run(tmp_path, workers=2, chunk_mb=1)
    assert shard_hashes(two) == shard_hashes(en_build)


def test_the_mwxml_reader_writes_the_same_bytes(
    tmp_path: Path, en_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mwxml, the reference page reader, selected for the workers too: the same shards."""
    monkeypatch.setenv(READER_ENV, "mwxml")
    reference = run(tmp_path, workers=2, chunk_mb=1)
    assert shard_hashes(reference) == shard_hashes(en_build)


def _plain_and_multistream(tmp: Path) -> tuple[Path, Path]:
    data = bz2.decompress(EN_2016.read_bytes())
    plain = tmp / "enwiki-test.xml"
    plain.write_bytes(data)
    header, start = split_header(data, "x")
    pages = trim_to_pages(data[start:])
    multi = tmp / "enwiki-test-pages-articles-multistream.xml.bz2"
    out = bytearray(bz2.compress(header))
    lines, pos = [], 0
    while pos < len(pages):
        cut = pos
        for _ in range(7):
            nxt = pages.find(b"</page>", cut)
            cut = nxt + len(b"</page>") if nxt >= 0 else cut
        chunk = pages[pos:cut]
        lines += [f"{len(out)}:{p.page_id}:{p.title}\n" for p in iter_pages(header, chunk, "x", 0)]
        out += bz2.compress(chunk)
        pos = cut
    out += bz2.compress(b"\n</mediawiki>\n")
    multi.write_bytes(bytes(out))
    (tmp / "enwiki-test-pages-articles-multistream-index.txt").write_text("".join(lines), encoding="utf-8")
    return plain, multi


@pytest.mark.parametrize("kind", ["plain", "multistream"])
def test_parallel_input_formats_give_the_same_shards(tmp_path: Path, en_build: Path, kind: str) -> None:
    plain, multi = _plain_and_multistream(tmp_path)
    source = plain if kind == "plain" else multi
    stage = run(tmp_path / "out", sources=(f"wikipedia={source}",), chunk_mb=1)
    manifest = json.loads((stage / "_MANIFEST.json").read_text())
    assert manifest["map_stats"]["input_progress_bytes"] == source.stat().st_size
    assert len(json.loads((stage.parent / stage.name / "_MANIFEST.json").read_text())["shard_stats"]) == 2
    assert manifest["stats"]["pages_seen"] == 84
    assert_same_tables(stage, en_build)


def test_multistream_scans_in_parallel_with_the_same_bytes(tmp_path: Path) -> None:
    """Two workers each decompress their own bz2 streams (located through the index file) and
    write exactly the shards one worker writes."""
    _, multi = _plain_and_multistream(tmp_path)
    index = multistream_index_path(str(multi))
    assert index is not None
    # --chunk-mb 1 groups the streams into tasks of about 1 MiB / EXPANSION["bz2"] compressed bytes
    tasks = list(
        _multistream_tasks(
            read_stream_offsets(index, str(multi)), multi.stat().st_size, (1 << 20) // EXPANSION["bz2"], {}
        )
    )
    assert len(tasks) >= 2  # so two workers do take different streams
    one = run(tmp_path / "w1", sources=(f"wikipedia={multi}",), chunk_mb=1, workers=1)
    two = run(tmp_path / "w2", sources=(f"wikipedia={multi}",), chunk_mb=1, workers=2)
    assert json.loads((two / "_RUN.json").read_text())["workers"] == 2
    assert json.loads((two / "_MANIFEST.json").read_text())["stats"]["pages_seen"] == 84
    assert shard_hashes(two) == shard_hashes(one)


def test_not_a_wikipedia_dump_is_a_clear_error(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    wikidata = Path(__file__).resolve().parents[4] / "fixtures" / "wikidata" / "entities-old.json.bz2"
    result = run_cli(
        ["build", "wikipedia", "--source", f"wikipedia={wikidata}", "--out", str(tmp_path), "--no-progress"]
    )
    assert result.exit_code == 1
    assert "not an XML file" in result.output
    assert "Traceback" not in result.output


def test_truncated_dump_is_a_data_error(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    data = EN_2016.read_bytes()
    cut = tmp_path / "enwiki-cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    result = run_cli(
        ["build", "wikipedia", "--source", f"wikipedia={cut}", "--out", str(tmp_path), "--no-progress"]
    )
    assert result.exit_code == 1
    assert "enwiki-cut.xml.bz2" in result.output and "byte offset" in result.output
    assert "Traceback" not in result.output


def test_a_page_id_dumped_twice_keeps_its_latest_revision_and_only_its_links(tmp_path: Path) -> None:
    """A dump of revisions can hold a page more than once: the reduce keeps the highest revision
    and drops the other's links (`dropped_duplicate_page_id`); a shard without duplicates leaves
    its tables as mapped (sorted on disk when large), with the same rows."""
    xml = bz2.decompress(EN_2016.read_bytes()).decode("utf-8")
    start = xml.index("<page>\n    <title>Anarchism</title>")
    end = xml.index("</page>", start) + len("</page>")
    newer = re.sub(r"(<revision>\s*<id>)716551092(</id>)", r"\g<1>716551093\g<2>", xml[start:end], count=1)
    newer = re.sub(
        r'(<text xml:space="preserve"[^>]*>).*?(</text>)',
        r"\g<1>See [[Zebra]].\g<2>",
        newer,
        count=1,
        flags=re.S,
    )
    assert "716551093" in newer and "[[Zebra]]" in newer
    tail = xml.index("</mediawiki>")
    twice = tmp_path / "twice.xml"
    twice.write_text(xml[:tail] + "  " + newer + "\n" + xml[tail:], encoding="utf-8")
    once = tmp_path / "once.xml"
    once.write_text(xml, encoding="utf-8")

    stage = run(tmp_path / "twice", sources=(f"wikipedia={twice}",))
    reference = run(tmp_path / "once", sources=(f"wikipedia={once}",))
    stats = json.loads((stage / "_MANIFEST.json").read_text())["stats"]
    assert stats["dropped_duplicate_page_id"] == 1
    pages = read(stage, "pages")
    anarchism = [p for p in pages if p["page_id"] == 12]
    assert [p["revision_id"] for p in anarchism] == [716551093]
    assert [link["target"] for link in read(stage, "links") if link["page_id"] == 12] == ["Zebra"]
    others = [p for p in pages if p["page_id"] != 12]
    assert others == [p for p in read(reference, "pages") if p["page_id"] != 12]
    assert len(others) == len(pages) - 1 > 10


@pytest.mark.parametrize("kind", ["bz2", "plain", "multistream"])
def test_tasks_read_in_small_pieces_write_the_same_shards(
    tmp_path: Path, en_build: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task parses and spills its pages a piece at a time (`PIECE_BYTES`, 4 MB): pieces of
    20 kB, several per task on every input path, give the same rows in the same order."""
    monkeypatch.setattr(scan, "PIECE_BYTES", 20_000)
    pieces: list[int] = []

    def counted_pieces(*args: Any, **kwargs: Any) -> Any:
        for piece in page_pieces(*args, **kwargs):
            pieces.append(len(piece[1]))
            yield piece

    monkeypatch.setattr(scan, "page_pieces", counted_pieces)
    plain, multi = _plain_and_multistream(tmp_path)
    source = {"bz2": EN_2016, "plain": plain, "multistream": multi}[kind]
    stage = run(tmp_path / "out", sources=(f"wikipedia={source}",), chunk_mb=1, workers=1)
    assert len(pieces) > 20 and max(pieces) < 200_000
    assert_same_tables(stage, en_build)
    if kind == "bz2":
        assert shard_hashes(stage) == shard_hashes(en_build)


def assert_same_tables(stage: Path, reference: Path) -> None:
    """`stage`'s pages and links shards hold the rows of `reference`'s, shard by shard (their
    metadata, which names the source's fingerprint, aside)."""
    for table in ("pages", "links"):
        for ours, theirs in zip(
            sorted((stage / table).glob("*.parquet")),
            sorted((reference / table).glob("*.parquet")),
            strict=True,
        ):
            assert (
                pq.read_table(ours)
                .replace_schema_metadata(None)
                .equals(pq.read_table(theirs).replace_schema_metadata(None))
            )
