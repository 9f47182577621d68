"""EFP: entity factuality prediction on FEVER (EntEval §3.3; Thorne et al. 2018; spec §8).

"We discard the last category ("NotEnoughInfo") and the evidence. In rare cases, instances in FEVER
may include multiple entity mentions, so we randomly pick one. We randomly sample 10000, 2000, and
2000 instances for our training, validation, and test sets." (§3.3)

Source: FEVER jsonl files (`train.jsonl`, `paper_dev.jsonl`, …), one object a line with `id`,
`verifiable`, `label` (`SUPPORTS`, `REFUTES`, `NOT ENOUGH INFO`), `claim` and `evidence` (evidence
sets, each a list of `[annotation_id, evidence_id, page, sentence]`, `page` null for NOT ENOUGH
INFO). The entity mention of a claim is the text of one of its evidence pages found in the claim:
a page id becomes text as FEVER wrote it from a Wikipedia title (`_` -> space, the PTB escapes
`-LRB-` `-RRB-` `-LSB-` `-RSB-` `-LCB-` `-RCB-` `-COLON-` undone, Unicode NFC, a trailing bracketed
disambiguation such as " (2012 film)" dropped) and is found where it starts and ends on token
boundaries of the claim (NFC too). Several pages found: one is picked by a seeded hash of the claim.

Written as `EFP/{train,dev,test}.txt`, read by `EFPEval.loadFile` as
`label, entity, s, e = line.strip().split("\\t")`: the FEVER label, the claim's tokens joined by
spaces, and the mention's token offsets (end exclusive) in them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.jsonl import json_objects
from entbench.builders.enteval.sampling import stable_hash
from entbench.builders.enteval.tokens import Token
from entbench.builders.enteval.tsv import tsv, words_field

SPLITS = ("train", "dev", "test")
FILES = {split: f"EFP/{split}.txt" for split in SPLITS}
LABELS = ("SUPPORTS", "REFUTES")
NOT_ENOUGH_INFO = "NOT ENOUGH INFO"
#: The Penn Treebank escapes of FEVER's page ids (its wiki-pages dump writes titles that way).
PTB_ESCAPES = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "-COLON-": ":",
}
_ESCAPE = re.compile("|".join(re.escape(k) for k in PTB_ESCAPES))
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True)
class Claim:
    """A labelled FEVER claim with the distinct pages of its evidence (FEVER page ids)."""

    id: str
    label: str
    claim: str
    pages: tuple[str, ...]
    line: int


def page_text(page: str) -> str:
    """The text a FEVER page id stands for (see the module docstring); "" if nothing is left."""
    text = _ESCAPE.sub(lambda m: PTB_ESCAPES[m.group()], page.replace("_", " "))
    text = unicodedata.normalize("NFC", text).strip()
    shorter = _DISAMBIGUATION.sub("", text)
    return shorter if shorter else text


def _pages(evidence: object, number: int) -> tuple[str, ...]:
    if not isinstance(evidence, list):
        raise SourceError(number, "evidence must be a list of evidence sets")
    pages: dict[str, None] = {}
    for group in evidence:
        if not isinstance(group, list):
            raise SourceError(number, "an evidence set must be a list")
        for item in group:
            if not isinstance(item, list) or len(item) != 4:
                raise SourceError(number, "an evidence item must be [annotation, evidence, page, sentence]")
            page = item[2]
            if page is not None and not isinstance(page, str):
                raise SourceError(number, f"evidence page must be a string or null, got {page!r}")
            if page:
                pages[page] = None
    return tuple(pages)


def iter_fever(lines: Iterable[str]) -> Iterator[Claim]:
    """Every claim of a FEVER jsonl file, as read (NOT ENOUGH INFO included; empty lines skipped)."""
    for number, record in json_objects(lines):
        label, claim = record.get("label"), record.get("claim")
        if label is None:
            raise SourceError(number, "no label (a FEVER test file without labels cannot make EFP)")
        if label not in (*LABELS, NOT_ENOUGH_INFO):
            raise SourceError(number, f"label must be SUPPORTS, REFUTES or NOT ENOUGH INFO, got {label!r}")
        if not isinstance(claim, str) or not claim.strip():
            raise SourceError(number, "claim must be a non-empty string")
        yield Claim(str(record.get("id", "")), label, claim, _pages(record.get("evidence"), number), number)


def find_on_token_boundaries(
    text: str, tokens: Sequence[Token], needle: str, ignore_case: bool
) -> tuple[int, int] | None:
    """The token span (start, end exclusive) of the first occurrence of `needle` in `text` that
    starts where a token starts and ends where one ends, or None."""
    if not needle:
        return None
    starts = {t.start: i for i, t in enumerate(tokens)}
    ends = {t.end: i for i, t in enumerate(tokens)}
    pattern = re.compile(re.escape(needle), re.IGNORECASE if ignore_case else 0)
    position = 0
    while (found := pattern.search(text, position)) is not None:
        if found.start() in starts and found.end() in ends:
            return starts[found.start()], ends[found.end()] + 1
        position = found.start() + 1
    return None


@dataclass(frozen=True)
class Mention:
    """A page found in a claim: its text and token span."""

    page: str
    start: int
    end: int


def mentions(
    claim_text: str, tokens: Sequence[Token], pages: Sequence[str], ignore_case: bool
) -> list[Mention]:
    """The distinct spans of the claim's evidence pages found on token boundaries, in span order."""
    found: dict[tuple[int, int], Mention] = {}
    for page in sorted(pages):
        span = find_on_token_boundaries(claim_text, tokens, page_text(page), ignore_case)
        if span is not None and span not in found:
            found[span] = Mention(page, *span)
    return [found[s] for s in sorted(found)]


def pick(claim: Claim, found: Sequence[Mention], seed: int) -> Mention:
    """One of the mentions found, chosen by a seeded hash of the claim ("we randomly pick one")."""
    return found[stable_hash(seed, "mention", claim.id, claim.claim) % len(found)]


def efp_line(label: str, words: Sequence[str], start: int, end: int) -> str:
    """One loader line."""
    return tsv(label, words_field(words), str(start), str(end))
