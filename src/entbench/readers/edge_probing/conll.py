"""CoNLL-2003 NER and CoNLL-2000 chunking column files as edge-probing items.

Two of the paper's Table 2 datasets (Ray Choudhury & Kalra 2023; data of Liu et al. 2019) come
as whitespace-separated column files, one token a line, a blank line after each sentence:

* ``conll2003-ner``: ``WORD POS CHUNK NER`` (CoNLL-2003, English), ``-DOCSTART- -X- -X- O`` before
  each article; the distributed files tag in IOB1 (``I-`` everywhere inside an entity, ``B-`` only
  for an entity that directly follows one of the same type);
* ``conll2000-chunk``: ``WORD POS CHUNK`` (CoNLL-2000), tagged in IOB2 (``B-`` starts each chunk).

Each token is one item (a one-token span, as EPtest's converters build them) whose label is its
last column in IOB2: IOB1 is converted (an ``I-X`` that does not continue an ``X`` entity starts
one, ``B-X``); IOB2 input is left as it is, since the conversion changes nothing there. (EPtest's
`Conll2003NER` converter labels tokens with the file's tags as they are, IOB1 for the distributed
CoNLL-2003 files; IOB2 makes every entity's first token ``B-``, whatever its neighbour.) A token
whose tag was changed keeps the file's tag in its target ``info`` (``{"tag": "I-PER"}``), which the
jiant output carries. Blank lines and ``-DOCSTART-`` lines end a sentence and are not tokens.

A line with another number of fields, or a tag that is not ``O``, ``B-TYPE`` or ``I-TYPE``, raises
`DataError` naming the file and byte offset (of the decompressed stream for `.gz`/`.bz2`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from entbench.errors import DataError, UserError
from entbench.gc_pause import gc_paused
from entbench.readers.edge_probing.items import EPItem, read_input_bytes, text_lines

DOCSTART = "-DOCSTART-"
_TAG = re.compile(r"O|[BI]-\S+")


@dataclass(frozen=True)
class ColumnLayout:
    """A CoNLL column file: its columns in order; the last one is the tag an item is labelled with."""

    columns: tuple[str, ...]
    scheme: str  # the tag scheme the distributed files use

    @property
    def tag_column(self) -> str:
        """The column whose tag labels a token."""
        return self.columns[-1]


LAYOUTS: Mapping[str, ColumnLayout] = {
    "conll2003-ner": ColumnLayout(("WORD", "POS", "CHUNK", "NER"), "IOB1"),
    "conll2000-chunk": ColumnLayout(("WORD", "POS", "CHUNK"), "IOB2"),
}


def iob2(tags: Sequence[str]) -> list[str]:
    """One sentence's IOB tags in IOB2: an ``I-X`` not preceded by ``B-X`` or ``I-X`` becomes ``B-X``.

    In IOB1 a ``B-X`` only separates two adjacent ``X`` entities, so it stays a beginning."""
    out: list[str] = []
    previous = "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            out.append("B-" + tag[2:])
        else:
            out.append(tag)
        previous = tag
    return out


def read_conll_tags(path: str | Path, layout: str) -> list[EPItem]:
    """Every token of a CoNLL-2003/CoNLL-2000 file (plain, `.gz` or `.bz2`) as an item, in file order."""
    if layout not in LAYOUTS:
        raise UserError(f"unknown CoNLL column layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    name = str(path)
    data = read_input_bytes(name)
    with gc_paused():
        return _items(data, name, LAYOUTS[layout])


def _items(data: bytes, name: str, layout: ColumnLayout) -> list[EPItem]:
    items: list[EPItem] = []
    for index, tokens in enumerate(_sentences(data, name, layout)):
        forms = [form for form, _ in tokens]
        tags = [tag for _, tag in tokens]
        text = " ".join(forms)
        for k, (form, given, tag) in enumerate(zip(forms, tags, iob2(tags), strict=True)):
            info = None if given == tag else json.dumps({"tag": given})
            items.append(EPItem(index, k, text, (k, k + 1), None, form, None, (tag,), False, None, info))
    return items


def _sentences(data: bytes, name: str, layout: ColumnLayout) -> Iterator[list[tuple[str, str]]]:
    """(word, tag) per token of each sentence; blank and `-DOCSTART-` lines end a sentence."""
    n_fields = len(layout.columns)
    tokens: list[tuple[str, str]] = []
    for offset, line in text_lines(data, name):
        fields = line.split()
        if not fields or fields[0] == DOCSTART:
            if tokens:
                yield tokens
            tokens = []
            continue
        if len(fields) != n_fields:
            raise DataError(
                f"expected {n_fields} whitespace-separated fields ({' '.join(layout.columns)}), "
                f"found {len(fields)}",
                path=name,
                offset=offset,
            )
        tag = fields[-1]
        if not _TAG.fullmatch(tag):
            raise DataError(
                f"{layout.tag_column} tag {tag!r} is not O, B-TYPE or I-TYPE", path=name, offset=offset
            )
        tokens.append((fields[0], tag))
    if tokens:
        yield tokens


def converted_tags(items: Sequence[EPItem]) -> int:
    """How many items' tags the IOB1 -> IOB2 conversion changed (their target `info` has the old tag)."""
    return sum(1 for item in items if item.target_info is not None)
