"""The set-up of processes entbench owns: allocators that give big freed buffers back, huge pages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from entbench.engine import process

PROBE = """
from entbench.engine.process import unmap_freed_buffers
unmap_freed_buffers()
import pyarrow as pa
print(pa.default_memory_pool().backend_name)
"""


def _pool_after_setup(env_pool: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if env_pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = env_pool
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the system pool is glibc's malloc here")
def test_arrow_allocates_through_malloc_unless_the_user_chose_a_pool() -> None:
    assert _pool_after_setup(None) == "system"
    assert _pool_after_setup("mimalloc") == "mimalloc"


def test_a_process_that_imported_pyarrow_first_switches_too() -> None:
    probe = "import pyarrow as pa\n" + PROBE
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "system"


REEXEC_PROBE = """
import os, sys
print("start", os.environ.get("GLIBC_TUNABLES", ""), flush=True)
from entbench.engine.process import reexec_with_huge_pages
reexec_with_huge_pages()
block = bytes(range(256)) * (1 << 18)  # 64 MB written: a mapping of its own, touched
with open("/proc/self/smaps_rollup") as f:
    huge = [int(line.split()[1]) for line in f if line.startswith("AnonHugePages:")]
print("after", os.environ.get("GLIBC_TUNABLES", ""), sys.argv[1:], huge[0])
"""

needs_madvise_thp = pytest.mark.skipif(
    not process._malloc_huge_pages_would_help(),
    reason="glibc < 2.35, not Linux, or the kernel gives huge pages to all memory or none",
)


def _reexec_probe(tunables: str | None) -> list[list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    done = subprocess.run(
        [sys.executable, "-c", REEXEC_PROBE, "build", "kb"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line.split(" ", 1) for line in done.stdout.splitlines()]


@needs_madvise_thp
def test_the_command_runs_again_once_with_malloc_asking_for_huge_pages() -> None:
    lines = _reexec_probe(None)
    assert [line[0] for line in lines] == ["start", "start", "after"]  # the first process exec'd
    assert lines[1] == ["start", "glibc.malloc.hugetlb=1"]
    tunables, rest = lines[2][1].split(" ", 1)
    assert tunables == "glibc.malloc.hugetlb=1"
    assert rest.startswith("['build', 'kb'] ")  # the same arguments
    assert int(rest.rsplit(" ", 1)[1]) > 0  # the 64 MB block is (partly) on huge pages


@needs_madvise_thp
def test_the_users_tunables_are_kept_and_theirs_decides() -> None:
    lines = _reexec_probe("glibc.malloc.check=0")
    assert lines[1] == ["start", "glibc.malloc.check=0:glibc.malloc.hugetlb=1"]
    opted_out = _reexec_probe("glibc.malloc.hugetlb=0")
    assert [line[0] for line in opted_out] == ["start", "after"]  # no second start
    assert opted_out[1][1].startswith("glibc.malloc.hugetlb=0 ")


DUCKDB_PROBE = """
import ctypes
from entbench.engine.process import set_up_owned_process
set_up_owned_process()
import _duckdb
lib = ctypes.CDLL(_duckdb.__file__)
if not hasattr(lib, "duckdb_je_mallctl"):
    raise SystemExit("no jemalloc")
value = ctypes.c_ssize_t(0)
size = ctypes.c_size_t(ctypes.sizeof(value))
name = b"opt.dirty_decay_ms"
assert lib.duckdb_je_mallctl(name, ctypes.byref(value), ctypes.byref(size), None, 0) == 0
print(value.value)
"""


def _duckdb_dirty_decay(env_conf: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != process.DUCKDB_MALLOC_CONF_VARIABLE}
    if env_conf is not None:
        env[process.DUCKDB_MALLOC_CONF_VARIABLE] = env_conf
    done = subprocess.run(
        [sys.executable, "-c", DUCKDB_PROBE], env=env, capture_output=True, text=True, check=False
    )
    if "no jemalloc" in done.stderr:
        pytest.skip("this DuckDB build does not bundle jemalloc")
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DuckDB bundles jemalloc on Linux only")
def test_duckdb_gives_freed_pages_back_at_once_unless_the_user_chose() -> None:
    assert _duckdb_dirty_decay(None) == 0
    assert _duckdb_dirty_decay("dirty_decay_ms:1000") == 1000


def test_only_command_lines_that_may_touch_data_run_again_with_huge_pages() -> None:
    from entbench.cli.main import builds_data

    assert builds_data(["build", "kb", "--out", "o"]) and builds_data(["export", "wikireading"])
    for prints_only in ([], ["--help"], ["build", "-h"], ["--version"], ["targets"], ["export", "--help"]):
        assert not builds_data(prints_only), prints_only


def test_a_ctrl_c_cpython_could_not_raise_is_raised_at_the_next_check() -> None:
    """A KeyboardInterrupt raised in a weakref callback (as importlib's module-lock callbacks are,
    when Ctrl-C comes while modules load) is kept, not printed as "Exception ignored", and raised
    by `raise_lost_interrupt`, which the entry point calls after its imports and the runner
    before each stage; other unraisable errors still reach the hook that was there before."""
    import weakref

    def interrupted(_: object) -> None:
        raise KeyboardInterrupt

    def failed(_: object) -> None:
        raise ValueError("a real bug")

    class Target:
        pass

    reached_before: list[BaseException | None] = []
    before = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: reached_before.append(unraisable.exc_value)
    try:
        process.keep_lost_interrupts()
        process.raise_lost_interrupt()  # nothing lost yet: nothing raised
        target = Target()
        ref = weakref.ref(target, interrupted)
        del target
        assert ref() is None and reached_before == []
        with pytest.raises(KeyboardInterrupt):
            process.raise_lost_interrupt()
        process.raise_lost_interrupt()  # raised once
        other = Target()
        ref = weakref.ref(other, failed)
        del other
        assert [str(exc) for exc in reached_before] == ["a real bug"]
    finally:
        sys.unraisablehook = before
        process._lost_interrupts.clear()


ARENA_PROBE = """
import ctypes, os, re, sys, tempfile, threading
from entbench.engine.process import unmap_freed_buffers
unmap_freed_buffers()
libc = ctypes.CDLL("libc.so.6")
ready = threading.Barrier(7)
def allocate():
    block = bytearray(100_000)  # malloc'd in this thread's arena, held until all threads have one
    ready.wait()
    del block
threads = [threading.Thread(target=allocate) for _ in range(6)]
for t in threads:
    t.start()
ready.wait()
for t in threads:
    t.join()
libc.fopen.restype = ctypes.c_void_p
path = os.path.join(tempfile.mkdtemp(), "info.xml")
stream = ctypes.c_void_p(libc.fopen(path.encode(), b"w"))
libc.malloc_info(0, stream)
libc.fclose(stream)
print(len(re.findall('<heap nr=', open(path).read())))
"""


def _arenas_after_setup(user_arenas: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    if user_arenas is not None:
        env["MALLOC_ARENA_MAX"] = user_arenas
    done = subprocess.run(
        [sys.executable, "-c", ARENA_PROBE], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_threads_share_a_few_arenas_unless_the_user_chose_how_many() -> None:
    """Each arena keeps memory `malloc_trim` does not give back: seven threads allocating at once
    get `ARENA_MAX` arenas between them, or as many as a user's `MALLOC_ARENA_MAX` allows."""
    assert _arenas_after_setup(None) == process.ARENA_MAX
    assert _arenas_after_setup("5") == 5
