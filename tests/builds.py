"""Builds on the test samples: `entbench.api.build` with `tests/samples.toml` unless a test names
another config. The bundled default is the demo world; most engine tests pin their counts on these
separate real samples instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from entbench import api
from tests.conftest import SAMPLES_CONFIG


def build(target: str, **kwargs: Any) -> dict[str, Path]:
    """`api.build(target, …)` with `config=tests/samples.toml` by default."""
    kwargs.setdefault("config", SAMPLES_CONFIG)
    return api.build(target, **kwargs)
