"""WikiReading tables (spec §6; Hewlett et al. 2016 §2).

* `wikireading_triples` (derived, sharded by `qid` like the Wikidata tables): one row per
  (item, property) of an item with a sitelink on the configured site: its answer set, or why it
  cannot be an instance.
* `wikireading_instances` (derived, sharded by the normalized article title): the triples joined
  with their article's plain text.
* `wikireading.train|valid|test` (benchmarks, co-partitioned with the instances): the released
  shape `key, document_id, qid, property, property_label, question, answers, document`.
* `wikireading_stats.property_stats` (benchmarks, one shard): per-property statistics (§2.4–2.5).
"""

from __future__ import annotations

import pyarrow as pa

#: Rows that cannot become instances stay in the table with their `drop_reason`
#: (`property_without_label`, `no_renderable_value`), so the join with the articles can count every
#: loss in the paper's order: unlinked items first (§2.2), then labels and values.
TRIPLES = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("property", pa.string(), nullable=False),
        pa.field("property_label", pa.string()),  # null when the property has no label
        # The answer set: rendered values in statement order, duplicates removed (spec §6).
        pa.field("answers", pa.list_(pa.string()), nullable=False),
        # The Wikidata datatype of the values (`time` makes a date property, Table 3); null if unknown.
        pa.field("datatype", pa.string()),
        pa.field("site_title", pa.string(), nullable=False),  # sitelink title on `site`, as written
        pa.field("drop_reason", pa.string()),  # null for a usable instance
    ]
)

INSTANCES = pa.schema(
    [
        pa.field("document_id", pa.int64(), nullable=False),  # Wikipedia page id of the article
        pa.field("title", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("property", pa.string(), nullable=False),
        pa.field("property_label", pa.string(), nullable=False),
        pa.field("answers", pa.list_(pa.string()), nullable=False),
        pa.field("document", pa.string(), nullable=False),  # article plain text, maybe truncated
    ]
)

#: One split of the benchmark (`train`, `valid`, `test`): exactly the columns of issue 6.
SPLIT = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),  # "<qid>-<property>", unique over all splits
        pa.field("document_id", pa.int64(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("property", pa.string(), nullable=False),
        pa.field("property_label", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),  # the property label acts as the question
        pa.field("answers", pa.list_(pa.string()), nullable=False),
        pa.field("document", pa.string(), nullable=False),
    ]
)

PROPERTY_STATS = pa.schema(
    [
        pa.field("property", pa.string(), nullable=False),
        pa.field("property_label", pa.string(), nullable=False),
        pa.field("instances", pa.int64(), nullable=False),
        pa.field("train_instances", pa.int64(), nullable=False),
        pa.field("valid_instances", pa.int64(), nullable=False),
        pa.field("test_instances", pa.int64(), nullable=False),
        pa.field("distinct_answers", pa.int64(), nullable=False),  # |A_p| over the entropy splits
        pa.field("scaled_entropy", pa.float64(), nullable=False),  # H(A_p) / log |A_p| (0 when |A_p| <= 1)
        pa.field("kind", pa.string(), nullable=False),  # categorical | relational
        pa.field("verbatim_share", pa.float64(), nullable=False),  # instances with an answer in the document
        pa.field("test_answers", pa.int64(), nullable=False),
        pa.field("test_answers_unseen", pa.int64(), nullable=False),  # never an answer of p in train
        pa.field("test_unseen_share", pa.float64()),  # null when p has no test answers
        pa.field("test_only", pa.bool_(), nullable=False),  # no train/valid instance (property-holdout)
        pa.field("datatype", pa.string()),  # Wikidata datatype of the values; null if unknown
        pa.field("date_property", pa.bool_(), nullable=False),  # datatype `time` (Table 3's date group)
    ]
)
