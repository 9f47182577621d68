"""NED on CoNLL-YAGO (EntEval §3.7; spec §8).

"For each entity mention m in its context, we generate a set of (at most) its top 30 candidate
entities ... Some gold standard candidates c are not present in Cross-Wikis, so we set the prior
probability p_prior(y) for those to 1e-6 and normalize the resulting priors for the candidate
entities. When adding Wikipedia descriptions, we manually ensure gold standard mentions are attached
to a description, however, we discard candidate mentions that cannot be aligned to a Wikipedia
page." (§3.7) Candidates come from entbench's alias table (AT-base, spec §4) by default, since
CrossWikis is not a Wikipedia dump product, or from a dictionary file the user gives
(`read_dictionary`: `mention<TAB>entity<TAB>count` lines, e.g. CrossWikis reduced to that form).

"We note that directly using prior as predictions yields an accuracy of 58.2%." (§3.7) The
prior-only prediction of a written line is its highest-prior candidate (`prior_only`): right when
that is the gold alone, tied when another candidate has the gold's prior too.

Source: the AIDA CoNLL-YAGO file (`AIDA-YAGO2-dataset.tsv`, Hoffart et al. 2011): documents open
with `-DOCSTART- (<id> <topic>)` (ids with `testa`/`testb` belong to those splits, the rest to train),
sentences are separated by blank lines, one token per line; a token inside a mention has the
columns `token<TAB>B|I<TAB>full mention<TAB>YAGO2 entity|--NME--[<TAB>Wikipedia URL<TAB>...]`.
`--NME--` mentions have no entity in the knowledge base and are left out (counted), as the paper uses
"the 27,816 mentions with valid entries".

Written as `conll-yago/{train,testa,testb}.final.txt`, one mention per line, read by
`ConllYagoEval.loadFile` as `s, e, sent, _, entities = line.strip().split("\\t", 4)`:

    start<TAB>end<TAB>sentence<TAB>mention<TAB>prior|||Title_with_underscores|||description<TAB>...

`start`/`end` are token offsets (end exclusive) into `sentence.split()`; the fourth field, which the
loader ignores, holds the mention. The first candidate is the gold one (the loader labels it 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.tokens import safe_words
from entbench.builders.enteval.tsv import check_field, clean, tsv, words_field

SPLITS = ("train", "testa", "testb")
FILES = {split: f"conll-yago/{split}.final.txt" for split in SPLITS}
NIL = "--NME--"
MISSING_GOLD_PRIOR = 1e-6
_DOCSTART = re.compile(r"^-DOCSTART-\s*\((.*)\)\s*$")
_YAGO_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})")
_WIKI_URL = re.compile(r"^https?://[a-z-]+\.wikipedia\.org/wiki/(.+)$")


@dataclass(frozen=True)
class AidaMention:
    """One linked mention in its sentence; `gold` is a Wikipedia title (None for `--NME--`)."""

    split: str
    document: str
    sentence: tuple[str, ...]
    start: int
    end: int
    mention: str
    gold: str | None
    line: int


def split_of(document: str) -> str:
    """AIDA's split of a document id: `947testa CRICKET` -> testa."""
    head = document.split(maxsplit=1)[0] if document.strip() else ""
    for split in ("testa", "testb"):
        if head.endswith(split):
            return split
    return "train"


def gold_title(fields: Sequence[str]) -> str | None:
    """The gold article title of a mention line: from its Wikipedia URL, else its YAGO2 name."""
    if len(fields) < 4 or fields[3] == NIL:
        return None
    if len(fields) >= 5:
        url = _WIKI_URL.match(fields[4])
        if url:
            return unquote(url.group(1)).replace("_", " ")
    return _YAGO_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), fields[3]).replace("_", " ")


def parse_aida(lines: Iterable[str]) -> Iterator[AidaMention]:
    """Every mention of an AIDA CoNLL-YAGO file, NIL ones with `gold` None."""
    document = ""
    rows: list[tuple[int, list[str]]] = []

    def flush() -> Iterator[AidaMention]:
        if not rows:
            return
        words = [fields[0] for _, fields in rows]
        open_at: int | None = None
        for i, (number, fields) in enumerate(rows):
            tag = fields[1] if len(fields) > 1 else "O"
            if tag not in ("B", "I", "O"):
                raise SourceError(number, f"mention tag {tag!r} is not B or I")
            if tag == "I" and open_at is None:
                raise SourceError(number, "an I token outside a mention")
            ends_here = i + 1 == len(rows) or (rows[i + 1][1][1] if len(rows[i + 1][1]) > 1 else "O") != "I"
            if tag == "B":
                if len(fields) < 4:
                    raise SourceError(number, "a mention line needs token, B/I, mention and entity")
                open_at = i
            if open_at is not None and ends_here:
                first = rows[open_at][1]
                yield AidaMention(
                    split_of(document),
                    document,
                    tuple(words),
                    open_at,
                    i + 1,
                    clean(first[2]),
                    gold_title(first),
                    rows[open_at][0],
                )
                open_at = None

    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        start = _DOCSTART.match(line)
        if start:
            yield from flush()
            rows = []
            document = start.group(1).strip()
            continue
        if not line.strip():
            yield from flush()
            rows = []
            continue
        fields = line.split("\t")
        if not fields[0].strip():
            raise SourceError(number, "an empty token")
        rows.append((number, fields))
    yield from flush()


def sentence_words(mention: AidaMention, lowercase: bool) -> tuple[list[str], int, int]:
    """The sentence's words made loader-safe, and the mention's offsets in them."""
    before = safe_words(mention.sentence[: mention.start])
    inside = safe_words(mention.sentence[mention.start : mention.end])
    after = safe_words(mention.sentence[mention.end :])
    words = [*before, *inside, *after]
    if lowercase:
        words = [w.lower() for w in words]
    return words, len(before), len(before) + len(inside)


@dataclass(frozen=True)
class Candidate:
    """A candidate article: its key (page id), title and prior."""

    key: int
    title: str
    prior: float


def candidate_list(
    gold: Candidate, ranked: Sequence[Candidate], max_candidates: int = 30
) -> tuple[list[Candidate], bool]:
    """Gold first, then the alias table's candidates in rank order, at most `max_candidates` in all;
    priors renormalised to sum to 1. Returns the list and whether the gold was among the ranked
    candidates (if not, it enters with prior `MISSING_GOLD_PRIOR`, §3.7).

    `ranked` holds the top candidates that have a description, in rank order (the caller discards
    those that cannot be aligned to a page, as the paper does).
    """
    found = next((c for c in ranked if c.key == gold.key), None)
    head = found if found is not None else Candidate(gold.key, gold.title, MISSING_GOLD_PRIOR)
    others = [c for c in ranked if c.key != gold.key][: max(0, max_candidates - 1)]
    chosen = [head, *others]
    total = math.fsum(c.prior for c in chosen)  # exactly rounded: independent of the order
    return [Candidate(c.key, c.title, c.prior / total) for c in chosen], found is not None


def prior_only(chosen: Sequence[Candidate]) -> str:
    """The prior-only prediction of a candidate list (gold first): `correct` when the gold's prior is
    higher than every other candidate's, `tied` when it is the highest but shared, else `wrong`."""
    gold, others = chosen[0], chosen[1:]
    best = max((c.prior for c in others), default=-1.0)
    if gold.prior > best:
        return "correct"
    return "tied" if gold.prior == best else "wrong"


@dataclass(frozen=True)
class DictionaryEntry:
    """A dictionary's candidate for a mention: a Wikipedia title and its prior count(e, m) / count(m)."""

    title: str
    prior: float


def dictionary_title(entity: str) -> str:
    """A dictionary's entity as a title: URL escapes undone, `_` as a space (CrossWikis writes
    `Barack_Obama`, `Caf%C3%A9`)."""
    return clean(unquote(entity).replace("_", " "))


def read_dictionary(lines: Iterable[str], mentions: set[str], top: int) -> dict[str, list[DictionaryEntry]]:
    """The top `top` entries (by count, ties by title) of each of `mentions` in a dictionary file of
    `mention<TAB>entity<TAB>count` lines, priors over all of the mention's entries. A mention is
    compared as written, whitespace collapsed; a pair listed twice has its counts added. Only the
    asked mentions' entries are held."""
    counts: dict[str, dict[str, int]] = {}
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        fields = raw.rstrip("\r").split("\t")
        if len(fields) != 3:
            raise SourceError(number, f"expected mention<TAB>entity<TAB>count, got {len(fields)} fields")
        mention, entity, count = clean(fields[0]), dictionary_title(fields[1]), fields[2].strip()
        if not count.isdigit() or int(count) == 0:
            raise SourceError(number, f"count must be a positive integer, got {count!r}")
        if not entity:
            raise SourceError(number, "an empty entity")
        if mention in mentions:
            entries = counts.setdefault(mention, {})
            entries[entity] = entries.get(entity, 0) + int(count)
    result: dict[str, list[DictionaryEntry]] = {}
    for mention, entries in counts.items():
        total = sum(entries.values())
        ranked = sorted(entries.items(), key=lambda e: (-e[1], e[0]))[:top]
        result[mention] = [DictionaryEntry(t, c / total) for t, c in ranked]
    return result


def ned_line(
    words: Sequence[str], start: int, end: int, mention: str, candidates: Sequence[tuple[Candidate, str]]
) -> str:
    """One loader line; each candidate with its description words joined by spaces."""
    entries = []
    for candidate, description in candidates:
        name = check_field(candidate.title).replace(" ", "_")
        entries.append(f"{candidate.prior!r}|||{name}|||{check_field(description)}")
    return tsv(str(start), str(end), words_field(words), clean(mention) or "_", *entries)
