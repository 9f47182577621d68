"""Edge-probing data (spec §7): jiant JSON lines in and out, and CoNLL-U converted to probing tasks.

jiant edge-probing files hold one sentence per line::

    {"text": "tokens separated by single spaces", "info": {...},
     "targets": [{"span1": [s, e], "span2": [s, e], "label": "nsubj"}, ...]}

with token spans (end exclusive); `span2` only in two-span tasks, `label` a string or (SPR) a list.
A span's text is `" ".join(text.split(" ")[s:e])`, as EPtest's converters compute it.

CoNLL-U (Universal Dependencies) becomes one of four tasks, as in EPtest's converters
(`Josh1108/EPtest:eptests/converters/iface.py`): `pos` (one span per token, UPOS label), `xpos`
(the same spans, the language-specific XPOS label: Penn Treebank tags in EWT and in PTB converted
to CoNLL-X/CoNLL-U, whose fifth column EPtest's `PosPenn` reads for PTB-PoS; a word without one is
an error), `dep-cls` (span1 the dependent, span2 its head, DEPREL label; the root has no item) and
`dep-pred` (per arc a positive, label "1", then a negative, label "0", pairing the dependent
with a token that is not its head).

Two policies for the token lines a CoNLL-U sentence has besides its words:

* ``eptest`` (what EPtest did, and so what its numbers count): EPtest parses every non-comment
  line with `conllu.parser.parse_line` (conllu 4.4.1), so multi-word-token range lines (`3-4`,
  UPOS `_`) and empty nodes (`5.1`) become tokens too. C2: they get items in `pos` (EWT v2.2 train:
  204,585 words + 22 empty nodes = the paper's 204,607). C3: a dependent's index is its line
  position but its head's is `HEAD - 1`, so after such a line `span2` points one token off.
  C4: `dep-pred` negatives come from a fresh `random.Random(0)` per arc, `sample(non_parents, 1)`,
  so the "random" token depends only on how many candidates there are (candidates sorted: Python
  3.10 iterated that set of small ints in ascending order; 3.11+ refuses to sample a set). C5:
  fields are split on a tab *or two or more spaces*, as `parse_line` does.
* ``strict`` (CoNLL-U as specified): only word lines (integer IDs) are tokens, heads index words
  by ID, range lines and empty nodes are checked and skipped; negatives come from one
  `random.Random(seed)` per file.

Anything else unexpected (a line with too few fields, a bad ID or HEAD, a head outside the
sentence, malformed JSON or spans) raises `DataError` naming the file and byte offset (of the
decompressed stream for `.gz`/`.bz2` input).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby
from pathlib import Path
from typing import Any, Literal, NamedTuple

from entbench.errors import DataError, UserError
from entbench.gc_pause import gc_paused
from entbench.readers.compressed.dumps import detect_compression, open_decompressed

Policy = Literal["eptest", "strict"]
CONLLU_TASKS = ("pos", "xpos", "dep-cls", "dep-pred")
#: EPtest's `_sample_negative_indices` uses `random.Random(0)`.
DEFAULT_NEGATIVE_SEED = 0

_EPTEST_FIELD_SPLIT = re.compile(r"\t| {2,}")  # conllu 4.4.1 `parse_line`
_ID_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_ID_EMPTY = re.compile(r"[0-9]+\.[1-9][0-9]*")
_HEAD = re.compile(r"0|-?[1-9][0-9]*")


class EPItem(NamedTuple):
    """One edge-probing target with its sentence (a NamedTuple: EWT train makes 200,000 of them)."""

    sentence_index: int
    target_index: int
    text: str
    span1: tuple[int, int]
    span2: tuple[int, int] | None
    span1_text: str
    span2_text: str | None
    labels: tuple[str, ...]
    label_is_list: bool = False
    info: str | None = None  # the sentence's `info` as JSON
    target_info: str | None = None  # the target's `info` as JSON

    @property
    def span_texts(self) -> tuple[str, ...]:
        """The span texts in order: one or two."""
        return (self.span1_text,) if self.span2_text is None else (self.span1_text, self.span2_text)


def read_input_bytes(path: str | Path) -> bytes:
    """The decompressed bytes of `path` (`.gz` and `.bz2` by their magic bytes)."""
    name = str(path)
    if not os.path.isfile(name):
        raise UserError(f"input file not found: {name}")
    compression = detect_compression(name)
    try:
        with open_decompressed(name, compression) as stream:
            return stream.read()
    except (OSError, EOFError, ValueError) as exc:
        raise DataError(f"cannot decompress ({exc})", path=name) from exc


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Lines without their newline (and a trailing CR, as universal newlines drop it), with offsets."""
    offset = 0
    for raw in data.split(b"\n"):
        yield offset, raw[:-1] if raw.endswith(b"\r") else raw
        offset += len(raw) + 1


def text_lines(data: bytes, path: str) -> Iterator[tuple[int, str]]:
    """Decoded lines with the byte offset of each (decoding the whole file at once is much faster)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 ({exc.reason})", path=path, offset=exc.start) from exc
    offset = 0
    for line in text.split("\n"):
        yield offset, line[:-1] if line.endswith("\r") else line
        offset += len(line.encode("utf-8")) + 1 if not line.isascii() else len(line) + 1


# --- jiant JSON lines --------------------------------------------------------------------------------
def read_jiant(path: str | Path) -> list[EPItem]:
    """Every target of a jiant edge-probing JSON-lines file (plain, `.gz` or `.bz2`), in file order."""
    name = str(path)
    data = read_input_bytes(name)
    with gc_paused():
        return _jiant_items(data, name)


def _jiant_items(data: bytes, name: str) -> list[EPItem]:
    items: list[EPItem] = []
    sentence = 0
    for offset, raw in _lines(data):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as exc:
            hint = " (CoNLL-U input needs --input-format conllu-*)" if raw[:1] in b"#0123456789" else ""
            raise DataError(f"not a JSON object{hint}: {exc}", path=name, offset=offset) from exc
        items.extend(_jiant_targets(record, sentence, name, offset))
        sentence += 1
    return items


def _jiant_targets(record: Any, sentence: int, path: str, offset: int) -> Iterator[EPItem]:
    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
        raise DataError('expected an object with a string "text"', path=path, offset=offset)
    targets = record.get("targets")
    if not isinstance(targets, list):
        raise DataError('expected a "targets" list', path=path, offset=offset)
    text: str = record["text"]
    tokens = text.split(" ")
    info = None if record.get("info") is None else json.dumps(record["info"], ensure_ascii=False)
    for k, target in enumerate(targets):
        where = f"target {k}"
        if not isinstance(target, dict):
            raise DataError(f"{where}: expected an object", path=path, offset=offset)
        span1 = _span(target.get("span1"), len(tokens), f"{where} span1", path, offset)
        span2 = None
        if target.get("span2") is not None:
            span2 = _span(target["span2"], len(tokens), f"{where} span2", path, offset)
        label = target.get("label")
        if isinstance(label, str):
            labels: tuple[str, ...] = (label,)
        elif isinstance(label, list) and label and all(isinstance(x, str) for x in label):
            labels = tuple(label)
        else:
            raise DataError(
                f'{where}: "label" must be a string or a list of strings', path=path, offset=offset
            )
        yield EPItem(
            sentence_index=sentence,
            target_index=k,
            text=text,
            span1=span1,
            span2=span2,
            span1_text=" ".join(tokens[span1[0] : span1[1]]),
            span2_text=None if span2 is None else " ".join(tokens[span2[0] : span2[1]]),
            labels=labels,
            label_is_list=isinstance(label, list),
            info=info,
            target_info=None
            if target.get("info") is None
            else json.dumps(target["info"], ensure_ascii=False),
        )


def _span(value: Any, n_tokens: int, where: str, path: str, offset: int) -> tuple[int, int]:
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )
    if not ok:
        raise DataError(
            f"{where}: expected [start, end] token indices, got {value!r}", path=path, offset=offset
        )
    start, end = value
    if not 0 <= start < end <= n_tokens:
        raise DataError(
            f"{where}: [{start}, {end}] is not a nonempty span of the sentence's {n_tokens} tokens",
            path=path,
            offset=offset,
        )
    return start, end


def jiant_lines(items: Iterable[EPItem]) -> Iterator[str]:
    """jiant JSON lines for `items`: consecutive items of one sentence become one record."""
    for _, group in groupby(items, key=lambda item: item.sentence_index):
        members = list(group)
        first = members[0]
        targets = []
        for item in members:
            target: dict[str, Any] = {"span1": list(item.span1)}
            if item.span2 is not None:
                target["span2"] = list(item.span2)
            target["label"] = list(item.labels) if item.label_is_list else item.labels[0]
            if item.target_info is not None:
                target["info"] = json.loads(item.target_info)
            targets.append(target)
        record: dict[str, Any] = {"text": first.text, "targets": targets}
        if first.info is not None:
            record["info"] = json.loads(first.info)
        yield json.dumps(record, ensure_ascii=False)


def write_jiant(items: Iterable[EPItem], path: str | Path) -> int:
    """Write `items` as a jiant JSON-lines file (atomically: temp file, then rename); returns lines."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    n = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in jiant_lines(items):
            f.write(line + "\n")
            n += 1
    os.replace(tmp, target)
    return n


# --- CoNLL-U -------------------------------------------------------------------------------------------
class _Token(NamedTuple):
    form: str
    upos: str
    xpos: str
    head: int | None  # 1-based head ID; 0 = root; None = no head ("_")
    deprel: str
    offset: int
    word: bool  # an integer ID: a word, not a multi-word token's range line or an empty node


#: A parsed CoNLL-U sentence: its `sent_id` (if any) and its tokens.
ConlluSentence = tuple[str | None, list[_Token]]


def read_conllu(
    path: str | Path,
    task: str,
    *,
    policy: Policy = "eptest",
    negative_seed: int = DEFAULT_NEGATIVE_SEED,
) -> list[EPItem]:
    """A CoNLL-U file (plain, `.gz` or `.bz2`) as edge-probing items of `task` (pos|xpos|dep-cls|dep-pred)."""
    _check_task(task, policy)
    name = str(path)
    with gc_paused():
        data = read_input_bytes(name)
        return conllu_items(_conllu_sentences(data, name, policy), task, name, policy, negative_seed)


def read_conllu_sentences(path: str | Path, *, policy: Policy = "eptest") -> list[ConlluSentence]:
    """A CoNLL-U file's parsed sentences, for `conllu_items` to make the items of several tasks from
    one parse (`read_conllu` of each task parses the file again, for half its time)."""
    _check_task("pos", policy)
    name = str(path)
    with gc_paused():
        return list(_conllu_sentences(read_input_bytes(name), name, policy))


def _check_task(task: str, policy: str) -> None:
    if task not in CONLLU_TASKS:
        raise UserError(f"unknown CoNLL-U task {task!r}; expected one of {', '.join(CONLLU_TASKS)}")
    if policy not in ("eptest", "strict"):
        raise UserError(f"unknown CoNLL-U policy {policy!r}; expected eptest or strict")


def conllu_items(
    sentences: Iterable[ConlluSentence],
    task: str,
    path: str,
    policy: Policy = "eptest",
    negative_seed: int = DEFAULT_NEGATIVE_SEED,
) -> list[EPItem]:
    """The items of `task` from the sentences of the CoNLL-U file `path` (parsed with `policy`)."""
    _check_task(task, policy)
    rng = random.Random(negative_seed)  # strict mode's one generator per file

    @functools.cache
    def fresh_picks(n: int) -> int:
        # `random.Random(seed).sample(candidates, 1)[0]` picks position `randbelow(n)` of the
        # (sorted) candidates, for any population; `range(n)` gives that position.
        return random.Random(negative_seed).sample(range(n), 1)[0]

    def pick(n_candidates: int) -> int:
        # C4: EPtest re-seeds for every arc, so its pick depends on the count only.
        return fresh_picks(n_candidates) if policy == "eptest" else rng.sample(range(n_candidates), 1)[0]

    items: list[EPItem] = []
    with gc_paused():
        for index, (sent_id, tokens) in enumerate(sentences):
            info = None if sent_id is None else json.dumps({"sent_id": sent_id}, ensure_ascii=False)
            text = " ".join(t.form for t in tokens)
            made = _targets(tokens, task, pick, path)
            forms = [t.form for t in tokens]
            # Positional construction: keyword arguments cost a third of the reading time here.
            items.extend(
                EPItem(
                    index,
                    k,
                    text,
                    span1,
                    span2,
                    forms[span1[0]],
                    None if span2 is None else forms[span2[0]],
                    labels,
                    False,
                    info,
                )
                for k, (span1, span2, labels) in enumerate(made)
            )
    return items


_Target = tuple[tuple[int, int], "tuple[int, int] | None", tuple[str, ...]]


def _targets(tokens: Sequence[_Token], task: str, pick: Callable[[int], int], path: str) -> list[_Target]:
    """(span1, span2, labels) of a sentence's items for `task`, in EPtest's order."""
    if task == "pos":
        return [((i, i + 1), None, (t.upos,)) for i, t in enumerate(tokens)]
    if task == "xpos":
        for t in tokens:
            if t.word and t.xpos == "_":
                # Many treebanks leave XPOS empty: every item would get one label, a 100% Mem-Exact.
                raise DataError(
                    "a word without XPOS ('_'): this file has no language-specific tags "
                    "(--input-format conllu-upos reads its UPOS)",
                    path=path,
                    offset=t.offset,
                )
        return [((i, i + 1), None, (t.xpos,)) for i, t in enumerate(tokens)]
    arcs = _arcs(tokens, path)
    if task == "dep-cls":
        return [((a, a + 1), (b, b + 1), (tokens[a].deprel,)) for a, b in arcs]
    made: list[_Target] = []
    parents: dict[int, set[int]] = {}
    for a, b in arcs:
        parents.setdefault(a, set()).add(b)
    for a, b in arcs:
        made.append(((a, a + 1), (b, b + 1), ("1",)))
        # EPtest: a token that is neither a parent of the dependent nor the dependent itself.
        excluded = sorted(parents[a] | {a})
        n_candidates = len(tokens) - len(excluded)
        if n_candidates > 0:
            neg = _nth_not_in(pick(n_candidates), excluded)
            made.append(((a, a + 1), (neg, neg + 1), ("0",)))
    return made


def _nth_not_in(k: int, excluded: Sequence[int]) -> int:
    """The `k`-th (0-based) non-negative integer not in the ascending list `excluded`."""
    for e in excluded:
        if k >= e:
            k += 1
    return k


def _arcs(tokens: Sequence[_Token], path: str) -> list[tuple[int, int]]:
    """(dependent index, head index) per token with a head; the root and `_` heads have none."""
    arcs = []
    for i, token in enumerate(tokens):
        if token.head is None or token.head == 0:
            continue
        head = token.head - 1  # C3: HEAD - 1, whatever the dependent's own position
        if head >= len(tokens):
            raise DataError(
                f"HEAD {token.head} is outside the sentence ({len(tokens)} tokens)",
                path=path,
                offset=token.offset,
            )
        arcs.append((i, head))
    return arcs


def _conllu_sentences(data: bytes, path: str, policy: Policy) -> Iterator[ConlluSentence]:
    """(sent_id, tokens) per sentence; sentences are separated by blank lines."""
    sent_id: str | None = None
    tokens: list[_Token] = []
    lines = 0
    for offset, line in text_lines(data, path):
        if not line[:1].isdigit():  # token lines, nearly all of them, start with their ID
            stripped = line.strip()
            if not stripped:
                if lines:
                    yield sent_id, tokens
                sent_id, tokens, lines = None, [], 0
                continue
            if stripped.startswith("#"):
                lines += 1
                key, sep, value = stripped[1:].partition("=")
                if sep and key.strip() == "sent_id":
                    sent_id = value.strip()
                continue
        lines += 1
        token = (
            _eptest_token(line, path, offset)
            if policy == "eptest"
            else _strict_token(line, tokens, path, offset)
        )
        if token is not None:
            tokens.append(token)
    if lines:
        yield sent_id, tokens


def _eptest_token(line: str, path: str, offset: int) -> _Token:
    # C5; without a double space the regex split is a tab split, which is much faster.
    fields = _EPTEST_FIELD_SPLIT.split(line) if "  " in line else line.split("\t")
    if len(fields) < 10:
        raise DataError(f"expected 10 CoNLL-U fields, found {len(fields)}", path=path, offset=offset)
    ident = fields[0]
    if not _valid_id(ident):
        raise DataError(f"invalid ID {ident!r}", path=path, offset=offset)
    head = _parse_head(fields[6], path, offset)
    if head is not None and head < 0:
        # conllu accepts it and EPtest would index from the sentence's end; refuse instead.
        raise DataError(f"negative HEAD {head}", path=path, offset=offset)
    word = ident.isascii() and ident.isdigit()
    return _Token(fields[1], fields[3], fields[4], head, fields[7], offset, word)


def _strict_token(line: str, tokens: Sequence[_Token], path: str, offset: int) -> _Token | None:
    fields = line.split("\t")
    if len(fields) != 10:
        raise DataError(
            f"expected 10 tab-separated CoNLL-U fields, found {len(fields)}", path=path, offset=offset
        )
    ident = fields[0]
    if not _valid_id(ident):
        raise DataError(f"invalid ID {ident!r}", path=path, offset=offset)
    if not (ident.isascii() and ident.isdigit()):
        return None  # a multi-word token's range line or an empty node: not a word
    if int(ident) != len(tokens) + 1:
        raise DataError(
            f"word ID {ident!r} out of sequence (expected {len(tokens) + 1})", path=path, offset=offset
        )
    head = _parse_head(fields[6], path, offset)
    if head is not None and head < 0:
        raise DataError(f"negative HEAD {head}", path=path, offset=offset)
    return _Token(fields[1], fields[3], fields[4], head, fields[7], offset, True)


def _valid_id(ident: str) -> bool:
    """An ID conllu accepts: a word (`7`), a range (`3-4`, increasing) or an empty node (`5.1`)."""
    if ident.isascii() and ident.isdigit():
        return ident == "0" or ident[0] != "0"
    range_match = _ID_RANGE.fullmatch(ident)
    if range_match is not None:
        return int(range_match[2]) > int(range_match[1])
    return _ID_EMPTY.fullmatch(ident) is not None


def _parse_head(value: str, path: str, offset: int) -> int | None:
    if value == "_":
        return None
    if value.isascii() and value.isdigit() and (value == "0" or value[0] != "0"):
        return int(value)
    if not _HEAD.fullmatch(value):
        raise DataError(f"invalid HEAD {value!r}", path=path, offset=offset)
    return int(value)
