"""spaCy's blank English pipeline with the rule-based sentencizer: the one tokenizer of natural
language text (WikiReading's release format, EntEval's words and sentences).

No statistical model is downloaded: `spacy.blank("en")` is the tokenizer alone, and the
`sentencizer` splits after `.`, `!`, `?` and similar tokens. spaCy is imported on first use
(loading it takes a second and most commands never need it), and the pipeline is built once per
process: it holds no state that changes what it returns.

The sentencizer cuts after every full stop, including the one of an abbreviation the tokenizer
does not know: "ranked No. 1 in the world" became two sentences, "ranked No." and "1 in the
world." (a link across the cut is lost to WikiEnt). `entbench_abbreviations`, after it, joins
such a cut back: after one of `ABBREVIATIONS` and its full stop, a number or a lower-case word
does not start a sentence.
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
    for i in range(2, len(doc)):
        token = doc[i]
        if not token.is_sent_start:
            continue
        abbreviation, stop = doc[i - 2], doc[i - 1]
        if stop.text != "." or abbreviation.whitespace_ or abbreviation.text not in ABBREVIATIONS:
            continue
        if token.like_num or token.text[:1].islower():
            token.is_sent_start = False
    return doc


@functools.cache
def english_pipeline() -> Any:
    """The process's blank English pipeline with the sentencizer (spaCy's `Language`)."""
    import spacy
    from spacy.language import Language

    if not Language.has_factory("entbench_abbreviations"):
        Language.component("entbench_abbreviations", func=_join_abbreviations)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entbench_abbreviations")
    return nlp
