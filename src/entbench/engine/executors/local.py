"""Where tasks run: inline (`--workers 1`), a local process pool, or a dask.distributed cluster.

Tasks are module-level functions taking picklable arguments and a `progress` keyword. Every
executor yields results as tasks finish; callers never depend on that order (shard bytes depend
only on the task's own inputs), which is why the worker count cannot change the output.
"""

from __future__ import annotations

import ctypes
import importlib
import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from entbench.engine.process import set_up_owned_process
from entbench.engine.progress import QueueDrain, StageBar

TaskFn = Callable[..., Any]

_worker_queue: Any = None


def _init_worker(queue: Any) -> None:
    global _worker_queue  # noqa: PLW0603 - one queue per worker process, set once at start
    set_up_owned_process()
    _worker_queue = queue
    # What every task needs, imported while the coordinator is still planning (see `_ready`).
    import pyarrow.compute
    import pyarrow.parquet  # noqa: F401

    import entbench.engine.runner  # noqa: F401


def _ready() -> None:
    """A no-op task: submitting one per worker starts the workers (and their imports) at once."""


def _import_modules(modules: Sequence[str]) -> None:
    """Import the modules of a build's stages in a worker before its first task arrives."""
    for name in modules:
        importlib.import_module(name)


def _worker_progress(units: int, items: int = 0) -> None:
    if _worker_queue is not None:
        _worker_queue.put((units, items))


_last_task_fn: TaskFn | None = None


def _call_in_worker(fn: TaskFn, args: tuple[Any, ...]) -> Any:
    global _last_task_fn  # noqa: PLW0603 - per worker process: the kind of task it ran last
    if _last_task_fn is not None and _last_task_fn is not fn:
        release_memory()  # a new phase (map -> reduce, one stage -> the next)
    _last_task_fn = fn
    return fn(*args, progress=_worker_progress)


def release_memory() -> None:
    """Hand memory freed by finished tasks back to the system; called between phases.

    A map task frees a block's worth of small Python objects into glibc's heap (and Arrow
    buffers into mimalloc, when a user picks that pool: `process.unmap_freed_buffers`); both keep
    the pages, and the next phase's tasks (a reduce allocating through Arrow, say) take new ones,
    so a worker's peak was the sum of its task kinds, not the largest task. Tasks of one kind
    reuse each other's freed pages, so trimming after every task only made each one fault its
    memory in again (about 3 ms a task, plus the faults).
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    if _libc is not None:
        _libc.malloc_trim(0)


def _load_libc() -> Any:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


_libc = _load_libc()


class Executor(Protocol):
    """Runs task functions and yields their results as they complete."""

    workers: int

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Run `fn(*args, progress=...)` for each args tuple."""
        ...

    def prepare(self, modules: Sequence[str]) -> None:
        """Let workers import `modules` (the build's stage modules) ahead of their first task."""
        ...

    def close(self) -> None:
        """Release workers."""
        ...


class InlineExecutor:
    """Runs every task in the calling process, in order (the `--workers 1` executor)."""

    workers = 1

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Run tasks one after another."""
        try:
            for args in tasks:
                yield fn(*args, progress=bar.update)
        finally:
            release_memory()  # each run is one phase

    def prepare(self, modules: Sequence[str]) -> None:
        """Nothing to do: tasks run here, where the planner imported the stage modules."""

    def close(self) -> None:
        """Nothing to release."""


class ProcessPoolTaskExecutor:
    """A pool of `workers` spawned processes; at most 2x`workers` tasks in flight (bounded memory)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        # spawn, not fork: DuckDB and pyarrow keep thread pools that do not survive a fork.
        context = multiprocessing.get_context("spawn")
        self._queue = context.Queue()
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(self._queue,)
        )
        # Workers start on the first submit; start them now so that interpreter start-up and
        # imports overlap the coordinator's source hashing and planning instead of the first tasks.
        for _ in range(workers):
            self._pool.submit(_ready)

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Submit tasks lazily, yield results as they complete; the first failure cancels the rest."""
        drain = QueueDrain(self._queue, bar)
        pending: set[Future[Any]] = set()
        iterator = iter(tasks)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < 2 * self.workers:
                    try:
                        args = next(iterator)
                    except StopIteration:
                        exhausted = True
                        break
                    pending.add(self._pool.submit(_call_in_worker, fn, args))
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=id):
                    yield future.result()
        finally:
            for future in pending:
                future.cancel()
            wait(pending)
            drain.stop()

    def prepare(self, modules: Sequence[str]) -> None:
        """Queue one import task per worker, behind its start-up: otherwise each worker imported
        the stage's modules while unpickling its first task, inside the stage (measured: the
        2-worker map of a small dump lost ~0.1-0.3 s to it; the inline executor never paid it)."""
        for _ in range(self.workers):
            self._pool.submit(_import_modules, tuple(modules))

    def close(self) -> None:
        """Shut the pool down."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def make_executor(kind: str, workers: int, dask_address: str | None = None) -> Executor:
    """The executor for `--executor KIND --workers N`."""
    if kind == "dask":
        from entbench.engine.executors.dask import DaskExecutor

        return DaskExecutor(workers=workers, address=dask_address)
    if workers <= 1:
        return InlineExecutor()
    return ProcessPoolTaskExecutor(workers)
