"""The dask.distributed executor: the same task functions, submitted to a cluster.

Without `--dask-address` a LocalCluster with `workers` single-threaded worker processes is started.
Progress is reported per finished task (worker-side increments are not forwarded).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from entbench.builders.progress import StageBar
from entbench.errors import UserError


def _noop_progress(units: int, items: int = 0) -> None:
    """Workers on a cluster do not stream progress; the bar advances per finished task."""


def _call(fn: Any, args: tuple[Any, ...]) -> Any:
    return fn(*args, progress=_noop_progress)


class DaskExecutor:
    """Runs tasks on a dask.distributed cluster, at most 2 per worker thread in flight."""

    def __init__(self, workers: int, address: str | None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise UserError("--executor dask needs the dask extra: pip install 'entbench[dask]'") from exc
        self.workers = workers
        self._cluster = None
        if address:
            self._client = Client(address)
        else:
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            self._client = Client(self._cluster)

    def run(self, fn: Any, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Submit lazily; yield results as tasks complete; the first failure cancels the rest."""
        from distributed import as_completed

        iterator = iter(tasks)
        limit = max(2, 2 * sum(self._client.nthreads().values()))
        pending = as_completed()
        in_flight = 0
        try:
            for args in iterator:
                pending.add(self._client.submit(_call, fn, args, pure=False))
                in_flight += 1
                if in_flight >= limit:
                    break
            for future in pending:
                in_flight -= 1
                result = future.result()
                bar.update(1 if bar else 0, 0)
                yield result
                for args in iterator:
                    pending.add(self._client.submit(_call, fn, args, pure=False))
                    in_flight += 1
                    break
        finally:
            for future in list(pending.futures):
                future.cancel()

    def close(self) -> None:
        """Disconnect (and stop the LocalCluster if this executor started one)."""
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
