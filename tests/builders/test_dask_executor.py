"""The dask executor writes the same bytes as the local one (a LocalCluster, as CI has no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from entbench.builders import api
from tests.builders.kb_support import shard_hashes

pytest.importorskip("distributed")


@pytest.mark.parametrize("target", ["kb"])  # two Wikidata scans (map/reduce) and five DuckDB stages
def test_dask_local_cluster_matches_local_executor(tmp_path: Path, target: str) -> None:
    local = api.build(target, out=tmp_path / "local", workers=1, progress=False, log=lambda _m: None)
    dask = api.build(
        target, out=tmp_path / "dask", workers=2, executor="dask", progress=False, log=lambda _m: None
    )
    assert local.keys() == dask.keys()
    for stage in local:
        assert shard_hashes(local[stage]) == shard_hashes(dask[stage]), stage
