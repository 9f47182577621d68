"""WikiReading Recycled lines (Dwojak et al. 2020; `applicaai/multi-property-extraction`).

Multi-property extraction: one line per article with all its properties. As the authors' loader
(`tutorial/tutorial_scripts/prepare_training_data_task.py`) reads them:

* `in.tsv`: `<property names>\\t<document>`; property names are space-separated with their own
  spaces written as "_"; the document marks paragraph, sentence and line breaks with " <EOP> ",
  " <EOS> " and " <EOL> " (the loader turns each back into a space) and has no tabs or newlines;
* `expected.tsv`: space-separated `name=value` items, one per answer value, spaces in names and
  values written as "_".

Directory names follow the Gonito challenge layout of the release: `train`, `dev-0`, `test-A`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from entbench.builders.wikireading.release import Tokenizer

SPLIT_DIRS = {"train": "train", "valid": "dev-0", "test": "test-A"}

_WHITESPACE = re.compile(r"\s+")


def underscored(text: str) -> str:
    """Spaces (any whitespace run) as "_", as the Recycled files write names and values."""
    return _WHITESPACE.sub("_", text.strip())


def document_field(text: str, tokenizer: Tokenizer) -> str:
    """The document with <EOP>/<EOS>/<EOL> markers and no tab or newline."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        if not paragraph.strip():
            continue
        sentences = []
        for start, end in tokenizer.sentences(paragraph):
            lines = [_WHITESPACE.sub(" ", line).strip() for line in paragraph[start:end].split("\n")]
            sentence = " <EOL> ".join(line for line in lines if line)
            if sentence:
                sentences.append(sentence)
        paragraphs.append(" <EOS> ".join(sentences))
    return " <EOP> ".join(p for p in paragraphs if p)


def in_line(property_labels: Sequence[str], document: str, tokenizer: Tokenizer) -> str:
    """One `in.tsv` line (without the newline)."""
    names = " ".join(underscored(label) for label in property_labels)
    return f"{names}\t{document_field(document, tokenizer)}"


def expected_line(answers: Sequence[tuple[str, Sequence[str]]]) -> str:
    """One `expected.tsv` line from (property label, answer values) pairs, in order."""
    return " ".join(
        f"{underscored(label)}={underscored(value)}" for label, values in answers for value in values
    )
