"""Helpers of the Hansel builder tests: one build per process on the fixture world, tables read back.

The fixture world is the zhwiki fixture dump with its Wikidata pair (`fixtures/hansel/`), passed
as `--source` overrides over the bundled config (whose own `wikidata_old`/`wikidata_new` are the
kb's real pair). Builds are cached per (targets, sources, params, workers) for the whole test
process; builds with the same sources and workers share one output directory, so a build with
other parameters only rebuilds the stages those parameters change.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench import api
from tests.builders.kb.support import read_dump, read_table
from tests.conftest import SAMPLES_CONFIG

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
HANSEL = FIXTURES / "hansel"
OLD = HANSEL / "wikidata-old.json.gz"
NEW = HANSEL / "wikidata-new.json.gz"
PAIR = (f"wikidata_old={OLD}", f"wikidata_new={NEW}")
TARGETS = ("hansel-train", "hansel-fewshot", "hansel-zeroshot")

_ROOT = Path(tempfile.mkdtemp(prefix="entbench-hansel-tests-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
_BUILT: dict[tuple[Any, ...], dict[str, Path]] = {}
_OUTS: dict[tuple[Any, ...], Path] = {}


def out_dir(sources: Sequence[str] = PAIR, workers: int = 1) -> Path:
    """The shared output directory of builds with these sources and worker count."""
    return _OUTS.setdefault((tuple(sources), workers), _ROOT / f"w{workers}-{len(_OUTS)}")


def build(
    targets: Sequence[str] = TARGETS,
    *,
    sources: Sequence[str] = PAIR,
    params: Sequence[str] = (),
    workers: int = 1,
    out: Path | None = None,
) -> dict[str, Path]:
    """Build `targets` (cached per arguments); stage name -> output directory of every stage."""
    key = (tuple(targets), tuple(sources), tuple(params), workers, out)
    if key not in _BUILT:
        directory = out or out_dir(sources, workers)
        dirs: dict[str, Path] = {}
        for target in targets:
            dirs.update(
                api.build(
                    target,
                    config=SAMPLES_CONFIG,
                    sources=sources,
                    params=params,
                    out=directory,
                    workers=workers,
                    progress=False,
                    log=lambda _m: None,
                    card=False,  # the tests read the tables; the Hansel cards' tests are tests/cards'
                )
            )
        _BUILT[key] = dirs
    return _BUILT[key]


def rows(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    """A table's rows as dicts, in shard order."""
    result: list[dict[str, Any]] = read_table(stage_dir, table).to_pylist()
    return result


def table(stage_dir: Path, name: str) -> pa.Table:
    """A table, in shard order."""
    return read_table(stage_dir, name)


def zhwiki_sitelinks(path: Path = NEW) -> dict[str, str]:
    """zhwiki title -> QID from the raw dump (stdlib json, independent of the scan)."""
    out = {}
    for qid, doc in read_dump(path).entities.items():
        link = (doc.get("sitelinks") or {}).get("zhwiki")
        if link:
            out[link["title"]] = qid
    return out
