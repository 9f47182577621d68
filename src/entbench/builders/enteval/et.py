"""ET: entity typing on the ultra-fine entity typing crowd data (EntEval §3.1; Choi et al. 2018;
spec §8).

"We use the annotated ultra-fine entity typing dataset of Choi et al. (2018) with standard data
splits" (§3.1; Table 1: 1,998 / 1,998 / 1,998 instances, 10,331 types). The release's `crowd/`
directory holds `train.json`, `dev.json` and `test.json`, one JSON object a line:

    {"annot_id": …, "mention_span": "the company", "left_context_token": [tokens…],
     "right_context_token": [tokens…], "y_str": ["organization", "company", …]}

and `ontology/types.txt` the type vocabulary, one type a line. Every example is kept in its split.
The sentence is the left context, the mention's tokens and the right context; a token holding a
character Python counts as whitespace (the release has U+00A0 inside tokens) is cut there, as the
loaders' `str.split()` would cut it, and the mention's offsets count the cut tokens.

Written as `ET/{train,valid,test}.txt` (the dev split named `valid`, as `ETEval` opens it) and
`ET/labels.txt`, read by `ETEval.loadFile` as `line.strip().split("\\t")`: the sentence (words
joined by spaces), `start`, `end` (token offsets, end exclusive: `sentence.split()[start:end]` is
the mention), then the example's types; `labels.txt` is the types file, one type a line, which
`ETEval.load_labels` turns into the label ids (a type missing from it would stop the loader, so an
example's type not in the types file is a data error).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.jsonl import json_objects
from entbench.builders.enteval.tokens import safe_words
from entbench.builders.enteval.tsv import FieldError, check_field, tsv, words_field

#: The release's split files and the files the loader opens for them.
SPLITS = {"train": "train.json", "dev": "dev.json", "test": "test.json"}
FILES = {"train": "ET/train.txt", "dev": "ET/valid.txt", "test": "ET/test.txt"}
LABELS_FILE = "ET/labels.txt"


@dataclass(frozen=True)
class TypedMention:
    """One crowd example: its tokens as given, the mention's tokens and its types."""

    annot_id: str
    left: tuple[str, ...]
    mention: tuple[str, ...]
    right: tuple[str, ...]
    types: tuple[str, ...]
    line: int


def parse_types(lines: Iterable[str]) -> list[str]:
    """The types file: one loader-safe type a line, no duplicate (a trailing empty line ends it)."""
    types: list[str] = []
    seen: set[str] = set()
    blank_at = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line:
            blank_at = blank_at or number
            continue
        if blank_at:
            raise SourceError(blank_at, "an empty line inside the types file")
        try:
            check_field(line)
        except FieldError as exc:
            raise SourceError(number, f"type {line!r} is not one field without tabs or outer spaces") from exc
        if line in seen:
            raise SourceError(number, f"type {line!r} is listed twice")
        seen.add(line)
        types.append(line)
    return types


def _tokens(record: dict[str, object], key: str, number: int) -> tuple[str, ...]:
    value = record.get(key)
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise SourceError(number, f"{key} must be a list of strings")
    return tuple(str(t) for t in value)


def parse_crowd(lines: Iterable[str]) -> list[TypedMention]:
    """The examples of one crowd split file (JSON lines; empty lines skipped)."""
    examples: list[TypedMention] = []
    for number, record in json_objects(lines):
        mention = record.get("mention_span")
        if not isinstance(mention, str):
            raise SourceError(number, "mention_span must be a string")
        examples.append(
            TypedMention(
                str(record.get("annot_id", number)),
                _tokens(record, "left_context_token", number),
                tuple(mention.split(" ")),
                _tokens(record, "right_context_token", number),
                _tokens(record, "y_str", number),
                number,
            )
        )
    return examples


@dataclass(frozen=True)
class EtLine:
    """A loader line and what writing it changed: tokens holding whitespace (cut there, or dropped
    when nothing else is in them), types listed twice (written once)."""

    text: str
    tokens_with_whitespace: int
    duplicate_types: int


def drop_reason(example: TypedMention) -> str | None:
    """Why an example cannot be written (`empty_mention`, `no_type`), or None."""
    if not safe_words(example.mention):
        return "empty_mention"
    if not example.types:
        return "no_type"
    return None


def et_line(example: TypedMention, lowercase: bool) -> EtLine:
    """The loader line of an example that `drop_reason` keeps."""
    given = (example.left, example.mention, example.right)
    parts = [safe_words(p) for p in given]
    changed = sum(1 for p in given for t in p if t.split() != [t])
    types = list(dict.fromkeys(example.types))
    words = [w for p in parts for w in p]
    if lowercase:
        words = [w.lower() for w in words]
    start = len(parts[0])
    end = start + len(parts[1])
    return EtLine(
        tsv(words_field(words), str(start), str(end), *types), changed, len(example.types) - len(types)
    )


def check_types(examples: Sequence[TypedMention], known: set[str]) -> None:
    """A `SourceError` at the first example with a type the types file does not list."""
    for example in examples:
        for type_ in example.types:
            if type_ not in known:
                raise SourceError(example.line, f"type {type_!r} is not in the types file")
