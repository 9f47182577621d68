"""Where tasks run: inline (`--workers 1`), a local process pool (`local`), or a dask.distributed
cluster (`dask`); `base` is what they share."""

from __future__ import annotations

from collections.abc import Sequence

from entbench.engine.executors.base import Executor
from entbench.engine.executors.local import DeferredPool, InlineExecutor

__all__ = ["Executor", "make_executor"]


def make_executor(
    kind: str, workers: int, dask_address: str | None = None, preload: Sequence[str] = ()
) -> Executor:
    """The executor for `--executor KIND --workers N`; `preload` names the modules of the task
    functions, which a local pool's workers import as they start. A local pool starts when
    `start` (or a first `run`) asks for it."""
    if kind == "dask":
        from entbench.engine.executors.dask import DaskExecutor

        return DaskExecutor(workers=workers, address=dask_address)
    if workers <= 1:
        return InlineExecutor()
    return DeferredPool(workers, preload)
