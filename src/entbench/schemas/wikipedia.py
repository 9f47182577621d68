"""Normalized Wikipedia tables written by the XML dump scan (spec §3), sharded by `page_id`.

Offsets are Unicode code-point offsets into `pages.text` (Python `str` indices), end exclusive,
so `text[start:end] == anchor` for every link. Paragraphs are separated by exactly "\\n\\n" in
`text` (a paragraph never contains "\\n\\n"); `paragraph_starts` lists where each one begins.
"""

from __future__ import annotations

import pyarrow as pa

PAGES = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),  # as in the dump (namespace prefix included)
        pa.field("ns", pa.int32(), nullable=False),
        pa.field("revision_id", pa.int64()),
        pa.field("is_redirect", pa.bool_(), nullable=False),
        pa.field("redirect_target", pa.string()),  # normalized title the redirect points to
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
        pa.field("text", pa.string(), nullable=False),  # rendered plain text ("" for redirects)
        pa.field("paragraph_starts", pa.list_(pa.int32()), nullable=False),
    ]
)

LINKS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),  # position of the link in its page
        pa.field("target", pa.string(), nullable=False),  # as written in the wikitext
        pa.field("target_normalized", pa.string(), nullable=False),  # first letter case, spaces, no #section
        pa.field("anchor", pa.string(), nullable=False),  # text shown, link trail included
        pa.field("start", pa.int32(), nullable=False),  # code-point offsets into pages.text
        pa.field("end", pa.int32(), nullable=False),
        pa.field("paragraph", pa.int32(), nullable=False),  # index into pages.paragraph_starts
    ]
)
