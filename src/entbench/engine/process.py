"""Set-up of the processes entbench owns: the `entbench` command and its pool workers.

pyarrow imports pandas on its first list-to-array conversion whenever pandas is installed (it
checks whether the list is "array-like"), which costs ~0.5 s and ~50 MB in every process and
worker. entbench never uses pandas, so in processes it owns (never in a library user's process,
where pandas may be wanted) it makes pandas unimportable.

The same processes also get allocators that give big freed buffers back (`unmap_freed_buffers`),
so their peak RSS is what their tasks hold, not what earlier tasks left fragmented, and the
`entbench` command asks glibc's malloc for transparent huge pages (`reexec_with_huge_pages`), so
those fresh buffers are not first touched 4 KB at a time.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec


class _NoPandas:
    """An import hook that reports pandas as not installed (any object with `find_spec` is a
    meta path finder: `importlib.abc`, its base class, costs ~0.03 s of CPU to import in every
    `entbench` process, and twice in one re-run with huge pages)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """Refuse `pandas` and its submodules; leave every other import to the next finder."""
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not used in entbench processes", name=fullname)
        return None


def without_pandas() -> None:
    """Make `import pandas` fail in this process, unless pandas is already imported."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def set_up_owned_process() -> None:
    """What every process entbench owns gets (the command itself, pool workers, a LocalCluster's
    workers); before pyarrow's import, which picks its allocator."""
    keep_lost_interrupts()
    without_pandas()
    unmap_freed_buffers()
    purge_duckdb_freed_pages()


_lost_interrupts: list[BaseException] = []


def keep_lost_interrupts() -> None:
    """Keep a Ctrl-C that CPython could not raise, for `raise_lost_interrupt` to raise later.

    A KeyboardInterrupt raised inside a weakref or GC callback (importlib's module-lock callbacks
    run while modules load) cannot propagate: CPython prints "Exception ignored in …" and goes on,
    so a Ctrl-C in the first second of a build was lost and the build ran to its end (exit 0).
    """
    default = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _lost_interrupts.append(unraisable.exc_value)
        else:
            default(unraisable)

    sys.unraisablehook = hook


def raise_lost_interrupt() -> None:
    """Raise the KeyboardInterrupt that a Ctrl-C gave where it could not be raised, if any."""
    if _lost_interrupts:
        raise KeyboardInterrupt from _lost_interrupts.pop()


#: glibc's `mallopt` parameters: the size from which an allocation is a mapping of its own, and
#: the free space at the top of the heap from which malloc gives it back.
_M_MMAP_THRESHOLD = -3
_M_TRIM_THRESHOLD = -1
#: ... and how many arenas (heaps for threads) malloc may keep.
_M_ARENA_MAX = -8
#: Allocations of at least this size are mapped on their own and unmapped when freed: the 16-64 MB
#: decompressed blocks of a map task, Arrow's column buffers and a reduce's gathered tables.
MMAP_THRESHOLD_BYTES = 4 << 20
#: Fixing the mmap threshold also fixes the trim threshold, at glibc's default of 128 KB: every
#: 256 KB read of a decompressed stream then returned its memory and faulted it in again (40k of
#: the 60k page faults of decompressing the benchmark's 320 MB). Twice the mmap threshold, as
#: glibc's own dynamic setting keeps it: the heap holds at most 8 MB it does not use.
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES
#: malloc's arenas: the main one and one for every other thread. glibc gives each thread that
#: allocates while the others' arenas are busy an arena of its own, up to 8 per core, and keeps it;
#: `malloc_trim` hands back the top of the main heap only, so each other arena keeps up to
#: `TRIM_THRESHOLD_BYTES` freed (and its free chunks' partial pages). A one-worker Hansel build of
#: the 1 GB zh world had 15 arenas after `hansel_links`, 45 MB free in them, and every later
#: stage started with it (the number grows with the threads a build ever ran: writers, decoders,
#: Arrow's pool): with two, its last stages started 20-30 MiB lower and the same at 256 MB and
#: 1 GB. Threads of an entbench process allocate in bursts, not all at once: no time was lost.
ARENA_MAX = 2
#: Arrow's documented switch for its default allocator; a value the user set is kept.
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def unmap_freed_buffers() -> None:
    """Make buffers of `MMAP_THRESHOLD_BYTES` or more go back to the system when freed.

    Measured on `entbench build wikidata --workers 1` (.gz, 16 MB tasks), peak RSS at 20k and 200k
    entities was 240-244 and 258-280 MB, and the 200k peak did not come down with shards of the
    20k dump's size: it grew with the number of tasks, not with what a task holds. Two causes:

    * Arrow's default allocator (its bundled mimalloc) keeps freed pages: a reduce gathering a
      shard's batches from every map task's spills held 60-70 MB more than Arrow's own peak
      allocation, and ~10 MB more again for a shard of the same rows read from 10x the spills.
      Arrow goes through malloc instead (`ARROW_DEFAULT_MEMORY_POOL` set to `system` unless the
      user chose a pool), which with the threshold below maps big buffers and unmaps them on free.
    * glibc raises its mmap threshold to the size of the first freed mapped chunk (up to 32 MB),
      so from the second decompressed block on, blocks came from the heaps of the main and the
      prefetch thread's arena, where free gaps are only reused when the next block fits: the map
      held one block (16 MB) more or less at random, and a long run met the worse layout. A fixed
      threshold (`mallopt`) turns the dynamic one off.

    After both: 194-197 MB at 20k and 195 MB at 200k entities (3 runs each), the map at the top
    of both; CPU time the same (5.5 s against 5.7 s at 20k, medians of 6). Then the arenas other
    threads allocate in are capped (`ARENA_MAX`): each keeps freed memory `malloc_trim` does not
    give back.
    """
    if ARROW_POOL_VARIABLE not in os.environ:
        os.environ[ARROW_POOL_VARIABLE] = "system"  # read at pyarrow's import; inherited by workers
        if "pyarrow" in sys.modules:  # already imported: allocations from here on
            import pyarrow as pa

            pa.set_memory_pool(pa.system_memory_pool())
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
        if not _arena_max_chosen():
            libc.mallopt(_M_ARENA_MAX, ARENA_MAX)
    except (OSError, AttributeError):  # not glibc (musl, macOS): their own policies apply
        pass


def _arena_max_chosen() -> bool:
    """Whether the user set glibc's arena count (`MALLOC_ARENA_MAX` or the tunable): theirs stays."""
    return bool(os.environ.get("MALLOC_ARENA_MAX")) or "glibc.malloc.arena_max" in os.environ.get(
        GLIBC_TUNABLES, ""
    )


#: The variable DuckDB's bundled jemalloc reads its options from (its symbols carry the prefix
#: `duckdb_je_`), on top of those DuckDB compiles in; read once, as `duckdb` is imported.
DUCKDB_MALLOC_CONF_VARIABLE = "DUCKDB_JE_MALLOC_CONF"
#: Freed pages go back to the system at once instead of after DuckDB's compiled-in 1 s.
DUCKDB_MALLOC_CONF = "dirty_decay_ms:0"


def purge_duckdb_freed_pages() -> None:
    """Make DuckDB's allocator give freed pages back to the system when they are freed.

    DuckDB allocates through its own jemalloc, which keeps freed pages for a second (its
    `dirty_decay_ms`) before it gives them back, and only purges when it next allocates. A stage's
    queries run back to back in well under that, and each one's hash tables and aggregation states
    are freed into pages the next query did not reuse, so the process held the sum of its queries'
    working memory: `title_qid`'s queries on the 4S zhwiki world (91k titles, DuckDB's own tables
    23 MiB) ended with jemalloc holding 87 MiB resident for 25 MiB allocated and peaked at 193 MiB
    (171 MiB with this). In one-worker `hansel-train` builds, S -> 4S: `hansel_title_qid` 242 ->
    348 MiB became 222 -> 311, `entity_diff` 234 -> 312 became 219 -> 285, `internal_filter` 236
    -> 305 became 218 -> 296. The cost is the page faults of memory taken again after a free:
    2.2x the faults and ~15% more CPU in `title_qid`'s queries (0.31 -> 0.36 s). Applies to a
    process that has not imported `duckdb` yet, and to its workers; a value the user set is kept.
    """
    os.environ.setdefault(DUCKDB_MALLOC_CONF_VARIABLE, DUCKDB_MALLOC_CONF)


#: glibc's tunable (glibc 2.35+) that makes malloc advise transparent huge pages for what it maps.
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb"
GLIBC_TUNABLES = "GLIBC_TUNABLES"
_THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def reexec_with_huge_pages() -> None:
    """Run this process's command again, once, with glibc's malloc advising transparent huge pages.

    With `unmap_freed_buffers` every buffer of 4 MB or more (a map task's decompressed block,
    Arrow's column buffers, a reduce's gathered tables) is a fresh mapping whose pages the kernel
    zeroes and maps one 4 KB fault at a time: 165k page faults in a one-CPU build of a 20k-entity
    dump, ~9% of its time. Where the kernel gives huge pages to memory that asks for them
    (`transparent_hugepage/enabled` = madvise, the usual default), malloc asks when glibc's
    tunable `glibc.malloc.hugetlb=1` is set, and 2 MB pages cut the faults to 20k (the same
    build: 3.02 -> 2.75 s, medians of 6; peak RSS unchanged). glibc reads tunables only when a
    process starts, hence the re-execution, before anything has been read or written; pool
    workers inherit the variable. Nothing happens when the user's `GLIBC_TUNABLES` already names
    the tunable (`glibc.malloc.hugetlb=0` opts out), or off Linux, glibc < 2.35, or a kernel
    that gives huge pages to all memory or to none.
    """
    deliver_held_interrupt()
    update = huge_pages_environment()
    argv = list(getattr(sys, "orig_argv", []))
    # Not for a program read from stdin ("-") or typed in (""): running it again would read nothing.
    if not update or not sys.executable or not argv or sys.argv[0] in ("", "-"):
        return
    os.environ.update(update)
    sys.stdout.flush()
    sys.stderr.flush()
    # A Ctrl-C that reached Python's handler but not yet the code would die with this process
    # image, and the new one would build to the end: hold SIGINT across the exec (the mask and a
    # pending signal survive it) and let the new process take it (`deliver_held_interrupt`). One
    # that came before the block raises here, before the exec.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    os.environ[SIGINT_HELD_VARIABLE] = "1"
    try:
        os.execv(sys.executable, [sys.executable, *argv[1:]])
    except OSError:  # run on as we are; workers still inherit the variable
        os.environ.pop(SIGINT_HELD_VARIABLE, None)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return


#: Set by `reexec_with_huge_pages` in the environment of the process it becomes: SIGINT is blocked
#: there until `deliver_held_interrupt` unblocks it.
SIGINT_HELD_VARIABLE = "ENTBENCH_SIGINT_HELD"


def deliver_held_interrupt() -> None:
    """Unblock the SIGINT that `reexec_with_huge_pages` held across its exec: a Ctrl-C sent in
    between raises KeyboardInterrupt here."""
    if os.environ.pop(SIGINT_HELD_VARIABLE, None) is not None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def huge_pages_environment() -> dict[str, str]:
    """The environment update that makes a new process's malloc advise huge pages (`{}` when the
    user's `GLIBC_TUNABLES` already names the tunable, or it would not help here)."""
    tunables = os.environ.get(GLIBC_TUNABLES, "")
    if HUGE_PAGES_TUNABLE in tunables or not _malloc_huge_pages_would_help():
        return {}
    setting = f"{HUGE_PAGES_TUNABLE}=1"
    return {GLIBC_TUNABLES: f"{tunables}:{setting}" if tunables else setting}


def _malloc_huge_pages_would_help() -> bool:
    """glibc 2.35+ on Linux, with the kernel giving huge pages only to memory that asks."""
    if not sys.platform.startswith("linux"):
        return False
    # The C library this process runs on, as "glibc 2.36" (not `platform.libc_ver`, which imports
    # in ~0.01 s and reads the interpreter's binary): absent or another name off glibc.
    try:
        libc, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").split(" ", 1)
        major, minor = (int(part) for part in version.split(".")[:2])
    except (ValueError, OSError):
        return False
    if libc != "glibc" or (major, minor) < (2, 35):
        return False
    try:
        return "[madvise]" in _THP_ENABLED.read_text(encoding="ascii")
    except OSError:
        return False
