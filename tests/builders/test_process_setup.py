"""The set-up of processes entbench owns: allocators that give big freed buffers back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
from entbench.builders.process import unmap_freed_buffers
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
