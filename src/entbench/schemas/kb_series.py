"""Tables of the `kb-series` target: new entities over a series of Wikidata dumps in date order.

Dump `i` is the source `wikidata_i` (0 the oldest); period `i` (1 ≤ i < N) is the interval between
dumps `i-1` and `i`. Every table is sharded by `qid` (xxh64 % num_shards, as the normalized
tables), except the zero-shot pool (one shard, in draw order).

* `series_filter.kept` / `.removed`: the Wikimedia-internal filter's decisions per dump (the
  `kb` target's `internal_filter`, for each dump of the series).
* `series_new.new_entities`: E_new of each period, with its coarse type in the dump it appeared in.
* `series_new.first_dump`: every id any dump holds, with the first dump holding it.
* `series_zeroshot.zeroshot_pool`: each period's zero-shot annotation pool.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from entbench.schemas.base import column_suffix

#: Entities passing the Wikimedia-internal filter and the site constraint, per dump.
KEPT = pa.schema(
    [
        pa.field("dump", pa.int32(), nullable=False),  # i of the source wikidata_i
        pa.field("qid", pa.string(), nullable=False),
    ]
)

#: Entities dropped as non-items or Wikimedia-internal, per dump (`no_site` drops are only counted).
REMOVED = pa.schema(
    [
        pa.field("dump", pa.int32(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        # not_item | instance_of_internal | subclass_of_internal (filters.internal.Reason)
        pa.field("reason", pa.string(), nullable=False),
        pa.field("classes", pa.list_(pa.string())),  # filter classes reached (null for not_item)
    ]
)

#: Every id that occurs in a dump of the series (as an entity or a redirect stub).
FIRST_DUMP = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("first_dump", pa.int32(), nullable=False),  # the first dump the id occurs in
        pa.field("first_kept", pa.int32()),  # the first dump whose filter kept it; null if none did
        pa.field("last_dump", pa.int32()),  # the last dump holding it as an entity; null if only a redirect
    ]
)


def new_entities_schema(languages: Sequence[str]) -> pa.Schema:
    """`new_entities`: one row per (period, E_new entity), typed and labelled in the period's dump."""
    fields = [
        pa.field("period", pa.int32(), nullable=False),  # i: new between dump i-1 and dump i
        pa.field("qid", pa.string(), nullable=False),
        pa.field("coarse", pa.string(), nullable=False),  # PER | LOC | ORG | EVENT | OTHER
        pa.field("roots", pa.list_(pa.string()), nullable=False),  # every root reached, QID order
    ]
    fields += [pa.field(f"label_{column_suffix(lang)}", pa.string()) for lang in languages]
    fields += [pa.field(f"description_{column_suffix(lang)}", pa.string()) for lang in languages]
    return pa.schema(fields)


#: Each period's zero-shot pool: the Hansel zero-shot pool's columns after `period`.
ZEROSHOT = pa.schema(
    [
        pa.field("period", pa.int32(), nullable=False),
        pa.field("pool_index", pa.int64(), nullable=False),  # draw order within the period
        pa.field("qid", pa.string(), nullable=False),
        pa.field("title", pa.string()),  # its page title on the site, in the period's dump
        pa.field("label", pa.string()),
        pa.field("description", pa.string()),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),  # Wikidata aliases, dump order
        pa.field("coarse", pa.string(), nullable=False),
        pa.field("criterion", pa.string(), nullable=False),  # uniform | balanced (Hansel §3.4)
    ]
)
