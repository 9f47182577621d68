"""Derived tables of the alias pipeline: title -> QID, the alias table and mention statistics (spec §3-§4).

`title_qid` is sharded by `title`; `alias_table` and `mention_stats` are sharded by `mention`
(xxh64 of the normalised mention), so every candidate of a mention, and its statistics, are in
the same shard number of both tables.
"""

from __future__ import annotations

import pyarrow as pa

#: Why a title does or does not resolve to a QID (spec §3 "Title -> QID").
TITLE_STATUSES = (
    "sitelink",  # the title itself has a sitelink to the site
    "redirect",  # reached a title with a sitelink through 1..max_hops redirects
    "redirect_loop",  # the redirect chain comes back to a title it passed
    "redirect_too_deep",  # still a redirect after max_hops hops
    "special_namespace",  # the (final) title is outside the main namespace
    "no_sitelink",  # the page exists in the dump but no item links to it
    "red_link",  # no page of that title in the dump and no sitelink
)

TITLE_QID = pa.schema(
    [
        pa.field("title", pa.string(), nullable=False),  # normalised title (links' target_normalized)
        pa.field("qid", pa.string()),  # null unless status is sitelink or redirect
        pa.field("status", pa.string(), nullable=False),  # one of TITLE_STATUSES
        pa.field("hops", pa.int32(), nullable=False),  # redirects followed (0 when none)
        pa.field("final_title", pa.string(), nullable=False),  # where the redirect chain ends
        pa.field("page_id", pa.int64()),  # the final title's page in the dump, if any
        pa.field("is_disambiguation", pa.bool_(), nullable=False),  # final page flagged, or QID P31 Q4167410
        pa.field("link_count", pa.int64(), nullable=False),  # links in the dump whose target is `title`
    ]
)

#: AT-base (Hansel §3.1, appendix A; spec §4): count = link_count + title_weight * title_flag
#: + redirect_weight * redirect_flag; P(e|m) = count / sum over the mention's candidates.
ALIAS_TABLE = pa.schema(
    [
        pa.field("mention", pa.string(), nullable=False),  # normalised mention
        pa.field("qid", pa.string(), nullable=False),
        pa.field("link_count", pa.int64(), nullable=False),  # anchors m linking (after redirects) to e
        pa.field("title_flag", pa.bool_(), nullable=False),  # m is e's page title
        pa.field("redirect_flag", pa.bool_(), nullable=False),  # m is a redirect to e
        pa.field("count", pa.int64(), nullable=False),
        pa.field("p_e_given_m", pa.float64(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),  # 1 = most likely; ties by QID number
    ]
)

#: P(unlinked|m) (Hansel appendix A): occurrences of m in article text outside any link over all
#: occurrences (exact, untokenised, longest match wins); plus documents with m linked / unlinked.
MENTION_STATS = pa.schema(
    [
        pa.field("mention", pa.string(), nullable=False),
        pa.field("linked_occurrences", pa.int64(), nullable=False),
        pa.field("unlinked_occurrences", pa.int64(), nullable=False),
        pa.field("p_unlinked", pa.float64()),  # null when m never occurs
        pa.field("docs_linked", pa.int64(), nullable=False),
        pa.field("docs_unlinked", pa.int64(), nullable=False),
    ]
)
