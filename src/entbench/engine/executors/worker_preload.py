"""Imported first by the fork server that a local pool's workers are forked from: the server is set
up as every process entbench owns (before pyarrow's import, which picks its allocator), then
imports what every task needs, so that each worker starts with it instead of importing it again.

Importing only: nothing here may leave a thread running (a forked child holds none of its parent's
threads, only their locks as they were). pyarrow's and DuckDB's thread pools start on first use, in
the workers, never at import; but pyarrow's bundled jemalloc starts a background purging thread as
it loads, which is turned off here (`ARROW_JEMALLOC_CONF`: jemalloc itself turns it off in every
forked child, so the workers run as they would anyway), and numpy's OpenBLAS starts its threads as
it loads and stops them before each fork (its own fork handler), so the server runs none from its
first worker on."""

from __future__ import annotations

import importlib
import os

from entbench.engine.process import set_up_owned_process

#: The variable pyarrow's jemalloc (symbols prefixed `je_arrow_`) reads its options from, at load.
ARROW_JEMALLOC_CONF = "JE_ARROW_MALLOC_CONF"
#: No background purging thread in the fork server.
NO_BACKGROUND_THREAD = "background_thread:false"

#: What every task needs (see `local._init_worker`).
TASK_MODULES = ("pyarrow.compute", "pyarrow.parquet")


def _warm_up() -> None:
    set_up_owned_process()
    # In the server only: each worker takes the coordinator's environment as it starts.
    user = os.environ.get(ARROW_JEMALLOC_CONF)
    os.environ[ARROW_JEMALLOC_CONF] = f"{user},{NO_BACKGROUND_THREAD}" if user else NO_BACKGROUND_THREAD
    for name in TASK_MODULES:
        importlib.import_module(name)


_warm_up()
