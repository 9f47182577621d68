"""The edge-probing input formats `entbench filter mem --input-format` reads, in one table.

Each format names the reader and the task that turn a split into items (`EPItem`):

| format | file | item, label |
|---|---|---|
| `jiant` | jiant edge-probing JSON lines | each target as written |
| `conllu-upos` | CoNLL-U (or CoNLL-X) | a token, its UPOS |
| `conllu-xpos` | CoNLL-U (or CoNLL-X) | a token, its XPOS (PTB tags in EWT and converted PTB) |
| `conllu-deprel` | CoNLL-U (or CoNLL-X) | a (dependent, head) pair, the relation |
| `conllu-dep-pred` | CoNLL-U (or CoNLL-X) | a pair, "1" for an arc and "0" for a seeded non-arc |
| `conll2003-ner` | CoNLL-2003 `WORD POS CHUNK NER` | a token, its NER tag in IOB2 |
| `conll2000-chunk` | CoNLL-2000 `WORD POS CHUNK` | a token, its chunk tag in IOB2 |
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from entbench.errors import UserError
from entbench.readers.edge_probing.conll import read_conll_tags
from entbench.readers.edge_probing.items import DEFAULT_NEGATIVE_SEED, EPItem, Policy, read_conllu, read_jiant

#: `--input-format` value -> (reader, its task or layout): `jiant`, `conllu` or `conll`.
INPUT_FORMATS: Mapping[str, tuple[str, str]] = {
    "jiant": ("jiant", ""),
    "conllu-upos": ("conllu", "pos"),
    "conllu-xpos": ("conllu", "xpos"),
    "conllu-deprel": ("conllu", "dep-cls"),
    "conllu-dep-pred": ("conllu", "dep-pred"),
    "conll2003-ner": ("conll", "conll2003-ner"),
    "conll2000-chunk": ("conll", "conll2000-chunk"),
}


def read_edge_probing(
    path: str | Path,
    input_format: str,
    *,
    policy: Policy = "eptest",
    negative_seed: int = DEFAULT_NEGATIVE_SEED,
) -> list[EPItem]:
    """The items of one split in `input_format`; `policy` and `negative_seed` apply to CoNLL-U only."""
    if input_format not in INPUT_FORMATS:
        raise UserError(f"unknown input format {input_format!r}; expected one of {', '.join(INPUT_FORMATS)}")
    reader, task = INPUT_FORMATS[input_format]
    if reader == "jiant":
        return read_jiant(path)
    if reader == "conll":
        return read_conll_tags(path, task)
    return read_conllu(path, task, policy=policy, negative_seed=negative_seed)
