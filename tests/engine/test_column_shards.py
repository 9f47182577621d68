"""`shards.column_shards`: the shards of an Arrow string column, hashed in C from its buffers, are
`shards_of`'s for every key (the routing every stage's output and every partition read depend on).

The keys are real: the titles and texts of the Hansel corpus fixture, cut at varied lengths (short
ones, and ones past xxh64's 32-byte stripes), with nulls, slices, chunks and empty strings.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest

from entbench.engine import shards as shards_module
from entbench.engine.shards import column_shards, shards_of, split_by_shard
from entbench.native_ext import extension_function

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "hansel" / "corpus.jsonl.gz"


def real_keys() -> list[str | None]:
    """Real text cut at lengths 0..80 (code points), every ninth key null."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle]
    keys: list[str | None] = []
    for i, text in enumerate(texts * 3):
        keys.append(None if i % 9 == 4 else text[i % 7 : i % 7 + i % 81])
    return keys


@pytest.mark.parametrize("num_shards", [1, 2, 5, 48, 1000])
def test_column_shards_are_shards_of_for_every_layout(num_shards: int) -> None:
    keys = real_keys()
    assert extension_function("_wdscan", "string_shards") is not None  # the C path is tested
    column = pa.array(keys, pa.string())
    layouts = {
        "whole": column,
        "slice": column.slice(13, len(keys) // 2),
        "chunks": pa.chunked_array([column.slice(0, 3), column.slice(3, 0), column.slice(3)]),
        "no nulls": pa.array([k for k in keys if k is not None], pa.string()),
        "empty": pa.array([], pa.string()),
        "large_string (the Python path)": pa.array(keys, pa.large_string()),
    }
    for name, layout in layouts.items():
        routed = column_shards(layout, num_shards)
        assert routed.dtype.name == "int64", name
        assert routed.tolist() == shards_of(layout.to_pylist(), num_shards).tolist(), name


def test_without_the_extension_the_python_path_routes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = real_keys()
    table = pa.table({"key": pa.array(keys, pa.string()), "n": list(range(len(keys)))})
    native = split_by_shard(table, "key", 7)
    monkeypatch.setattr(shards_module, "_string_shards", None)
    python = split_by_shard(table, "key", 7)
    assert sorted(native) == sorted(python)
    for shard, rows in native.items():
        assert rows.equals(python[shard])
