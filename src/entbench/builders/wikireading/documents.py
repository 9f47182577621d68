"""Documents: which article an item's sitelink names, and the optional length cut.

Hewlett et al. 2016 §2.2: "Replacing each item with the text of the linked Wikipedia article
(discarding unlinked items) yields a dataset of ... (document, property, answer) instances." The
link is the item's sitelink to the configured site; sitelink titles and dump titles are compared
after MediaWiki's title normalization (underscores are spaces, runs of spaces collapse, and the
first letter is upper case on wikis with `$wgCapitalLinks`, as English and Chinese Wikipedia).
"""

from __future__ import annotations

import re

_SPACES = re.compile(r"[ _]+")
_WORD = re.compile(r"\S+")


def normalize_title(title: str) -> str:
    """MediaWiki's canonical form of a page title: "berlin_wall " -> "Berlin wall"."""
    text = _SPACES.sub(" ", title).strip()
    return text[:1].upper() + text[1:]


def truncate_words(text: str, max_words: int) -> str:
    """The text up to the end of its `max_words`-th whitespace-separated word (0 = no limit).

    Spacing and paragraph breaks inside the kept part are unchanged. The paper's models read the
    first 300 words (§4.1); the dataset itself keeps whole articles, hence the default 0.
    """
    if max_words <= 0:
        return text
    end = None
    for i, match in enumerate(_WORD.finditer(text), start=1):
        if i == max_words:
            end = match.end()
            break
    return text if end is None else text[:end]
