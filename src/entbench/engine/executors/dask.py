"""The dask.distributed executor: the same task functions, submitted to a cluster.

Without `--dask-address` a LocalCluster with `workers` single-threaded worker processes is started.
Progress is reported when a task finishes (worker-side increments are summed, not streamed).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from entbench.engine.executors.base import release_memory
from entbench.engine.process import set_up_owned_process
from entbench.engine.progress import StageBar
from entbench.errors import UserError, WorkerLost


def _call(fn: Any, args: tuple[Any, ...]) -> tuple[Any, int, int]:
    """Run a task on a worker; its progress is summed there and reported when it finishes."""
    totals = [0, 0]

    def progress(units: int, items: int = 0) -> None:
        totals[0] += units
        totals[1] += items

    try:
        result = fn(*args, progress=progress)
    finally:
        release_memory()  # the worker process lives on between tasks, as a pool worker does
    return result, totals[0], totals[1]


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
            # The workers of a cluster started here are entbench's own, like its pool workers: no
            # pandas, big freed buffers unmapped (they inherit the command's environment, so its
            # huge pages too). A user's cluster runs other work: its workers are left as they are.
            self._client.run(set_up_owned_process)

    def run(self, fn: Any, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Submit lazily; yield results as tasks complete; the first failure cancels the rest."""
        from distributed import KilledWorker, as_completed

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
                try:
                    result, units, items = future.result()
                except KilledWorker as exc:
                    # dask ran the task again on other workers, and each of them died under it.
                    raise WorkerLost(
                        "the dask workers that ran one task all died under it (dask gave up: "
                        f"{exc}); on Linux that is most often the out-of-memory killer: give each "
                        "worker more memory, or run fewer workers per machine; finished work is "
                        "kept: re-run the same command to resume"
                    ) from exc
                bar.update(units, items)
                yield result
                for args in iterator:
                    pending.add(self._client.submit(_call, fn, args, pure=False))
                    in_flight += 1
                    break
        finally:
            for future in list(pending.futures):
                future.cancel()

    def prepare(self, modules: Sequence[str]) -> None:
        """Nothing ahead of time: a dask worker imports a stage's modules with its first task."""

    def start(self) -> None:
        """Nothing to do: the cluster was reached (or started) with the executor, so a missing
        dask extra or a wrong `--dask-address` is said before any stage is planned."""

    def close(self) -> None:
        """Disconnect (and stop the LocalCluster if this executor started one)."""
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
