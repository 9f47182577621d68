"""Helpers for the card tests: quiet builds and a check that a PNG is a real picture."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib import image

from entbench import api
from tests.conftest import SAMPLES_CONFIG


def build(
    target: str,
    out: Path,
    *,
    sources: Sequence[str] = (),
    params: Sequence[str] = (),
    config: Path | None = SAMPLES_CONFIG,
) -> dict[str, Path]:
    """`api.build` without progress bars or log lines (card included), on the test samples unless
    another `config` is given (None: the bundled demo world, when no `sources` are given either)."""
    return api.build(
        target,
        config=config,
        out=out,
        sources=list(sources),
        params=list(params),
        progress=False,
        log=lambda _m: None,
    )


def assert_real_png(path: Path, *, min_width: int = 600, min_height: int = 300) -> None:
    """`path` is a PNG of at least the given size with more than one colour (not a blank canvas)."""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    pixels = image.imread(str(path))
    height, width = pixels.shape[:2]
    assert width >= min_width and height >= min_height, (path, width, height)
    rgba = (pixels[..., :3] * 255).astype(np.uint32)
    packed = (rgba[..., 0] << 16) | (rgba[..., 1] << 8) | rgba[..., 2]
    assert len(np.unique(packed)) > 2, path


def seed_scans(source_out: Path, out: Path, *layers_and_stages: str) -> None:
    """Copy finished stage directories (e.g. "normalized/wikidata") of one build into another, so a
    build there finds them up to date instead of scanning the dumps again."""
    for rel in layers_and_stages:
        shutil.copytree(source_out / rel, out / rel, dirs_exist_ok=True)
