"""spaCy's blank pipelines with the rule-based sentencizer: the one tokenizer of natural language
text (WikiReading's release format, EntEval's words and sentences, Hansel's sentence contexts on
wikis that are not Chinese).

No statistical model is downloaded: `spacy.blank(lang)` is the language's tokenizer alone (its
punctuation and abbreviation rules: "U.S." and "Mr." stay one token), and the `sentencizer` splits
after `.`, `!`, `?` and similar tokens. spaCy is imported on first use (loading it takes a second
and most commands never need it), and each pipeline is built once per process: it holds no state
that changes what it returns.
"""

from __future__ import annotations

import functools
from typing import Any

#: spaCy's multi-language pipeline: for a language spaCy has no rules for.
MULTI_LANGUAGE = "xx"
#: Languages whose spaCy tokenizer needs a package entbench does not install (sudachipy, mecab-ko,
#: pyvi, pythainlp): they get the multi-language pipeline, whatever happens to be installed, so
#: the sentences never depend on the machine.
NEEDS_EXTRA_PACKAGES = frozenset({"ja", "ko", "vi", "th"})


@functools.cache
def english_pipeline() -> Any:
    """The process's blank English pipeline with the sentencizer (spaCy's `Language`)."""
    return sentence_pipeline("en")


def spacy_language(language: str) -> str:
    """The spaCy language code of a wiki language (`en`, `de-formal` -> `de`), `xx` for a language
    spaCy has no rules for or whose rules need an extra package."""
    from spacy.util import get_lang_class

    code = language.split("-", maxsplit=1)[0].lower()
    if not code or code in NEEDS_EXTRA_PACKAGES:
        return MULTI_LANGUAGE
    try:
        get_lang_class(code)
    except ImportError:  # spaCy's "no language data for this code"
        return MULTI_LANGUAGE
    return code


@functools.cache
def sentence_pipeline(language: str) -> Any:
    """The process's blank pipeline of `language` (`spacy_language`) with the sentencizer."""
    import spacy

    nlp = spacy.blank(spacy_language(language))
    nlp.add_pipe("sentencizer")
    return nlp


def sentence_starts(text: str, language: str) -> list[int]:
    """Code-point offsets where the sentences of `text` start, by the language's sentencizer."""
    return [sentence.start_char for sentence in sentence_pipeline(language)(text).sents]
