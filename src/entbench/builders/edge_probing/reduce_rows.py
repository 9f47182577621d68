"""How a strict audit's reducer reads its shard's map tables (`stages.mem_audit`): from the spills
a batch at a time when they allow it, else gathered whole.

A shard holds every evaluation row of its span keys, and a frequent key (a WikiReading question, a
sixth of a split) grows with the dump, so a gathered shard did too (issue 33: 12 MiB of tables at
16S, held through the reduce, and twice while they were gathered).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from entbench.engine.external_sort import row_groups_of

#: The map tables of a strict audit: train items with their count in a task, evaluation rows.
TRAIN, EVAL = "_train", "_eval"


def take(tables: Mapping[str, pa.Table], name: str) -> pa.Table:
    """`tables[name]`, and no longer held by `tables` if they can let go of it (the runner's
    gathered tables can: `take`), so that it is freed once the caller is done with it."""
    taker = getattr(tables, "take", None)
    return taker(name) if callable(taker) else tables[name]


def valid_keys(rows: pa.Table) -> pa.Array:
    """The distinct span keys of the valid evaluation rows of `rows`."""
    return pc.unique(rows.filter(rows.column("_valid")).column("_key"))


def in_eval_order(at: np.ndarray) -> bool:
    """Whether the `eval_index` values `at` increase (as one map task's rows do, and a shard's
    rows gathered in map task order); an empty or one-row array does."""
    return bool((at[1:] > at[:-1]).all())


def streamed_keys(batches: Callable[[str], Iterator[pa.RecordBatch]]) -> pa.Array | None:
    """The distinct span keys of a shard's valid evaluation rows read from its spilled batches,
    or None unless the batches are in `eval_index` order (then the shard is gathered and sorted).
    A batch at a time: only each batch's distinct keys are kept."""
    keys: list[pa.Array] = []
    last = -1
    for batch in batches(EVAL):
        at = batch.column("_eval_index").to_numpy()
        if at.size and (int(at[0]) <= last or not in_eval_order(at)):
            return None
        last = int(at[-1]) if at.size else last
        keys.append(pc.unique(batch.column("_key").filter(batch.column("_valid"))))
    if not keys:
        return pa.array([], pa.string())
    return pc.unique(pa.chunked_array(keys, pa.string()))


def slices(tables: Iterator[pa.Table], size: int, schema: pa.Schema) -> Iterator[pa.Table]:
    """The rows of `tables` as tables of `size` rows (the last one fewer; one empty
    table if there are no rows, as a gathered empty shard gives)."""
    given = False
    for part in row_groups_of(tables, size):
        given = True
        yield part
    if not given:
        yield schema.empty_table()
