"""Rare entity prediction (Long et al. 2017; EntEval §3.7; spec §8).

"Given a document with a blank in it, the task is to select an entity from a provided list of
entities with descriptions ... We randomly select 10k/4k/4k examples to construct train/valid/test
sets. For simplicity, we only keep instances with four candidate entities." (§3.7)

Source format read here: JSON lines, one instance each,
`{"id": "...", "context": "text with one **blank** marker", "candidates": [{"name": "...",
"description": "..."}, ...], "answer": <index of the right candidate>}` (the rare-entity corpus pairs
each candidate with its description, so no Wikipedia matching is needed).

Written as `rare/{train,valid,test}.txt`, blocks that `RareEval.loadFile` reads: the context line,
four `name<TAB>description` lines, the answer index, and an empty line closing the block (the
loader only keeps a block when it reads that empty line, so the last block has one too). The loader
keeps 150 words either side of the blank (`words[max(0, index-150):index+150]`); the context is
written already cut to that window, as one tab-free word sequence, so what is stored is what is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.jsonl import json_objects
from entbench.builders.enteval.tsv import clean, tsv, words_field

BLANK = "**blank**"
CANDIDATES = 4
WINDOW = 150
SPLITS = ("train", "valid", "test")
FILES = {split: f"rare/{split}.txt" for split in SPLITS}


@dataclass(frozen=True)
class RareInstance:
    """One rare-entity instance as read from the source."""

    id: str
    left: str
    right: str
    candidates: tuple[tuple[str, str], ...]
    answer: int
    line: int


def parse_rare(lines: Iterable[str]) -> list[RareInstance]:
    """Instances of a JSON-lines source (see the module docstring)."""
    instances: list[RareInstance] = []
    for number, record in json_objects(lines):
        context, candidates, answer = record.get("context"), record.get("candidates"), record.get("answer")
        if not isinstance(context, str) or context.count(BLANK) != 1:
            raise SourceError(number, f"context must be a string with exactly one {BLANK}")
        if not isinstance(candidates, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("description"), str)
            for c in candidates
        ):
            raise SourceError(number, "candidates must be a list of {name, description}")
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(candidates):
            raise SourceError(number, f"answer must index the candidates, got {answer!r}")
        left, right = context.split(BLANK)
        instances.append(
            RareInstance(
                str(record.get("id", number)),
                left,
                right,
                tuple((str(c["name"]), str(c["description"])) for c in candidates),
                answer,
                number,
            )
        )
    return instances


def window(left: Sequence[str], right: Sequence[str], size: int = WINDOW) -> list[str]:
    """The words around the blank as the loader keeps them: `size` before, the blank, `size - 1` after."""
    return [*left[max(0, len(left) - size) :], BLANK, *right[: max(0, size - 1)]]


def rare_block(
    instance: RareInstance, words: Callable[[str], list[str]], lowercase: bool, size: int = WINDOW
) -> list[str] | None:
    """The block's lines (empty line included), or None if a name or description has no word."""

    def norm(text: str) -> list[str]:
        found = words(text)
        return [w.lower() for w in found] if lowercase else found

    context = window(norm(instance.left), norm(instance.right), size)
    lines = [words_field(context)]
    for name, description in instance.candidates:
        name_words, description_words = clean(name), norm(description)
        if not name_words or not description_words:
            return None
        lines.append(tsv(name_words, " ".join(description_words)))
    return [*lines, str(instance.answer), ""]
