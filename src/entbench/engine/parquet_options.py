"""The Parquet writer's options for a shard: the fixed ones, which are part of the output format,
and the per-shard choices (dictionary pages where values repeat, statistics on the sort keys)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

#: Writer options are part of the output format: changing any of them changes every shard's bytes.
#: Dictionary encoding and min/max statistics are chosen per shard (`parquet_options`).
PARQUET_OPTIONS = {
    "compression": "zstd",
    "compression_level": 1,  # smaller *and* faster than level 3 on these tables (measured)
    "version": "2.6",
    "data_page_size": 1 << 20,
}
#: Dictionary-encode a leaf column (not floats) when its first rows hold at most one distinct value per
#: `DICTIONARY_MAX_DISTINCT_SHARE**-1` values. Trying a dictionary on ids, titles or statement ids
#: (which then falls back to plain pages) was a third of the writer's time and made files larger.
DICTIONARY_SAMPLE_ROWS = 2_048
DICTIONARY_MAX_DISTINCT_SHARE = 0.1


def parquet_options(table: pa.Table, sort_by: Sequence[str] = ()) -> dict[str, Any]:
    """The writer options for one shard: the fixed ones plus its dictionary and statistics columns."""
    return {
        **PARQUET_OPTIONS,
        "use_dictionary": dictionary_columns(table),
        "write_statistics": list(sort_by) if sort_by else True,
    }


def dictionary_columns(table: pa.Table) -> list[str]:
    """Parquet paths of the leaf columns whose values repeat enough to be worth a dictionary."""
    if not table.num_rows:
        return []
    sample = table.slice(0, DICTIONARY_SAMPLE_ROWS).combine_chunks()
    paths: list[str] = []
    for field, column in zip(sample.schema, sample.columns, strict=True):
        _collect_repetitive(field.name, column.chunk(0), paths)  # one chunk: combined above
    return paths


def _collect_repetitive(path: str, values: pa.Array, out: list[str]) -> None:
    kind = values.type
    if pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            _collect_repetitive(f"{path}.{kind.field(i).name}", pc.struct_field(values, [i]), out)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        # pyarrow writes lists in the compliant three-level layout: <name>.list.element
        _collect_repetitive(f"{path}.list.element", pc.list_flatten(values), out)
    elif pa.types.is_floating(kind) or pa.types.is_boolean(kind) or pa.types.is_null(kind):
        return  # measurements (coordinates) rarely repeat; booleans and nulls encode to nothing
    elif pa.types.is_dictionary(kind):
        return
    else:
        present = len(values) - values.null_count
        if present and pc.count_distinct(values).as_py() <= present * DICTIONARY_MAX_DISTINCT_SHARE:
            out.append(path)
