"""The entity KB a Hansel linker encodes: each entity's title, first paragraph and article link.

"We concatenate the title and the first paragraph in Chinese Wikipedia as an entity's description
for input of ψ" (Hansel §4.1); annotators "have access to its entity description (first paragraph
in Wikipedia) and the original Wikipedia link" (§3.3).

* The first paragraph is the page's rendered text (`wikipedia.pages.text`, whose paragraphs are
  separated by exactly one blank line) up to its first blank line, edge whitespace trimmed.
* The link is the article's URL on the wiki of the sitelink, its title written as MediaWiki writes
  it in a URL: spaces as underscores, then percent-encoded except for the characters MediaWiki's
  `wfUrlencode` leaves as they are.
"""

from __future__ import annotations

import re
import urllib.parse

from entbench.schemas.hansel import KB_TEXT_STATUSES

#: Characters MediaWiki keeps unencoded in an article URL (`wfUrlencode`), besides letters, digits
#: and `-_.~`.
URL_SAFE = ";:@$!*(),/~"
#: A Wikipedia's site id: its language code (underscores for hyphens) and `wiki`.
WIKIPEDIA_SITE = re.compile(r"([a-z][a-z0-9_]*)wiki")
#: Site ids of the same shape that are not Wikipedias.
NOT_WIKIPEDIAS = frozenset({"commonswiki", "metawiki", "specieswiki", "wikidatawiki", "mediawikiwiki"})
PARAGRAPH_SEP = "\n\n"


def first_paragraph(text: str) -> str:
    """The first paragraph of a page's rendered text ("" for a page without text)."""
    return text.partition(PARAGRAPH_SEP)[0].strip()


def wikipedia_host(site: str) -> str:
    """`zhwiki` -> `zh.wikipedia.org` (`zh_yuewiki` -> `zh-yue.wikipedia.org`); a ValueError for a
    site id that is not a Wikipedia's."""
    match = WIKIPEDIA_SITE.fullmatch(site)
    if match is None or site in NOT_WIKIPEDIAS:
        raise ValueError(f"site must be a Wikipedia's site id such as zhwiki, got {site!r}")
    return f"{match.group(1).replace('_', '-')}.wikipedia.org"


def article_url(site: str, title: str) -> str:
    """The article's URL: `https://zh.wikipedia.org/wiki/%E6%9F%8F%E6%9E%97` for 柏林 on zhwiki."""
    path = urllib.parse.quote(title.replace(" ", "_"), safe=URL_SAFE)
    return f"https://{wikipedia_host(site)}/wiki/{path}"


def text_status(has_sitelink: bool, page_found: bool, is_redirect: bool, text: str) -> str:
    """Why an entity has the text it has (`schemas.hansel.KB_TEXT_STATUSES`)."""
    if not has_sitelink:
        status = "no_sitelink"
    elif not page_found:
        status = "page_not_in_dump"
    elif is_redirect:
        status = "page_is_redirect"
    elif not text:
        status = "page_without_text"
    else:
        status = "page"
    assert status in KB_TEXT_STATUSES
    return status
