"""Helpers of the kb tests: build quietly, read stage tables back, and read the raw dumps independently.

The raw-dump reader here is the tests' own (stdlib `json`, no entbench code), so expectations
computed from it are independent of the scan and of the kb stages.
"""

from __future__ import annotations

import bz2
import gzip
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench import api
from entbench.engine import tasks
from entbench.engine.manifest import load_manifest
from tests.conftest import SAMPLES_CONFIG

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
OLD_DUMP = FIXTURES / "wikidata" / "entities-old.json.bz2"
NEW_DUMP = FIXTURES / "wikidata" / "entities-new.json.bz2"
HIERARCHY_DUMP = FIXTURES / "wikidata" / "kgtk-arnold.hierarchy.json.gz"
KB_STAGES = ("internal_filter", "entity_diff", "type_closure", "coarse_types", "top_snaks")


def die_after(monkeypatch: pytest.MonkeyPatch, task: str, calls: int) -> Callable[..., Any]:
    """Make the task function `task` (`map_task`, `merge_task`, `shard_task`) raise
    KeyboardInterrupt, a simulated kill, once it has run `calls` times (inline: `--workers 1`);
    returns the original, to put back before the resume."""
    original: Callable[..., Any] = getattr(tasks, task)
    ran = {"n": 0}

    def dies(*args: Any, **kwargs: Any) -> Any:
        if ran["n"] == calls:
            raise KeyboardInterrupt(f"simulated kill after {calls} {task} call(s)")
        ran["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(tasks, task, dies)
    return original


def build_kb(
    out: Path, *, sources: Sequence[str] = (), params: Sequence[str] = (), workers: int = 1
) -> dict[str, Path]:
    """`entbench build kb` on the test samples' config plus overrides, no output, no card; stage -> dir."""
    return api.build(
        "kb",
        config=SAMPLES_CONFIG,
        sources=sources,
        params=params,
        out=out,
        workers=workers,
        progress=False,
        log=lambda _m: None,
        card=False,
    )


def read_table(stage_dir: Path, table: str) -> pa.Table:
    """All shards of a table, in shard order, as the manifest lists them."""
    manifest = load_manifest(stage_dir)
    files = [stage_dir / s["file"] for s in manifest["outputs"][table]["shards"]]
    return pa.concat_tables([pq.read_table(f) for f in files])


def rows(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    """A table's rows as dicts."""
    result: list[dict[str, Any]] = read_table(stage_dir, table).to_pylist()
    return result


def stats(stage_dir: Path) -> dict[str, Any]:
    """The stage's manifest stats."""
    result: dict[str, Any] = load_manifest(stage_dir)["stats"]
    return result


def shard_hashes(stage_dir: Path, *, files: bool = False) -> dict[str, str]:
    """file -> sha256 of every shard of a stage (and, with `files`, of its extra files)."""
    manifest = load_manifest(stage_dir)
    hashes = {s["file"]: s["sha256"] for out in manifest["outputs"].values() for s in out["shards"]}
    if files:
        hashes.update({name: info["sha256"] for name, info in manifest.get("files", {}).items()})
    return hashes


# --- the raw dumps, read independently --------------------------------------------------------
def dump_lines(path: Path) -> list[str]:
    """Entity lines of a dump (array framing and trailing commas removed)."""
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = [line.strip() for line in handle]
    return [line.rstrip(",") for line in lines if line and line not in ("[", "]")]


@dataclass
class Dump:
    """Entities by id and redirect stubs (from -> to) of one dump."""

    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)

    def items(self) -> dict[str, dict[str, Any]]:
        """Only the items (type item)."""
        return {q: d for q, d in self.entities.items() if d.get("type") == "item"}


def _docs(line: str) -> Iterator[dict[str, Any]]:
    doc = json.loads(line)
    if isinstance(doc.get("entities"), dict):  # Special:EntityData wrapper
        yield from doc["entities"].values()
    else:
        yield doc


def read_dump(path: Path) -> Dump:
    """Parse a dump with stdlib json: entity docs and `{"redirects": {"from", "to"}}` stubs."""
    dump = Dump()
    for line in dump_lines(path):
        for doc in _docs(line):
            redirect = doc.get("redirects")
            if isinstance(redirect, dict):
                dump.redirects[redirect["from"]] = redirect["to"]
            if "id" in doc and "type" in doc:
                dump.entities[doc["id"]] = doc
    return dump


def _value_id(statement: dict[str, Any]) -> str | None:
    value = statement.get("mainsnak", {}).get("datavalue", {}).get("value")
    if not isinstance(value, dict):
        return None
    if "id" in value:
        return str(value["id"])
    if value.get("entity-type") == "item" and "numeric-id" in value:  # 2014-2016 dumps
        return f"Q{value['numeric-id']}"
    return None


def statements(doc: dict[str, Any], prop: str) -> list[dict[str, Any]]:
    """The statements of `prop` (claims, or MediaInfo's statements)."""
    claims = doc.get("claims") or doc.get("statements") or {}
    return list(claims.get(prop, [])) if isinstance(claims, dict) else []


def truthy_items(doc: dict[str, Any], prop: str) -> set[str]:
    """Item values of the truthy statements of `prop`: preferred ones if any, else normal ones."""
    sts = statements(doc, prop)
    best = "preferred" if any(s.get("rank") == "preferred" for s in sts) else "normal"
    values = {_value_id(s) for s in sts if s.get("rank") == best}
    return {v for v in values if v is not None and v.startswith("Q")}


def any_rank_items(doc: dict[str, Any], prop: str) -> set[str]:
    """Item values of every statement of `prop`, whatever its rank (mGENRE reads them all)."""
    values = {_value_id(s) for s in statements(doc, prop)}
    return {v for v in values if v is not None}


def item_properties(doc: dict[str, Any]) -> list[str]:
    """Every property with statements."""
    claims = doc.get("claims") or {}
    return sorted(claims) if isinstance(claims, dict) else []


def sitelink_keys(doc: dict[str, Any]) -> set[str]:
    """Site keys of an entity's sitelinks."""
    links = doc.get("sitelinks")
    return set(links) if isinstance(links, dict) else set()


def compose(out: Path, *dumps: Path) -> Path:
    """A dump holding the entities of `dumps` in order; an id already written is not repeated."""
    seen: set[str] = set()
    lines = []
    for path in dumps:
        for line in dump_lines(path):
            ids = [d.get("id") for d in _docs(line)]
            if any(i in seen for i in ids if i):
                continue
            seen.update(i for i in ids if i)
            lines.append(line)
    out.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    return out
