"""The synthetic XML generator (`bench/wikipedia/gen_xml.py`): reproducible, real layout, and every
article link it writes found by entbench's renderer with the right target and anchor. No timings.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from entbench.builders.wikipedia.stages.scan import WikipediaScanParams, render_config
from entbench.readers.mediawiki.xml_dump import multistream_index_path, read_dump, read_stream_offsets
from entbench.readers.wikitext.render import render

BENCH = Path(__file__).resolve().parents[2] / "bench" / "wikipedia"


@pytest.fixture(scope="module")
def gen_xml() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("gen_xml")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_renderer_finds_every_generated_link(gen_xml: ModuleType, tmp_path: Path, language: str) -> None:
    path = tmp_path / f"{language}.xml"
    summary = gen_xml.generate(path, 0.6, seed=3, language=language)
    site, pages = read_dump(str(path))
    assert site.dbname == f"{language}wiki"
    config = render_config(WikipediaScanParams(), site)
    seen = redirects = links = 0
    for page in pages:
        seen += 1
        if page.redirect:
            redirects += 1
            continue
        rendered = render(page.text, config)
        assert [(link.target_normalized, link.anchor) for link in rendered.links] == summary["anchors"][
            page.page_id
        ]
        links += len(rendered.links)
    assert (seen, redirects, links) == (summary["pages"], summary["redirects"], summary["article_links"])
    assert links > 1000


def test_generation_is_reproducible_and_encodings_agree(gen_xml: ModuleType, tmp_path: Path) -> None:
    plain, again = tmp_path / "a.xml", tmp_path / "b.xml"
    gen_xml.generate(plain, 0.3, seed=5)
    gen_xml.generate(again, 0.3, seed=5)
    assert hashlib.sha256(plain.read_bytes()).digest() == hashlib.sha256(again.read_bytes()).digest()
    packed = tmp_path / "x.xml.bz2"
    multi = tmp_path / "x-pages-articles-multistream.xml.bz2"
    gen_xml.generate(packed, 0.3, seed=5, compress="bz2")
    gen_xml.generate(multi, 0.3, seed=5, compress="multistream")
    index = multistream_index_path(str(multi))
    assert index is not None and len(read_stream_offsets(index, str(multi))) >= 1
    titles = [[p.title for p in read_dump(str(f))[1]] for f in (plain, packed, multi)]
    assert titles[0] == titles[1] == titles[2]
