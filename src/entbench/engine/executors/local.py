"""The local executors: inline (`--workers 1`) or a pool of worker processes forked from a fork server."""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker
from typing import Any

from entbench.engine.executors.base import TaskFn, release_memory, resident_bytes
from entbench.engine.process import set_up_owned_process
from entbench.engine.progress import QueueDrain, StageBar
from entbench.errors import WorkerLost

_worker_queue: Any = None
_release_barrier: Any = None
#: What this worker held once its modules were imported (`_import_modules`).
_started_bytes = 0


def _init_worker(queue: Any, preload: Sequence[str], barrier: Any, environment: dict[str, str]) -> None:
    global _worker_queue, _release_barrier  # noqa: PLW0603 - one each per worker process, set at start
    # A worker is forked from the fork server, whose environment is the coordinator's when the
    # server started: take the coordinator's as it is now (a reader's switch, a cache directory).
    os.environ.clear()
    os.environ.update(environment)
    # Blocked already if this process's pools started the fork server (`interrupts_held`); blocked
    # here too in case other code of a library user's process started it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    set_up_owned_process()
    _worker_queue = queue
    _release_barrier = barrier
    # What every task needs, imported while the coordinator is still planning (see `_ready`): the
    # modules of the task functions are named by the caller, so this module imports none of them.
    import pyarrow.compute
    import pyarrow.parquet  # noqa: F401

    _import_modules(preload)


def _ready() -> None:
    """A no-op task: submitting one per worker starts the workers (and their imports) at once."""


def _import_modules(modules: Sequence[str]) -> None:
    """Import the modules of a build's stages in a worker before its first task arrives, then
    freeze what the worker holds (`gc.freeze`): its modules, classes and functions, ~45k objects
    that live as long as it does. The full collection at each phase's end (`release_memory`) then
    walks only what tasks made since: ~7 ms -> ~0 a phase, paid at every phase's barrier."""
    global _started_bytes  # noqa: PLW0603 - one per worker process
    for name in modules:
        importlib.import_module(name)
    gc.freeze()
    _started_bytes = max(_started_bytes, resident_bytes() or 0)


def _worker_progress(units: int, items: int = 0) -> None:
    if _worker_queue is not None:
        _worker_queue.put((units, items))


def _call_in_worker(fn: TaskFn, args: tuple[Any, ...]) -> Any:
    return fn(*args, progress=_worker_progress)


def _release_in_worker() -> tuple[int, int]:
    """`release_memory`, then wait for every other worker to do the same (so that each of the
    pool's workers takes exactly one of these tasks); returns this worker's pid and the bytes it
    still holds over what it held once started (0 where that cannot be read)."""
    release_memory(empty_free_lists=True)
    held = max(0, (resident_bytes() or _started_bytes) - _started_bytes)
    with contextlib.suppress(threading.BrokenBarrierError):
        _release_barrier.wait(timeout=RELEASE_WAIT_SECONDS)
    return os.getpid(), held


#: How long a worker waits for the others at a phase's end (they are idle then: milliseconds).
RELEASE_WAIT_SECONDS = 10


class InlineExecutor:
    """Runs every task in the calling process, in order (the `--workers 1` executor)."""

    workers = 1

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Run tasks one after another."""
        try:
            for args in tasks:
                result = fn(*args, progress=bar.update)
                # A done task's arguments (a map task's decompressed block) are not kept while the
                # next task is planned: its buffer can then be filled again instead of a new one.
                del args
                yield result
        finally:
            release_memory()  # each run is one phase

    def prepare(self, modules: Sequence[str]) -> None:
        """Nothing to do: tasks run here, where the planner imported the stage modules."""

    def start(self) -> None:
        """Nothing to start."""

    def close(self) -> None:
        """Nothing to release."""


class ProcessPoolTaskExecutor:
    """A pool of `workers` processes; at most 2x`workers` tasks in flight (bounded memory).

    `preload` names the modules of the task functions, which the fork server imports (so each
    worker starts with them); `modules`, those each worker imports as it starts (a build's stage
    modules: kept out of the fork server, which must never start a thread)."""

    def __init__(self, workers: int, preload: Sequence[str] = (), modules: Sequence[str] = ()) -> None:
        self.workers = workers
        context = pool_context(preload)
        # A SimpleQueue writes each progress message before `put` returns: a task's messages are in
        # the pipe before its result is, so a phase's drain reads all of them before its end marker
        # (a Queue's feeder thread could deliver them after it, onto the next phase's bar).
        self._queue = context.SimpleQueue()
        self._aborted = False
        #: Every worker waits at it after releasing its memory at a phase's end (`release_all`).
        self._barrier = context.Barrier(workers)
        #: The worker pids of the last `release_all`.
        self.released: set[int] = set()
        #: The most any worker still held at the last `release_all`, over what it held once started.
        self.residue = 0
        #: Every worker process by pid, kept here: a broken pool drops its own list as it shuts down.
        self._processes: dict[int, Any] = {}
        # Workers start on the first submit; start them now so that interpreter start-up and
        # imports overlap the coordinator's source hashing and planning instead of the first tasks.
        # They start with Ctrl-C blocked (`interrupts_held`): the coordinator alone answers it (one
        # line, exit 130) and stops them, instead of each printing a KeyboardInterrupt traceback.
        try:
            with interrupts_held():
                self._pool = ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=context,
                    initializer=_init_worker,
                    initargs=(self._queue, (*preload, *modules), self._barrier, dict(os.environ)),
                )
                for _ in range(workers):
                    self._pool.submit(_ready)
        except KeyboardInterrupt:  # a Ctrl-C held while the workers started, raised now
            if hasattr(self, "_pool"):
                self.abort()
            raise

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
                    self._processes.update(getattr(self._pool, "_processes", None) or {})
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=id):
                    yield future.result()
            self.release_all()
        except BrokenProcessPool as exc:
            # A worker died (the OOM killer's SIGKILL, most often): the pool cannot run anything
            # more, and "BrokenProcessPool" as an internal error told the user nothing to do.
            lost = self._lost_workers()
            self.abort()
            raise WorkerLost(lost_worker_message(lost, self.workers)) from exc
        except KeyboardInterrupt:
            self.abort()  # the running tasks would otherwise finish first: minutes, on a real dump
            raise
        finally:
            for future in pending:
                future.cancel()
            if not self._aborted:
                wait(pending)
            drain.stop(abandon=self._aborted)

    def release_all(self) -> None:
        """Every worker hands its freed memory back, at the end of a phase.

        Not only those that run the next phase's tasks: a phase with fewer tasks than workers (one
        shard, one global query) leaves a worker idle, and it used to hold the phase before's
        memory through it (after a 256 MB Wikipedia scan's reduce, ~330 MiB through the next
        stage). One task per worker: each waits at a barrier until all have released."""
        futures = [self._pool.submit(_release_in_worker) for _ in range(self.workers)]
        results = [future.result() for future in futures]
        self.released = {pid for pid, _ in results}
        self.residue = max(held for _, held in results)

    def start(self) -> None:
        """Nothing to do: the workers started with the pool."""

    def prepare(self, modules: Sequence[str]) -> None:
        """Queue one import task per worker, behind its start-up: otherwise each worker imported
        the stage's modules while unpickling its first task, inside the stage (measured: the
        2-worker map of a small dump lost ~0.1-0.3 s to it; the inline executor never paid it)."""
        for _ in range(self.workers):
            self._pool.submit(_import_modules, tuple(modules))

    def _lost_workers(self) -> list[int]:
        """Exit codes of the workers (negative: killed by that signal), once the broken pool has
        ended and reaped them all; the pool's own thread reaps them as this one asks, so an exit
        code can read as unknown for a moment.

        The pool's manager thread is waited for first: it fails the futures (which woke this one)
        before it ends and joins the workers, and a fork-server worker's exit code is read from a
        pipe by whichever thread polls it; read by both at once, one got the code and the other
        end-of-file, which multiprocessing records as status 255, over the code (a SIGKILL'd worker
        then read "exited with status 255" in about 1 run in 20 of the OOM-kill fault test)."""
        self._processes.update(getattr(self._pool, "_processes", None) or {})
        deadline = time.monotonic() + 5
        manager = getattr(self._pool, "_executor_manager_thread", None)
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout=5)
        while True:
            codes = [process.exitcode for process in self._processes.values()]
            if all(code is not None for code in codes) or time.monotonic() > deadline:
                return [code for code in codes if code is not None]
            time.sleep(0.02)

    def abort(self) -> None:
        """Stop the workers now (an interrupt): what they were writing is in `.incomplete/`, which a
        re-run resumes, never in a complete stage."""
        self._aborted = True
        for process in list(getattr(self._pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                process.terminate()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Shut the pool down."""
        self._pool.shutdown(wait=not self._aborted, cancel_futures=True)


#: A pool whose workers still hold more than this after a phase's release, over what each held once
#: started, is replaced by a new one as that phase ends (`DeferredPool.run`: a release, and so a
#: residue, comes only with a phase's last result read). A task's freed memory that its heap keeps
#: in gaps (`release_memory` hands back what it can) stays with the worker into every later stage,
#: and how much is left depends on every stage before: measured at the start of the Hansel train set's
#: stage on 2 workers, ~100 MiB of a 4x 256 MB world's earlier stages, its peak then 226-237 MiB at
#: 4S against 248 at 16S from one run to the next (and a kb stage's 181 -> 201). Fresh workers
#: (forked from the fork server, their stage modules imported: ~0.15 s of CPU each, while the
#: coordinator goes on) make each phase's peak its own. Small builds never hold that much, and pay
#: nothing.
RETIRE_RESIDUE_BYTES = 64 << 20


class DeferredPool:
    """A `ProcessPoolTaskExecutor` started when a build first has a stage to run (`start`, or a
    first `run`), not when the build starts: a build that finds every stage done (a re-run, `make
    run` after `make run`) starts no fork server and no worker, each of which imported the stage
    modules for nothing (~0.6 CPU s for `--workers 2`). A build with work starts the pool as soon
    as its first stage to run is planned, so the workers' start-up still overlaps that stage's own
    set-up (its phases, its scratch and memory checks) rather than its first tasks."""

    def __init__(self, workers: int, preload: Sequence[str] = ()) -> None:
        self.workers = workers
        self._preload = tuple(preload)
        self._modules: tuple[str, ...] = ()
        self._pool: ProcessPoolTaskExecutor | None = None

    def start(self) -> None:
        """Start the pool (once), its workers importing the modules `prepare` named."""
        if self._pool is None:
            # The stage modules are imported as each worker starts, not by a task per worker (two
            # could go to one worker): what a worker then holds is what it started with.
            self._pool = ProcessPoolTaskExecutor(self.workers, self._preload, self._modules)

    def prepare(self, modules: Sequence[str]) -> None:
        """The modules the workers import as they start (now, if they have started)."""
        self._modules = tuple(modules)
        if self._pool is not None:
            self._pool.prepare(self._modules)

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """The pool's `run`, the pool started first if need be. A pool whose workers still hold
        much of the phase once it is done is replaced then, not when the next phase starts: the
        new workers start and import while the coordinator ends this phase and plans the next
        (replaced at the start, a small stage of one global task waited ~0.3 s for them)."""
        self.start()
        assert self._pool is not None
        yield from self._pool.run(fn, tasks, bar)
        if self._pool.residue > RETIRE_RESIDUE_BYTES:
            self._pool.close()
            self._pool = ProcessPoolTaskExecutor(self.workers, self._preload, self._modules)

    def close(self) -> None:
        """Shut the pool down, if it started."""
        if self._pool is not None:
            self._pool.close()


#: The module the fork server imports first (`worker_preload`): set-up, then what every task needs.
WORKER_PRELOAD = "entbench.engine.executors.worker_preload"


def pool_context(preload: Sequence[str]) -> Any:
    """The multiprocessing context of a local pool: workers forked from a fork server.

    Not `fork`: DuckDB and pyarrow keep thread pools that do not survive a fork of a process that
    ran them. The fork server is a fresh interpreter that only imports (`WORKER_PRELOAD`, then
    `preload`) and never starts a thread, so each worker is a copy of an interpreter that has
    done ~0.5 s of imports, instead of a new one doing them again (`spawn`, as before): one server
    per process, started with its first pool, serves every later pool of that process too."""
    global _fork_server_reaped_at_exit  # noqa: PLW0603 - one fork server per process
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([WORKER_PRELOAD, *preload])
    if not _fork_server_reaped_at_exit:
        atexit.register(reap_fork_server)
        _fork_server_reaped_at_exit = True
    return context


_fork_server_reaped_at_exit = False

#: How long a process at its exit waits for its fork server to end (its workers have ended by
#: then: a pool's `close` waits for them, an aborted pool has terminated them).
REAP_WAIT_SECONDS = 10


def reap_fork_server() -> None:
    """End this process's fork server and wait for it (at exit). The server waits for the workers it
    forked, so their CPU time and peak memory then count among this process's children's
    (`getrusage`, a parent's `wait4`), as spawned workers' did; unreaped, the server was orphaned
    with them and a benchmark's accounting of a build missed its workers."""
    from multiprocessing import forkserver

    server: Any = getattr(forkserver, "_forkserver", None)
    pid, alive = getattr(server, "_forkserver_pid", None), getattr(server, "_forkserver_alive_fd", None)
    if pid is None or alive is None:
        return
    with contextlib.suppress(OSError):
        os.close(alive)  # the server ends when every holder of this pipe has closed it
    server._forkserver_alive_fd = server._forkserver_pid = None
    deadline = time.monotonic() + REAP_WAIT_SECONDS
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT blocked in this thread while it starts worker processes, and a Ctrl-C that arrives
    meanwhile raised only once they have all started.

    The fork server started here inherits the signal mask through fork and exec, and the workers it
    forks inherit it from the server, so the workers never receive Ctrl-C (the coordinator alone
    answers it and stops them, instead of each printing a KeyboardInterrupt traceback). Here the
    signal is only held, never dropped: one sent to a process whose threads all block it is
    delivered when the block ends. (Ignoring it with SIG_IGN instead, as workers would also
    inherit, lost a Ctrl-C in that window and the build went on to exit 0.)

    A mask is per thread, though: the coordinator's other threads (pyarrow's, OpenBLAS's, the
    progress ticker) still receive a Ctrl-C sent to the process group, and their receipt made the
    main thread raise KeyboardInterrupt in the middle of the start, e.g. while it waited for the
    fork server to fork a worker, before the pool knew that worker's pid: nothing stopped it, and
    it failed with a traceback once the coordinator had exited. So in the main thread the Python
    handler records the interrupt for the duration, and it is raised again, through the handler
    the process had, once every worker is known."""
    # Started now if not yet: starting multiprocessing's resource tracker unblocks SIGINT in the
    # starting thread afterwards (its own guard, bpo-33613), so a tracker started by the first
    # pool inside the block opened it again for every worker after it.
    resource_tracker.ensure_running()
    arrived: list[int] = []
    deferred = _record_interrupts(arrived)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        # Unblocking runs the handler for a signal held for this thread (the recorder, still).
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if deferred is not None:
            signal.signal(signal.SIGINT, deferred)
            if arrived:
                signal.raise_signal(signal.SIGINT)


def _record_interrupts(arrived: list[int]) -> Any:
    """Set SIGINT's Python handler to one that appends to `arrived`; the handler it replaced, or
    None where it cannot be replaced (a thread other than the main one, a handler not set from
    Python) and the interrupt is raised wherever the main thread is, as before."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGINT) is None:
        return None
    return signal.signal(signal.SIGINT, lambda signum, _frame: arrived.append(signum))


def lost_worker_message(exit_codes: Sequence[int], workers: int) -> str:
    """What to tell the user when a worker process died: how it ended, the likely cause, what to do.

    `exit_codes` are every worker's (negative: the signal that ended it); the pool itself ends the
    others with SIGTERM once one has died, so that signal is named only when nothing else is."""
    signals = {-code for code in exit_codes if code < 0}
    statuses = sorted({code for code in exit_codes if code > 0})
    others = sorted(signals - {signal.SIGTERM})
    if signal.SIGKILL in signals:
        how = (
            "was killed (SIGKILL); on Linux that is most often the kernel's out-of-memory killer "
            "(`dmesg` says so)"
        )
    elif others:
        how = "was killed by " + ", ".join(_signal_name(n) for n in others)
    elif statuses:
        how = f"exited with status {statuses[0]}"
    elif signals:
        how = "was killed by SIGTERM"
    else:
        how = "ended unexpectedly"
    fewer = f"with fewer --workers (this build had {workers}) " if workers > 1 else ""
    return f"a worker process {how}; finished work is kept: re-run the same command {fewer}to resume"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
