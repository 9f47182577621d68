"""Real Chinese text for the pure-logic tests: the corpus fixture, the official record, UD GSD pairs."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
CORPUS = FIXTURES / "hansel" / "corpus.jsonl.gz"
OFFICIAL = FIXTURES / "zh-text" / "hansel.readme-example.jsonl"
PAIRS = FIXTURES / "zh-text" / "ud-zh-gsd.dev.hant-hans.tsv"


@functools.cache
def corpus() -> dict[str, str]:
    """id -> text of the real zhwiki plain-text corpus fixture."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    return {d["id"]: d["text"] for d in docs}


@functools.cache
def official_lines() -> list[str]:
    """The official record lines (Hansel README), as stored."""
    return OFFICIAL.read_text(encoding="utf-8").splitlines()


@functools.cache
def hant_hans() -> list[tuple[str, str]]:
    """(Traditional, Simplified) real sentence pairs of UD Chinese GSD / GSDSimp."""
    lines = PAIRS.read_text(encoding="utf-8").splitlines()[1:]
    return [(hant, hans) for _, hant, hans in (line.split("\t") for line in lines)]
