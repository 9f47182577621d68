"""The shard writer through fsspec URLs writes the bytes of a local write (real fixture rows)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from entbench.engine.shards import file_sha256, write_parquet
from tests import builds as samples

fsspec = pytest.importorskip("fsspec")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wikidata"


def test_fsspec_urls_write_the_bytes_of_a_local_write(tmp_path: Path) -> None:
    stage = samples.build(
        "wikidata",
        sources=[f"wikidata={FIXTURES / 'entities-old.json.bz2'}"],
        params=["wikidata.num_shards=2"],
        out=tmp_path / "out",
        progress=False,
        log=lambda _msg: None,
        card=False,
    )["wikidata"]
    shard = sorted((stage / "truthy_claims").glob("part-*.parquet"))[0]
    table = pq.read_table(shard)
    schema = table.schema.remove_metadata()
    meta = {"entbench.stage": "wikidata", "entbench.table": "truthy_claims"}
    local = write_parquet(table, tmp_path / "local" / shard.name, schema=schema, metadata=meta)
    assert local.rows == table.num_rows > 0
    assert local.sha256 == file_sha256(tmp_path / "local" / shard.name)

    url = (tmp_path / "via-fsspec" / "sub" / shard.name).as_uri()  # file:///…, dirs created
    through_file = write_parquet(table, url, schema=schema, metadata=meta)
    assert through_file == local
    assert (tmp_path / "via-fsspec" / "sub" / shard.name).read_bytes() == (
        tmp_path / "local" / shard.name
    ).read_bytes()
    assert [p.name for p in (tmp_path / "via-fsspec" / "sub").iterdir()] == [shard.name]  # no temp left

    memory_url = f"memory://entbench-test-{tmp_path.name}/{shard.name}"
    through_memory = write_parquet(table, memory_url, schema=schema, metadata=meta)
    assert through_memory == local
    with fsspec.open(memory_url, "rb") as f:
        assert f.read() == (tmp_path / "local" / shard.name).read_bytes()
    empty = write_parquet(table.slice(0, 0), f"{memory_url}.empty", schema=schema, metadata=meta)
    assert empty.rows == 0 and empty.bytes > 0
