"""The dask executor writes the same bytes as the local one (a LocalCluster, as CI has no cluster)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import builds as samples
from tests.builders.kb.support import shard_hashes

pytest.importorskip("distributed")

if TYPE_CHECKING:
    from entbench.engine.executors.dask import DaskExecutor


@pytest.mark.parametrize("target", ["kb"])  # two Wikidata scans (map/reduce) and five DuckDB stages
def test_dask_local_cluster_matches_local_executor(tmp_path: Path, target: str) -> None:
    local = samples.build(target, out=tmp_path / "local", workers=1, progress=False, log=lambda _m: None)
    dask = samples.build(
        target, out=tmp_path / "dask", workers=2, executor="dask", progress=False, log=lambda _m: None
    )
    assert local.keys() == dask.keys()
    for stage in local:
        assert shard_hashes(local[stage]) == shard_hashes(dask[stage]), stage


def test_dask_runs_the_merge_pass_to_the_local_bytes(tmp_path: Path, local_cluster: DaskExecutor) -> None:
    """7 shards in groups of 3: map, merge and reduce tasks all on the cluster."""
    source = (
        f"wikidata={Path(__file__).resolve().parents[3] / 'fixtures' / 'wikidata' / 'entities-new.json.bz2'}"
    )
    common = {"sources": [source], "params": ["wikidata.num_shards=7"], "progress": False, "card": False}
    local = samples.build("wikidata", out=tmp_path / "local", log=lambda _m: None, **common)["wikidata"]
    dask = samples.build(
        "wikidata",
        out=tmp_path / "dask",
        workers=2,
        executor="dask",
        dask_address=address_of(local_cluster),
        shuffle_groups=3,
        log=lambda _m: None,
        **common,
    )["wikidata"]
    assert shard_hashes(local, files=True) == shard_hashes(dask, files=True)


def test_dask_build_published_to_a_store_has_the_local_bytes(
    tmp_path: Path, local_cluster: DaskExecutor
) -> None:
    """Workers write to the work directory; the coordinator publishes each finished stage."""
    fsspec = pytest.importorskip("fsspec")
    source = (
        f"wikidata={Path(__file__).resolve().parents[3] / 'fixtures' / 'wikidata' / 'entities-old.json.bz2'}"
    )
    common = {"sources": [source], "params": ["wikidata.num_shards=3"], "progress": False, "card": False}
    local = samples.build("wikidata", out=tmp_path / "local", log=lambda _m: None, **common)["wikidata"]
    url = f"memory://entbench-dask-{tmp_path.name}/out"
    work = tmp_path / "work"
    published = samples.build(
        "wikidata",
        out=url,
        work_dir=work,
        workers=2,
        executor="dask",
        dask_address=address_of(local_cluster),
        log=lambda _m: None,
        **common,
    )["wikidata"]
    rel = published.relative_to(work).as_posix()
    assert rel == local.relative_to(tmp_path / "local").as_posix()
    for name, sha256 in shard_hashes(local, files=True).items():
        with fsspec.open(f"{url}/{rel}/{name}", "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == sha256, name


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[DaskExecutor]:
    """A dask executor on a LocalCluster of two worker processes, started once for the tests that
    run tasks on one directly and for the builds given its address (`--dask-address`, as on a
    user's cluster). The kb build starts its own, as `build` without an address does: each start is
    ~1 CPU s, and each build's worker processes import entbench again (~0.7 s each); the merge pass
    and the publishing to a store do not depend on who started the cluster. The test that kills its
    workers comes last in this file."""
    from entbench.engine.executors.dask import DaskExecutor

    executor = DaskExecutor(2, None)
    yield executor
    executor.close()


def address_of(executor: DaskExecutor) -> str:
    """The scheduler address of the cluster `executor` is connected to."""
    return str(executor._client.scheduler.address)


def test_a_local_clusters_workers_get_entbenchs_process_set_up(local_cluster: DaskExecutor) -> None:
    """Arrow allocates through malloc and pandas stays unimported in the workers entbench starts."""
    found = local_cluster._client.run(_worker_set_up)
    assert len(found) == 2
    assert set(found.values()) == {("system", "refused")}


def _worker_set_up() -> tuple[str, str]:
    import pyarrow as pa

    try:
        import pandas  # noqa: F401
    except ModuleNotFoundError:
        pandas_import = "refused"
    else:
        pandas_import = "imported"
    return pa.default_memory_pool().backend_name, pandas_import


def kill_own_worker(_value: int, *, progress: object) -> None:
    """A task whose every run kills the worker process it runs in, as the OOM killer would."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_task_that_kills_its_dask_workers_is_a_worker_lost_error(local_cluster: DaskExecutor) -> None:
    from entbench.engine.progress import StageBar
    from entbench.errors import WorkerLost

    bar = StageBar("map", total=None, unit="task", items="rows", enabled=False)
    try:
        with pytest.raises(WorkerLost) as caught:
            list(local_cluster.run(kill_own_worker, [(1,)], bar))
    finally:
        bar.close()
    assert "out-of-memory killer" in str(caught.value) and "re-run the same command" in str(caught.value)
