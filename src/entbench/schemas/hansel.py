"""Hansel tables (spec §5; Hansel §3.2-3.4, appendix A).

* `hansel_links` (derived, sharded by `page_id` like the Wikipedia scan): every ns-0 article of
  the wiki's dump (zhwiki in the paper) as a document with its status, and every link of a kept
  document with the QID it resolves to and whether it becomes a mention (`status = "known"`) or
  why not.
* `hansel.train|validation` (benchmarks, sharded by `page_id`): one row per mention in the
  official record shape (`id, text, start, end, mention, gold_id`) plus where it comes from.
* `hansel_corpus` (derived, sharded by `doc_id`): the raw few-shot corpus, Simplified, and every
  alias-table match in it (sharded by `key`, so all matches of a phrase are in one shard).
* `hansel_fewshot.fewshot_candidates` / `hansel_zeroshot.zeroshot_pool` (benchmarks, one shard):
  what annotators get (Hansel §3.3, §3.4), each entity with its first paragraph and article link.
* `hansel_kb.kb` (benchmarks, sharded by `id`): the entity KB a linker encodes, E_known ∪ E_new
  with their title and first paragraph on the wiki (Hansel §3.3, §4.1).

Offsets are Unicode code-point offsets (Python `str` indices), end exclusive, so
`text[start:end] == mention` for every row.
"""

from __future__ import annotations

import pyarrow as pa

#: The official record keys, in the official order (spec §5; `hansel.readme-example.jsonl`).
RECORD_KEYS = ("id", "text", "start", "end", "mention", "gold_id")
#: Test-style records (Hansel-FS/ZS releases) add these two keys at the end.
TEST_RECORD_KEYS = (*RECORD_KEYS, "source", "domain")
#: Hansel-FS/ZS gold labels of a mention whose entity is not in the KB: NIL with its coarse type
#: (Hansel §3.3: annotators "label a NIL entity with its coarse type").
NIL_LABELS = ("NIL_PER", "NIL_LOC", "NIL_ORG", "NIL_EVENT", "NIL_OTHER")
#: The rows of the entity KB (`hansel_kb`, `kb.jsonl`), in this order.
KB_KEYS = ("id", "title", "text", "url", "label", "description", "aliases", "type", "split")
#: `kb.split`: the entity's set (Hansel §3.1).
KNOWN, NEW = "known", "new"

#: `documents.status` values; only `kept` documents contribute mentions.
DOCUMENT_STATUSES = ("kept", "disambiguation", "e_new_page")
#: `links.status` values, in the order they are tested; only `known` links become mentions.
LINK_STATUSES = (
    "empty_mention",  # the anchor is empty or whitespace
    "unresolved_red_link",  # title_qid statuses other than sitelink/redirect, prefixed
    "unresolved_no_sitelink",
    "unresolved_redirect_loop",
    "unresolved_redirect_too_deep",
    "unresolved_special_namespace",
    "unresolved_missing",  # the target is not in title_qid at all (should not happen)
    "disambiguation",  # the target page or item is a disambiguation page
    "e_new",  # resolves to an E_new entity: held out (Hansel §3.2)
    "not_in_kb",  # resolves to an item outside E_known ∪ E_new (filtered or no page on the wiki)
    "known",  # resolves to an E_known entity: a training mention
)

DOCUMENTS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("qid", pa.string()),  # the page's own item (title_qid), if any
        pa.field("in_kb", pa.bool_(), nullable=False),  # the page's item is in E_known ∪ E_new
        pa.field("status", pa.string(), nullable=False),  # one of DOCUMENT_STATUSES
        pa.field("links", pa.int32(), nullable=False),  # article links of the page
        pa.field("mentions", pa.int32(), nullable=False),  # links with status `known` (0 unless kept)
    ]
)

LINKS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),  # the link's position in its page (scan)
        pa.field("target", pa.string(), nullable=False),  # normalised target title
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),  # offsets into the page text (scan)
        pa.field("end", pa.int32(), nullable=False),
        pa.field("qid", pa.string()),  # what the target resolves to, if anything
        pa.field("status", pa.string(), nullable=False),  # one of LINK_STATUSES
    ]
)

#: train / validation rows: the official record plus provenance columns.
EXAMPLES = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),  # hansel-train-N / hansel-validation-N
        pa.field("text", pa.string(), nullable=False),  # the context, Simplified
        pa.field("start", pa.int32(), nullable=False),  # mention offsets into `text`
        pa.field("end", pa.int32(), nullable=False),
        pa.field("mention", pa.string(), nullable=False),  # == text[start:end]
        pa.field("gold_id", pa.string(), nullable=False),  # an E_known QID
        pa.field("example_index", pa.int64(), nullable=False),  # N of the id: page_id order, then link order
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),  # the link's ordinal in its page
        pa.field("context_start", pa.int32(), nullable=False),  # where `text` starts in the page text
    ]
)

#: The few-shot corpus as read: one row per `{"id", "text"}` line (duplicates of an id dropped).
CORPUS_DOCS = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("line", pa.int64(), nullable=False),  # 1-based line number in the corpus file
        pa.field("text", pa.string(), nullable=False),  # Simplified (offsets = the raw text's)
    ]
)

#: Alias-table matches in the corpus (Hansel appendix A), before any filter.
CORPUS_MATCHES = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),  # the alias-table mention (normalised)
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),  # offsets into CORPUS_DOCS.text
        pa.field("end", pa.int32(), nullable=False),
    ]
)

#: One alias-table candidate shown to annotators (Hansel §3.3: "they select among alias table
#: candidates"), with the entity's label and description in the configured language, and what
#: annotators read of it: "its entity description (first paragraph in Wikipedia) and the original
#: Wikipedia link" (`hansel_kb`).
CANDIDATE = pa.struct(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("p_e_given_m", pa.float64(), nullable=False),  # the alias table's prior
        pa.field("rank", pa.int32(), nullable=False),  # rank in the alias table (1 = AT@1 overall)
        pa.field("label", pa.string()),
        pa.field("description", pa.string()),
        pa.field("title", pa.string()),  # the wiki's title, Simplified on zhwiki (null without a sitelink)
        pa.field("text", pa.string(), nullable=False),  # first paragraph, Simplified ("" without a page)
        pa.field("url", pa.string()),  # the wiki's article (null without a sitelink)
    ]
)

FEWSHOT = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),  # hansel-fewshot-N
        pa.field("text", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("mention", pa.string(), nullable=False),  # == text[start:end]
        pa.field("example_index", pa.int64(), nullable=False),  # N of the id
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("doc_start", pa.int32(), nullable=False),  # where `text` starts in the document
        pa.field("key", pa.string(), nullable=False),  # the alias-table mention matched
        pa.field("criterion", pa.string(), nullable=False),  # uniform | ambiguous (appendix A)
        pa.field("occurrences", pa.int64(), nullable=False),  # matches of the phrase in the corpus
        pa.field("p_unlinked", pa.float64()),  # P(unlinked|m); null if m never occurs in Wikipedia
        pa.field("candidates_in_table", pa.int32(), nullable=False),  # all alias-table candidates
        # E_known candidates in alias-table order (at most `max_candidates`).
        pa.field("candidates", pa.list_(CANDIDATE), nullable=False),
        pa.field("at1", pa.string(), nullable=False),  # the E_known candidate with the highest prior
        pa.field("at1_p", pa.float64(), nullable=False),
    ]
)

ZEROSHOT = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),  # hansel-zeroshot-N, N = pool_index
        pa.field("pool_index", pa.int64(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),  # an E_new entity
        pa.field("title", pa.string()),  # its page title on the site (sitelink), what annotators search
        pa.field("label", pa.string()),
        pa.field("description", pa.string()),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),  # Wikidata aliases, dump order
        pa.field("coarse", pa.string(), nullable=False),  # PER | LOC | ORG | EVENT | OTHER
        pa.field("criterion", pa.string(), nullable=False),  # uniform | balanced (Hansel §3.4)
        pa.field("text", pa.string(), nullable=False),  # first paragraph, Simplified ("" without a page)
        pa.field("url", pa.string()),  # the wiki's article (null without a sitelink)
    ]
)

#: The entity KB (`hansel_kb.kb`): `KB_KEYS` plus where the text comes from.
KB = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),  # QID
        pa.field("title", pa.string()),  # its title on the wiki (sitelink), Simplified on zhwiki, or null
        pa.field("text", pa.string(), nullable=False),  # the page's first paragraph (Simplified on zhwiki)
        pa.field("url", pa.string()),  # https://<host>/wiki/<title> of the wiki; null without a sitelink
        pa.field("label", pa.string()),  # Wikidata label and description, as the dump has them
        pa.field("description", pa.string()),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),  # Wikidata aliases, dump order
        pa.field("type", pa.string(), nullable=False),  # coarse type: PER | LOC | ORG | EVENT | OTHER
        pa.field("split", pa.string(), nullable=False),  # known | new
        pa.field("page_id", pa.int64()),  # the wiki's page the text comes from
        pa.field("text_status", pa.string(), nullable=False),  # one of KB_TEXT_STATUSES
    ]
)
#: Why an entity has the text it has: `text` from its page, or why it has none.
KB_TEXT_STATUSES = ("page", "no_sitelink", "page_not_in_dump", "page_is_redirect", "page_without_text")
