"""spaCy's blank pipelines with the rule-based sentencizer: the one tokenizer of natural language
text (WikiReading's release format, EntEval's words and sentences, Hansel's sentence contexts on
wikis that are not Chinese).

No statistical model is downloaded: `spacy.blank(lang)` is the language's tokenizer alone (its
punctuation and abbreviation rules: "U.S." and "Mr." stay one token), and the `sentencizer` splits
after `.`, `!`, `?` and similar tokens. spaCy is imported on first use (loading it takes a second
and most commands never need it), and each pipeline is built once per process: it holds no state
that changes what it returns.

The sentencizer cuts after every full stop, including the one of an abbreviation the tokenizer
does not know: "ranked No. 1 in the world" became two sentences, "ranked No." and "1 in the
world." (a link across the cut is lost to WikiEnt). In the English pipeline,
`entbench_abbreviations`, after it, joins such a cut back: after one of `ABBREVIATIONS` and its
full stop, a number or a lower-case word does not start a sentence.
"""

from __future__ import annotations

import functools
from typing import Any

#: Abbreviations written with a full stop before a number or a lower-case word ("No. 1",
#: "Vol. 2", "pp. 3", "c. 1900", "b. 1950", "Fig. 4", "cf. the"), which the tokenizer splits off.
_ABBREVIATIONS = """
    No Nos no nos Vol Vols vol vols pp p ca c fl Fig Figs fig figs Op op Art art Ch ch Sec sec cf
    approx est Nr nr b d r ed eds trans pl Pl vs viz
"""
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())


def _join_abbreviations(doc: Any) -> Any:
    """Undo a sentence start right after an abbreviation's full stop (see the module docstring)."""
    from spacy.attrs import SENT_START

    # Only the sentence starts are looked at (a spaCy `Token` made for every token cost ~1 s per
    # demo-world build): 1 marks one in the array; clearing one changes no other's neighbours.
    starts = doc.to_array(SENT_START)
    for i in (starts == 1).nonzero()[0].tolist():
        if i < 2:
            continue
        token = doc[i]
        abbreviation, stop = doc[i - 2], doc[i - 1]
        if stop.text != "." or abbreviation.whitespace_ or abbreviation.text not in ABBREVIATIONS:
            continue
        if token.like_num or token.text[:1].islower():
            token.is_sent_start = False
    return doc


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
    from spacy.language import Language

    code = spacy_language(language)
    nlp = spacy.blank(code)
    nlp.add_pipe("sentencizer")
    if code == "en":  # `ABBREVIATIONS` are English ones
        if not Language.has_factory("entbench_abbreviations"):
            Language.component("entbench_abbreviations", func=_join_abbreviations)
        nlp.add_pipe("entbench_abbreviations")
    return nlp


def sentence_starts(text: str, language: str) -> list[int]:
    """Code-point offsets where the sentences of `text` start, by the language's sentencizer."""
    return [sentence.start_char for sentence in sentence_pipeline(language)(text).sents]
