"""Edge-probing items and the memorisation filter's outputs (spec §7).

An item is one jiant edge-probing target: token spans (end exclusive) into its sentence's `text`
(tokens separated by single spaces) and its label(s). `entbench filter mem` writes the items the
heuristics ran on, the filtered test set of each heuristic, and every removed item with its reason;
the `MemAuditStage` writes one decision row per evaluation row of a built benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

HEURISTIC_NAMES = ("mem_exact", "mem_freq", "mem_uniform")

#: Where an item came from and what it says; shared by every item table.
_SOURCE_FIELDS: tuple[pa.Field, ...] = (
    pa.field("source_index", pa.int64(), nullable=False),  # position among the items read from the input
    pa.field("sentence_index", pa.int64(), nullable=False),  # jiant record / CoNLL-U sentence, 0-based
    pa.field("target_index", pa.int32(), nullable=False),  # position within the sentence's targets
    pa.field("text", pa.string(), nullable=False),  # tokens joined by single spaces
    pa.field("span1_start", pa.int32(), nullable=False),
    pa.field("span1_end", pa.int32(), nullable=False),  # exclusive
    pa.field("span2_start", pa.int32()),  # null for one-span tasks
    pa.field("span2_end", pa.int32()),
    pa.field("span1_text", pa.string(), nullable=False),
    pa.field("span2_text", pa.string()),
    pa.field("labels", pa.list_(pa.string()), nullable=False),
    pa.field("label_is_list", pa.bool_(), nullable=False),  # jiant wrote `label` as a list (SPR)
    pa.field("info", pa.string()),  # the sentence's jiant `info` object, as JSON
    pa.field("target_info", pa.string()),  # the target's own `info` object, as JSON
)

_REASON_FIELDS: tuple[pa.Field, ...] = (
    pa.field("reason", pa.string(), nullable=False),  # stable code, e.g. span_label_pair_in_train
    pa.field("detail", pa.string(), nullable=False),  # the evidence, e.g. the drawn label and counts
)

#: The test items the heuristics ran on; `item_id` is the position in that list (unique).
TEST_ITEMS = pa.schema([pa.field("item_id", pa.int64(), nullable=False), *_SOURCE_FIELDS])

#: Items a heuristic removed, with why.
REMOVED_ITEMS = pa.schema([*TEST_ITEMS, *_REASON_FIELDS])

#: Test items dropped before the heuristics because train never has their label: one row per
#: (item, unseen label), as EPtest counts them; `detail` is the unseen label.
UNSEEN_LABEL_ITEMS = pa.schema([*_SOURCE_FIELDS, *_REASON_FIELDS])


def mem_decisions_schema(id_fields: Sequence[pa.Field]) -> pa.Schema:
    """One row per evaluation row (per copy, see `copy`) of an audited benchmark table.

    `id_fields` are the evaluation table's identifying columns, copied as they are. `in_test` is
    false for rows dropped before the heuristics (a label train never has, listed in
    `unseen_labels`; or a null span or label); the heuristic columns are then null. Every row has
    a reason per heuristic, whether the item was solved, kept or not audited (the codes:
    `entbench.filters.memorization_reasons`), and its evidence in `<heuristic>_detail`.
    """
    fields = [
        *id_fields,
        pa.field("eval_index", pa.int64(), nullable=False),  # position in the evaluation split's order
        pa.field("copy", pa.int32(), nullable=False),  # >0 only for EPtest's multi-label duplicates
        pa.field("spans", pa.list_(pa.string()), nullable=False),
        pa.field("labels", pa.list_(pa.string()), nullable=False),
        pa.field("in_test", pa.bool_(), nullable=False),
        pa.field("unseen_labels", pa.list_(pa.string()), nullable=False),
    ]
    for name in HEURISTIC_NAMES:
        fields.append(pa.field(name, pa.bool_()))  # true = solved (removed), false = kept, null = not audited
        fields.append(pa.field(f"{name}_reason", pa.string(), nullable=False))
        fields.append(pa.field(f"{name}_detail", pa.string(), nullable=False))
    return pa.schema(fields)
