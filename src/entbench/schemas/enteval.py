"""EntEval tables (Chen et al. 2019; spec §8).

* `wikient_descriptions.descriptions` (derived, sharded by `page_id`): every article's description,
  its first 100 word tokens (EntEval §4.3, "we only keep the first 100 word tokens at most as the
  description of a Wikipedia page"), tokens joined by one space, case as in the article.
* `wikient.wikient` (benchmarks, sharded by `target_page_id`): WikiEnt, one row per hyperlink of a
  sentence (§4.3, "we remove [sentences] without hyperlinks ... and duplicate those with multiple
  hyperlinks"). `sentence` is its word tokens joined by one space, so `sentence.split()` gives the
  tokens back; `mention_start`/`mention_end` are token offsets into them, end exclusive, and
  `mention` is always those tokens joined by one space (the anchor as tokenised).
* `enteval_<task>.lines` (benchmarks, one shard): the lines of the task's files in the EntEval
  loaders' formats (`ZeweiChu/EntEval:enteval/*.py`), `file` relative to the loaders' `task_path`.
* `enteval_<task>.matches`: how each entity name of a task source was matched to an article.
* `enteval_tasks.tasks`: which task was built, which was skipped and why.
"""

from __future__ import annotations

import pyarrow as pa

DESCRIPTIONS = pa.schema(
    [
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("is_disambiguation", pa.bool_(), nullable=False),
        pa.field("description", pa.string(), nullable=False),  # <= description_tokens tokens
        pa.field("num_tokens", pa.int32(), nullable=False),
    ]
)

WIKIENT = pa.schema(
    [
        pa.field("sentence", pa.string(), nullable=False),
        pa.field("mention_start", pa.int32(), nullable=False),  # token offsets into sentence.split()
        pa.field("mention_end", pa.int32(), nullable=False),  # exclusive
        pa.field("mention", pa.string(), nullable=False),  # " ".join(sentence.split()[start:end])
        pa.field("target_qid", pa.string()),  # null when the linked article has no Wikidata item
        pa.field("target_title", pa.string(), nullable=False),  # the linked article (redirects followed)
        pa.field("description", pa.string(), nullable=False),  # the linked article's description
        # Where the instance comes from: the unique key, and the join keys back to `wikipedia.links`.
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("link_ordinal", pa.int32(), nullable=False),
        pa.field("target_page_id", pa.int64(), nullable=False),
    ]
)

TASK_LINES = pa.schema(
    [
        pa.field("file", pa.string(), nullable=False),  # e.g. "KORE/all.txt", relative to task_path
        pa.field("line", pa.int64(), nullable=False),  # 0-based line number in the file
        pa.field("text", pa.string(), nullable=False),  # the line without its "\n"
    ]
)

#: How a task source's entity name was matched to a Wikipedia article (spec §8, EntEval §3.5: "we
#: automatically add Wikipedia descriptions to each entity").
MATCH_METHODS = (
    "exact",  # the name is an article title (MediaWiki title normalisation)
    "redirect",  # the name is a redirect to an article
    "casefold",  # an article title equal up to case
    "fuzzy",  # the nearest title by rapidfuzz, score >= min_score
    "unmatched",  # no article; best_title/best_score show the nearest miss
)

MATCHES = pa.schema(
    [
        pa.field("name", pa.string(), nullable=False),  # as written in the task source
        pa.field("method", pa.string(), nullable=False),  # one of MATCH_METHODS
        pa.field("score", pa.float64(), nullable=False),  # 100 for exact/redirect/casefold
        pa.field("page_id", pa.int64()),  # the matched article, null when unmatched
        pa.field("title", pa.string()),
        pa.field("best_title", pa.string()),  # the nearest title found by the fuzzy scorer
        pa.field("best_score", pa.float64()),
    ]
)

TASKS = pa.schema(
    [
        pa.field("task", pa.string(), nullable=False),  # e.g. "kore", "conll_yago"
        pa.field("stage", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # built | skipped_no_source
        pa.field("files", pa.list_(pa.string()), nullable=False),
        pa.field("lines", pa.int64(), nullable=False),
    ]
)
