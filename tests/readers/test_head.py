"""The head of a real dump as a dump of its own (`build --limit N`), and what a dump's first MB say
of the whole (`build --dry-run`)."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

from entbench.readers.head import cut_head, head_lines, head_mediawiki, head_wikidata, measure_head
from tests.conftest import FIXTURES

WIKIDATA_2017 = FIXTURES / "wikidata" / "latest-all.2017-03.head-part.json.bz2"  # 25 entities, framed
ENWIKI_2016 = FIXTURES / "wikipedia" / "enwiki-201605.pages-articles1.head-part.xml.bz2"  # 84 pages


def test_the_first_entities_of_a_framed_dump_are_a_framed_dump(tmp_path: Path) -> None:
    dest = tmp_path / "head.json.gz"
    assert head_wikidata(str(WIKIDATA_2017), 3, dest) == 3
    text = gzip.decompress(dest.read_bytes()).decode("utf-8")
    entities = json.loads(text)  # a JSON array, as the dump is
    original = [
        json.loads(line.rstrip().rstrip(","))
        for line in bz2.decompress(WIKIDATA_2017.read_bytes()).decode("utf-8").splitlines()
        if line.strip() not in ("[", "]", "")
    ]
    assert entities == original[:3]
    assert text.splitlines()[0] == "[" and text.splitlines()[-1] == "]" and len(text.splitlines()) == 5
    again = tmp_path / "again.json.gz"
    head_wikidata(str(WIKIDATA_2017), 3, again)
    assert again.read_bytes() == dest.read_bytes()  # the same bytes: the same fingerprints
    assert head_wikidata(str(WIKIDATA_2017), 1000, tmp_path / "all.json.gz") == 25


def test_the_first_pages_of_a_mediawiki_dump_are_a_mediawiki_dump(tmp_path: Path) -> None:
    xml = bz2.decompress(ENWIKI_2016.read_bytes())
    dest = tmp_path / "head.xml.gz"
    assert head_mediawiki(str(ENWIKI_2016), 2, dest) == 2
    head = gzip.decompress(dest.read_bytes())
    second_end = xml.index(b"</page>", xml.index(b"</page>") + 1) + len(b"</page>")
    assert head == xml[:second_end] + b"\n</mediawiki>\n"
    assert head_mediawiki(str(ENWIKI_2016), 500, tmp_path / "all.xml.gz") == 84
    assert gzip.decompress((tmp_path / "all.xml.gz").read_bytes()) == xml  # all of it, as it was


def test_the_first_lines_of_a_corpus(tmp_path: Path) -> None:
    corpus = FIXTURES / "hansel" / "corpus.jsonl.gz"
    dest = tmp_path / "head.jsonl.gz"
    assert head_lines(str(corpus), 4, dest) == 4
    assert (
        gzip.decompress(dest.read_bytes()).splitlines()
        == gzip.decompress(corpus.read_bytes()).splitlines()[:4]
    )
    assert cut_head("lines", str(corpus), 4, tmp_path / "same.jsonl.gz") == 4


def test_the_first_mb_of_a_dump_measure_its_expansion_and_units() -> None:
    sample = measure_head("mediawiki-xml", str(ENWIKI_2016))
    xml = bz2.decompress(ENWIKI_2016.read_bytes())
    assert sample.compression == "bz2" and sample.sampled == len(xml)  # smaller than a sample: all of it
    decompressed, pages = sample.estimate(ENWIKI_2016.stat().st_size)
    assert decompressed == len(xml) and pages == 84
    wikidata = measure_head("wikidata-json", str(WIKIDATA_2017))
    assert wikidata.estimate(WIKIDATA_2017.stat().st_size)[1] == 25
