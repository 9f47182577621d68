"""Manifests (`entbench.manifest/1`): what a stage directory holds and how to check it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from entbench.engine.shards import atomic_write_text, file_sha256
from entbench.engine.stage import UpstreamOutput
from entbench.errors import UserError

MANIFEST_FORMAT = "entbench.manifest/1"
MANIFEST_NAME = "_MANIFEST.json"
RUN_NAME = "_RUN.json"


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: the form fingerprints are computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load_manifest(directory: Path) -> dict[str, Any]:
    """Read and sanity-check a stage directory's manifest."""
    path = directory / MANIFEST_NAME
    if not path.is_file():
        raise UserError(f"{directory}: no {MANIFEST_NAME} (not a complete entbench stage directory)")
    return parse_manifest(path.read_bytes(), str(path))


def parse_manifest(raw: bytes, where: str) -> dict[str, Any]:
    """Parse and sanity-check a manifest's bytes (read from a directory or a store); `where`
    names it in the error."""
    try:
        manifest: dict[str, Any] = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise UserError(f"{where}: not valid JSON ({exc})") from exc
    if manifest.get("format") != MANIFEST_FORMAT:
        raise UserError(f"{where}: format {manifest.get('format')!r}, expected {MANIFEST_FORMAT!r}")
    return manifest


def manifest_files(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Every file a manifest lists (shards of all tables, then extra files), with bytes and sha256."""
    entries: list[dict[str, Any]] = []
    for table in sorted(manifest["outputs"]):
        entries.extend(manifest["outputs"][table]["shards"])
    for name, info in sorted(manifest.get("files", {}).items()):
        entries.append({"file": name, **info})
    return entries


def check_complete(directory: Path, *, rehash: bool = True, trust_stamps: bool = True) -> str:
    """'' if the directory matches its manifest, else a description of the first problem found.

    Sizes are compared first (cheap), then content hashes, except of files whose size, mtime and
    inode are still those `_RUN.json` recorded when the stage was written: re-hashing every
    upstream shard on every build took minutes for a full dump's stages. `entbench verify`
    re-hashes everything, as does `trust_stamps=False` (a directory copied from elsewhere, whose
    `_RUN.json` describes another machine's files)."""
    try:
        manifest = load_manifest(directory)
    except UserError as exc:
        return str(exc)
    entries = manifest_files(manifest)
    for entry in entries:
        path = directory / entry["file"]
        if not path.is_file():
            return f"shard {entry['file']} is missing"
        if path.stat().st_size != entry["bytes"]:
            return f"shard {entry['file']} has {path.stat().st_size} bytes, manifest says {entry['bytes']}"
    if rehash:
        stamps = _recorded_stamps(directory) if trust_stamps else {}
        for entry in entries:
            path = directory / entry["file"]
            if stamps.get(entry["file"]) == file_stamp(path):
                continue
            if file_sha256(path) != entry["sha256"]:
                return f"shard {entry['file']} does not match its sha256 in the manifest"
    return ""


def file_stamp(path: Path) -> list[int]:
    """What changes when a file is rewritten: size, mtime (ns) and inode."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def file_stamps(directory: Path) -> dict[str, list[int]]:
    """`file_stamp` of every file the directory's manifest lists (recorded in `_RUN.json`)."""
    return {e["file"]: file_stamp(directory / e["file"]) for e in manifest_files(load_manifest(directory))}


def refresh_stamps(directory: Path) -> None:
    """Record the current stamps of a directory whose files were all just hashed against its
    manifest (a downloaded or copied stage), so later builds need not hash them again."""
    path = directory / RUN_NAME
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run = {}
    if not isinstance(run, dict):
        run = {}
    run["file_stamps"] = file_stamps(directory)
    atomic_write_text(path, json.dumps(run, indent=2, sort_keys=True) + "\n")


def _recorded_stamps(directory: Path) -> dict[str, list[int]]:
    try:
        run = json.loads((directory / RUN_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    stamps = run.get("file_stamps") if isinstance(run, dict) else None
    return stamps if isinstance(stamps, dict) else {}


def upstream_from_manifest(directory: Path, raw: bytes | None = None) -> UpstreamOutput:
    """How downstream stages see a complete stage directory.

    With `raw` (a manifest read from a store) the directory need not exist yet: the paths are
    where the stage will be downloaded to if a downstream stage has to read it."""
    if raw is None:
        load_manifest(directory)
        raw = (directory / MANIFEST_NAME).read_bytes()
    manifest = json.loads(raw.decode("utf-8"))
    tables = {
        name: tuple(str((directory / s["file"]).resolve()) for s in out["shards"])
        for name, out in manifest["outputs"].items()
    }
    return UpstreamOutput(
        stage=manifest["stage"],
        directory=str(directory.resolve()),
        fingerprint=manifest["fingerprint"],
        manifest_sha256=hashlib.sha256(raw).hexdigest(),
        tables=tables,
        params=manifest["params"],
        stats=manifest["stats"],
        sizes={
            name: tuple(int(s["bytes"]) for s in out["shards"]) for name, out in manifest["outputs"].items()
        },
        side_files={
            file[1 : -len(".json")]: str((directory / file).resolve())
            for file in manifest.get("files", {})
            if file.startswith("_") and file.endswith(".json")
        },
    )
