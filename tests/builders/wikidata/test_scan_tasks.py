"""How the Wikidata scan cuts a dump into map tasks."""

from __future__ import annotations


def test_map_task_size_depends_on_the_input_only() -> None:
    """Small dumps get MIN_TASKS tasks (workers finish together); the size never depends on
    --workers, so a build resumed with another worker count finds the same task ids."""
    from types import SimpleNamespace
    from typing import Any, cast

    from entbench.engine.dump_scan import MIN_TASK_BYTES, MIN_TASKS, task_bytes

    def size(input_bytes: int, workers: int, chunk_mb: int = 64) -> int:
        ctx = SimpleNamespace(options=SimpleNamespace(chunk_bytes=chunk_mb << 20, workers=workers))
        return task_bytes(cast(Any, ctx), input_bytes)

    for workers in (1, 2, 8):
        assert size(320 << 20, workers) == (320 << 20) // MIN_TASKS
        assert size(100 << 30, workers) == 64 << 20  # --chunk-mb caps big dumps
        assert size(1 << 20, workers) == MIN_TASK_BYTES
    assert size(100 << 30, 2, chunk_mb=16) == 16 << 20
