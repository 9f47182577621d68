"""Reading built stage directories back: find them, describe them, verify them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from entbench.builders.manifest import MANIFEST_NAME, load_manifest, manifest_files
from entbench.builders.shards import file_sha256
from entbench.errors import UserError


def stage_dirs(directory: str | Path) -> list[Path]:
    """Complete stage directories at or under `directory` (a stage dir, a build `--out`, or in between)."""
    root = Path(directory)
    if (root / MANIFEST_NAME).is_file():
        return [root]
    found = sorted(
        p.parent
        for p in root.rglob(MANIFEST_NAME)
        if ".incomplete" not in p.parts and not p.parent.name.startswith(".")
    )
    if not found:
        raise UserError(f"{root}: no complete stage directory (with {MANIFEST_NAME}) found here")
    return found


def verify_dir(directory: Path) -> tuple[str, int]:
    """Re-hash every file the manifest lists: ('' or the first problem, number of files checked)."""
    manifest = load_manifest(directory)
    entries = manifest_files(manifest)
    for n, entry in enumerate(entries):
        path = directory / entry["file"]
        if not path.is_file():
            return f"{entry['file']}: missing", n
        size = path.stat().st_size
        if size != entry["bytes"]:
            return f"{entry['file']}: {size} bytes, manifest says {entry['bytes']} (truncated?)", n
        if file_sha256(path) != entry["sha256"]:
            return f"{entry['file']}: sha256 differs from the manifest (corrupted)", n
    return "", len(entries)


def describe(directory: Path, *, sample_rows: int = 5) -> dict[str, Any]:
    """Manifest summary, schema, stats and the first rows of each table."""
    manifest = load_manifest(directory)
    tables: dict[str, Any] = {}
    for name, out in sorted(manifest["outputs"].items()):
        samples: list[dict[str, Any]] = []
        for shard in out["shards"]:
            if len(samples) >= sample_rows:
                break
            if shard["rows"]:
                pf = pq.ParquetFile(directory / shard["file"])
                batch = next(pf.iter_batches(batch_size=sample_rows - len(samples)))
                samples.extend(batch.to_pylist())
        tables[name] = {
            "rows": out["rows"],
            "num_shards": out["num_shards"],
            "schema": out["schema"],
            "sort_by": out["sort_by"],
            "sample": samples[:sample_rows],
        }
    run_path = directory / "_RUN.json"
    return {
        "directory": str(directory),
        "stage": manifest["stage"],
        "layer": manifest.get("layer"),
        "version": manifest["version"],
        "fingerprint": manifest["fingerprint"],
        "description": manifest.get("description", ""),
        "params": manifest["params"],
        "sources": manifest["sources"],
        "inputs": manifest["inputs"],
        "stats": manifest["stats"],
        "files": manifest.get("files", {}),
        "tables": tables,
        "run": json.loads(run_path.read_text(encoding="utf-8")) if run_path.exists() else None,
    }


def _cell(value: Any, width: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else value
    text = text.replace("\n", "\\n").replace("\t", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def render_text(report: dict[str, Any]) -> str:
    """A human-readable rendering of `describe`'s report."""
    lines = [
        f"{report['layer']}/{report['stage']} v{report['version']}  fingerprint {report['fingerprint'][:12]}",
        f"  {report['directory']}",
    ]
    if report["description"]:
        lines.append(f"  {report['description']}")
    for name, src in report["sources"].items():
        lines.append(f"  source {name}: {src['path']} ({src['size']:,} bytes, sha256 {src['sha256'][:12]})")
    for name, up in report["inputs"].items():
        lines.append(f"  input  {name}: fingerprint {up['fingerprint'][:12]}")
    lines.append("  params: " + json.dumps(report["params"], ensure_ascii=False, sort_keys=True))
    if report["stats"]:
        lines.append("  stats:")
        width = max(len(k) for k in report["stats"])
        for key, value in report["stats"].items():
            shown = f"{value:,}" if isinstance(value, int) else str(value)
            lines.append(f"    {key:<{width}}  {shown:>12}")
    for name, info in report["tables"].items():
        lines.append(
            f"  table {name}: {info['rows']:,} rows in {info['num_shards']} shard(s), "
            f"sorted by {info['sort_by']}"
        )
        for field in info["schema"]:
            lines.append(f"    {field['name']:<24} {field['type']}{'' if field['nullable'] else ' not null'}")
        if info["sample"]:
            columns = [f["name"] for f in info["schema"]][:8]
            lines.append("    " + " | ".join(_cell(c, 18) for c in columns))
            for row in info["sample"]:
                lines.append("    " + " | ".join(_cell(row.get(c), 18) for c in columns))
    return "\n".join(lines)
