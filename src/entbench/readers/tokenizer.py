"""spaCy's blank English pipeline with the rule-based sentencizer: the one tokenizer of natural
language text (WikiReading's release format, EntEval's words and sentences).

No statistical model is downloaded: `spacy.blank("en")` is the tokenizer alone, and the
`sentencizer` splits after `.`, `!`, `?` and similar tokens. spaCy is imported on first use
(loading it takes a second and most commands never need it), and the pipeline is built once per
process: it holds no state that changes what it returns.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def english_pipeline() -> Any:
    """The process's blank English pipeline with the sentencizer (spaCy's `Language`)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp
