"""Which wiki pages are Hansel documents and which of their links are mentions (spec §5; Hansel §3.2).

"All new entities E_new are kept unseen during training. [...] we use 2021-03-01 Wikipedia dump and
hold out all entity pages mapped to E_new as well as all mentions with pagelinks to E_new
entities." (Hansel §3.2)

Documents are the dump's articles (namespace 0, not redirects): a disambiguation page (flagged by
the scan, or whose item is an instance of Q4167410) is dropped, the page of an E_new entity is held
out, every other article is kept, including articles whose page has no item or an item outside the
KB (their links still resolve). Links of kept documents become mentions when their target resolves
(`title_qid`, redirects followed) to an E_known entity; every other link is dropped under the first
reason that applies, in `schemas.hansel.LINK_STATUSES` order.
"""

from __future__ import annotations

RESOLVED = ("sitelink", "redirect")


def document_status(page_disambiguation: bool, item_disambiguation: bool, in_new: bool) -> str:
    """`kept`, `disambiguation` or `e_new_page` for one article."""
    if page_disambiguation or item_disambiguation:
        return "disambiguation"
    if in_new:
        return "e_new_page"
    return "kept"


def link_status(
    anchor: str,
    title_status: str | None,
    qid: str | None,
    target_disambiguation: bool,
    in_known: bool,
    in_new: bool,
) -> str:
    """Why a link is not a mention, or `known` when it is.

    `title_status` is the target's `title_qid.status` (None when the target is not in `title_qid`);
    `in_known`/`in_new` say where `qid` is in the KB (both false when it is in neither).
    """
    if not anchor.strip():
        return "empty_mention"
    if title_status is None:
        return "unresolved_missing"
    if qid is None or title_status not in RESOLVED:
        return f"unresolved_{title_status}"
    if target_disambiguation:
        return "disambiguation"
    if in_new:
        return "e_new"
    if not in_known:
        return "not_in_kb"
    return "known"
