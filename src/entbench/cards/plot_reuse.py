"""The PNGs a card already holds, by what they show: a card written again (`entbench card`, a
rebuild) or published (`entbench publish`) copies the plot of a chart whose data has not changed
instead of drawing it again (~0.3 s of CPU a plot with matplotlib, ~45 plots for the demo world).

A plot's key hashes the chart (every field of `Chart`: file name, title, labels, values, style)
with the source of `cards.plots` and the matplotlib version, which is all that decides its bytes
(`cards.plots` draws the same chart to the same bytes on the same matplotlib version); `card.json`
records each drawn plot's key under `plot_keys`.

The same key in the same process is the same bytes too: the process keeps the PNGs it drew last
(`remember_drawn`, `drawn_before`), so a chart drawn again for another build directory (a variant,
a trial build, the builds of several targets in one process) is written, not drawn.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import shutil
from collections import OrderedDict
from pathlib import Path

from entbench.cards.model import Chart

#: The `card.json` entry mapping each drawn PNG's file name to its key.
PLOT_KEYS = "plot_keys"
#: How many of its last drawn PNGs a process keeps (tens of KB each).
KEPT_DRAWN = 64
_drawn: OrderedDict[str, bytes] = OrderedDict()


def chart_key(chart: Chart) -> str:
    """The hex key of the PNG `cards.plots` draws for `chart`."""
    digest = hashlib.sha256(_drawing_code())
    digest.update(json.dumps(dataclasses.asdict(chart), sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


@functools.cache
def _drawing_code() -> bytes:
    """What draws a chart, read without importing matplotlib (~1 s): `cards.plots`' source and
    the matplotlib version."""
    spec = importlib.util.find_spec("entbench.cards.plots")
    source = Path(spec.origin).read_bytes() if spec is not None and spec.origin else b""
    try:
        version = importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return f"{version}\0{len(source)}\0".encode() + source


def drawn_plots(card_json: Path) -> dict[str, Path]:
    """Key -> PNG of the plots recorded in a card's `card.json` (none when it is not readable)."""
    try:
        doc = json.loads(card_json.read_text(encoding="utf-8"))
        keys = doc.get(PLOT_KEYS, {})
        return {
            key: card_json.parent / name
            for name, key in keys.items()
            if isinstance(key, str) and isinstance(name, str) and "/" not in name
        }
    except (OSError, ValueError, AttributeError):
        return {}


def copy_drawn(earlier: dict[str, Path], key: str, path: Path) -> bool:
    """Copy the PNG recorded under `key` to `path`; False when there is none (or it went away, e.g.
    a build swapped its card meanwhile), so the caller draws it."""
    source = earlier.get(key)
    if source is None:
        return False
    try:
        shutil.copyfile(source, path)
    except OSError:
        return False
    return True


def drawn_before(key: str) -> bytes | None:
    """The PNG this process drew last for a chart of `key`, or None."""
    png = _drawn.get(key)
    if png is not None:
        _drawn.move_to_end(key)
    return png


def remember_drawn(key: str, png: bytes) -> None:
    """Keep the PNG just drawn for a chart of `key` (the last `KEPT_DRAWN` ones)."""
    _drawn[key] = png
    _drawn.move_to_end(key)
    while len(_drawn) > KEPT_DRAWN:
        _drawn.popitem(last=False)
