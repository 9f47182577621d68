"""Knowledge-base tables (spec §2): the filter's decisions, E_known/E_new, types and TopSnaks.

Per-entity tables are sharded by `qid` (xxh64 % num_shards, as the normalized tables), so shard k
of `kb_entities`, `coarse_types` and `entity_snaks` hold the same entities when their stages use
the same shard count. Lists of QIDs are in QID-number order.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from entbench.schemas.base import column_suffix

#: `snapshot` values: which dump a row is about.
OLD, NEW = "old", "new"

#: Entities passing the Wikimedia-internal filter and the site constraint (spec §2.1), per dump.
KEPT = pa.schema(
    [
        pa.field("snapshot", pa.string(), nullable=False),  # old | new
        pa.field("qid", pa.string(), nullable=False),
    ]
)

#: Entities dropped as non-items or Wikimedia-internal (the far more numerous `no_site` drops are
#: only counted in the stats).
REMOVED = pa.schema(
    [
        pa.field("snapshot", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        # not_item | instance_of_internal | subclass_of_internal (filters.internal.Reason)
        pa.field("reason", pa.string(), nullable=False),
        pa.field("classes", pa.list_(pa.string())),  # filter classes reached (null for not_item)
    ]
)

#: Ids whose entity disappeared between the dumps, and redirect stubs of the new dump (spec §2.2).
ID_CHANGES = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("change", pa.string(), nullable=False),  # redirected | deleted | redirect_stub
        pa.field("to_qid", pa.string()),  # redirect target (redirected, redirect_stub)
        pa.field("in_known", pa.bool_(), nullable=False),  # the id is in E_known
    ]
)


def kb_entities_schema(languages: Sequence[str]) -> pa.Schema:
    """`kb_entities`: E_known ∪ E_new with membership flags, labels and descriptions (spec §2.2)."""
    fields = [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("in_known", pa.bool_(), nullable=False),
        pa.field("in_new", pa.bool_(), nullable=False),
    ]
    fields += [pa.field(f"label_{column_suffix(lang)}", pa.string()) for lang in languages]
    fields += [pa.field(f"description_{column_suffix(lang)}", pa.string()) for lang in languages]
    return pa.schema(fields)


#: Classes reaching a root through P279 (reflexive), per dump: the downward closure (spec §2.3).
TYPE_CLOSURE = pa.schema(
    [
        pa.field("snapshot", pa.string(), nullable=False),
        pa.field("root", pa.string(), nullable=False),
        pa.field("class", pa.string(), nullable=False),
    ]
)

#: One coarse type per KB entity and every root it reaches (spec §2.3, Hansel Table 2).
COARSE_TYPES = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("coarse", pa.string(), nullable=False),  # PER | LOC | ORG | EVENT | OTHER
        pa.field("roots", pa.list_(pa.string()), nullable=False),
    ]
)

#: The K most frequent (property, item value) snaks over E_known (spec §2.4); `rank` is 0-based.
TOP_SNAKS = pa.schema(
    [
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("property", pa.string(), nullable=False),
        pa.field("value", pa.string(), nullable=False),
        pa.field("entity_count", pa.int64(), nullable=False),
    ]
)

#: Per KB entity, the ranks of the TopSnaks it has, ascending (empty if none).
ENTITY_SNAKS = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("snaks", pa.list_(pa.int32()), nullable=False),
    ]
)
