"""Reading built stage directories back: find them, describe them, verify them.

`describe` returns a stage directory's manifest summary, schema, stats and sample rows as JSON;
`render_text` lays it out for a terminal (aligned tables, sample rows as a grid or, when too wide,
one record per block, with East Asian characters counted double-width). `verify_build` re-hashes
every file a manifest lists, and for a build directory also checks that every stage its
`targets/*.json` listings name is there and complete.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from entbench.engine.build_out import listed_stages
from entbench.engine.manifest import MANIFEST_NAME, RUN_NAME, load_manifest, manifest_files, parse_manifest
from entbench.engine.shards import file_sha256
from entbench.engine.store import Store
from entbench.errors import UserError

INCOMPLETE = ".incomplete"


def stage_dirs(directory: str | Path) -> list[Path]:
    """Complete stage directories at or under `directory` (a stage dir, a build `--out`, or in between)."""
    root = Path(directory)
    if (root / MANIFEST_NAME).is_file():
        return [root]
    found = sorted(
        p.parent
        for p in root.rglob(MANIFEST_NAME)
        if INCOMPLETE not in p.parts and not p.parent.name.startswith(".")
    )
    if not found:
        raise UserError(f"{root}: no complete stage directory (with {MANIFEST_NAME}) found here")
    return found


@dataclass(frozen=True)
class IncompleteStage:
    """A stage left unfinished (killed or failed build): re-running the build resumes it."""

    directory: Path
    shards_done: int
    num_shards: int | None  # from the shard names seen so far, None if no shard was written yet


def incomplete_dirs(directory: str | Path) -> list[IncompleteStage]:
    """Resumable `.incomplete/v*` stage directories under a build directory, with their progress."""
    root = Path(directory)
    found = []
    for work in sorted(root.glob(f"**/{INCOMPLETE}/v*")):
        if not work.is_dir():
            continue
        markers = sorted((work / "_shards").glob("part-*.json"))
        total = None
        for marker in markers:
            try:
                record = json.loads(marker.read_text(encoding="utf-8"))
                name = next(iter(record["tables"].values()))["file"]
                total = int(Path(name).stem.rsplit("-of-", 1)[1])
                break
            except (OSError, ValueError, KeyError, IndexError, StopIteration):
                continue
        found.append(IncompleteStage(work, len(markers), total))
    return found


# --- verify ----------------------------------------------------------------------------------------
def verify_dir(directory: Path) -> tuple[str, int]:
    """Re-hash every file the manifest lists: ('' or the first problem, number of files checked).

    Sizes are compared as each file is reached (a truncated file is named as such), then content.
    An unreadable manifest is a problem of the directory, not a usage error.
    """
    try:
        manifest = load_manifest(directory)
    except UserError as exc:
        return f"{MANIFEST_NAME}: unreadable ({exc})", 0
    try:
        entries = manifest_files(manifest)
    except (KeyError, TypeError) as exc:
        return f"{MANIFEST_NAME}: malformed (missing {exc})", 0
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


@dataclass
class VerifyReport:
    """What `verify_build` checked and the first problem it found ('' if none)."""

    directories: Sequence[Path | str] = field(default_factory=list)  # str: a store's stage URLs
    files_checked: int = 0
    problem: str = ""
    problem_dir: Path | str | None = None
    incomplete: list[IncompleteStage] = field(default_factory=list)


def verify_build(directory: str | Path) -> VerifyReport:
    """Verify a stage directory or every stage of a build; stops at the first bad file.

    For a build directory, each `targets/<TARGET>.json` must name existing stage directories with a
    manifest (a deleted manifest would otherwise hide a stage from the search); unfinished
    `.incomplete` stages are listed, not failed: the next build resumes them.
    """
    root = Path(directory)
    report = VerifyReport()
    listed = _listed_stage_dirs(root, report)
    if report.problem:
        return report
    try:
        dirs = stage_dirs(root)
    except UserError:
        if not listed:
            raise
        dirs = []
    seen = {d.resolve() for d in dirs}
    dirs += [d for d in listed if d.resolve() not in seen]
    report.directories = sorted(dirs)
    for d in sorted(dirs):
        problem, n = verify_dir(d)
        report.files_checked += n
        if problem:
            report.problem, report.problem_dir = problem, d
            return report
    if not (root / MANIFEST_NAME).is_file():
        report.incomplete = incomplete_dirs(root)
    return report


def verify_store(url: str) -> VerifyReport:
    """`verify_build` for a build published to a store (`--out s3://…`): every stage directory with
    a manifest there, and every one a `targets/*.json` listing names, is re-hashed as it streams
    from the store; stops at the first bad file."""
    store = Store(url)
    report = VerifyReport()
    rels = store.stage_dirs()
    for name, _size in store.iter_files("targets"):
        try:
            items = sorted(listed_stages(store.read_bytes(f"targets/{name}") or b"").items())
        except ValueError as exc:
            report.problem, report.problem_dir = (
                f"{name}: unreadable target listing ({exc})",
                store.location("targets"),
            )
            return report
        for stage, rel in items:
            if rel not in rels:
                report.problem = f"stage {stage} listed in {name}: {rel} has no manifest in the store"
                report.problem_dir = store.url
                return report
    report.directories = [store.location(rel) for rel in rels]
    for rel in rels:
        problem, n = _verify_store_dir(store, rel)
        report.files_checked += n
        if problem:
            report.problem, report.problem_dir = problem, store.location(rel)
            return report
    return report


def _verify_store_dir(store: Store, rel: str) -> tuple[str, int]:
    try:
        where = store.location(f"{rel}/{MANIFEST_NAME}")
        manifest = parse_manifest(store.read_bytes(f"{rel}/{MANIFEST_NAME}") or b"", where)
        entries = manifest_files(manifest)
    except (UserError, KeyError, TypeError) as exc:
        return f"{MANIFEST_NAME}: unreadable ({exc})", 0
    sizes = dict(store.iter_files(rel))
    for n, entry in enumerate(entries):
        size = sizes.get(entry["file"])
        if size is None:
            return f"{entry['file']}: missing", n
        if size != entry["bytes"]:
            return f"{entry['file']}: {size} bytes, manifest says {entry['bytes']} (truncated?)", n
        digest = hashlib.sha256()
        with store.open(f"{rel}/{entry['file']}") as f:
            while block := f.read(1 << 22):
                digest.update(block)
        if digest.hexdigest() != entry["sha256"]:
            return f"{entry['file']}: sha256 differs from the manifest (corrupted)", n
    return "", len(entries)


def _listed_stage_dirs(root: Path, report: VerifyReport) -> list[Path]:
    listed: list[Path] = []
    for listing in sorted((root / "targets").glob("*.json")):
        try:
            items = sorted(listed_stages(listing.read_bytes()).items())
        except (OSError, ValueError) as exc:
            report.problem, report.problem_dir = (
                f"{listing.name}: unreadable target listing ({exc})",
                listing.parent,
            )
            return listed
        for stage, rel in items:
            path = root / rel
            if not (path / MANIFEST_NAME).is_file():
                what = "has no manifest" if path.is_dir() else "is missing"
                report.problem = f"stage {stage} listed in {listing.name}: {rel} {what}"
                report.problem_dir = root
                return listed
            listed.append(path)
    return listed


def build_manifests(directory: str | Path, *, target: str | None = None) -> list[dict[str, Any]]:
    """The manifests of a build (every complete stage directory), or of one target's stages."""
    root = Path(directory)
    if target is None:
        return [load_manifest(d) for d in stage_dirs(root)]
    listing = root / "targets" / f"{target}.json"
    if not listing.is_file():
        raise UserError(f"{root}: target {target!r} was not built here (no {listing})")
    try:
        stages = json.loads(listing.read_text(encoding="utf-8"))["stages"]
    except (ValueError, KeyError) as exc:
        raise UserError(f"{listing}: not a target listing ({exc})") from exc
    return [load_manifest(root / rel) for _, rel in sorted(stages.items())]


# --- describe --------------------------------------------------------------------------------------
def describe(directory: Path, *, sample_rows: int = 5, tables: Sequence[str] = ()) -> dict[str, Any]:
    """Manifest summary, schema, stats and the first rows of each table (or only of `tables`)."""
    run_path = directory / RUN_NAME
    return _describe(
        load_manifest(directory),
        str(directory),
        lambda name: pq.ParquetFile(directory / name),
        json.loads(run_path.read_text(encoding="utf-8")) if run_path.exists() else None,
        sample_rows=sample_rows,
        tables=tables,
    )


def describe_store(url: str, *, sample_rows: int = 5, tables: Sequence[str] = ()) -> list[dict[str, Any]]:
    """`describe_all` for a build published to a store, or one stage directory in it: manifests and
    the first rows of each table, read from the store (a Parquet footer and one row group)."""
    store = Store(url)
    rels = [""] if store.exists(MANIFEST_NAME) else store.stage_dirs()
    if not rels:
        raise UserError(f"{store.url}: no complete stage directory (with {MANIFEST_NAME}) found there")
    reports = []
    for rel in rels:
        prefix = f"{rel}/" if rel else ""
        manifest = parse_manifest(
            store.read_bytes(f"{prefix}{MANIFEST_NAME}") or b"", store.location(f"{prefix}{MANIFEST_NAME}")
        )
        wanted = [t for t in tables if t in manifest["outputs"]]
        if tables and not wanted:
            continue
        run = store.read_bytes(f"{prefix}{RUN_NAME}")
        reports.append(
            _describe(
                manifest,
                store.location(rel),
                functools.partial(_open_stored, store, prefix),
                json.loads(run) if run else None,
                sample_rows=sample_rows,
                tables=wanted,
            )
        )
    if not reports:
        raise UserError(f"{store.url}: no stage has a table named {', '.join(tables)}")
    return reports


def _open_stored(store: Store, prefix: str, name: str) -> pq.ParquetFile:
    return pq.ParquetFile(store.open(f"{prefix}{name}"))


def _describe(
    manifest: dict[str, Any],
    where: str,
    open_shard: Callable[[str], pq.ParquetFile],
    run: Any,
    *,
    sample_rows: int,
    tables: Sequence[str],
) -> dict[str, Any]:
    unknown = sorted(set(tables) - set(manifest["outputs"]))
    if unknown:
        raise UserError(f"{where}: no table(s) {unknown}; tables: {', '.join(sorted(manifest['outputs']))}")
    described: dict[str, Any] = {}
    for name, out in sorted(manifest["outputs"].items()):
        if tables and name not in tables:
            continue
        samples: list[dict[str, Any]] = []
        for shard in out["shards"]:
            if len(samples) >= sample_rows:
                break
            if shard["rows"]:
                batch = next(open_shard(shard["file"]).iter_batches(batch_size=sample_rows - len(samples)))
                samples.extend(batch.to_pylist())
        described[name] = {
            "rows": out["rows"],
            "num_shards": out["num_shards"],
            "schema": out["schema"],
            "sort_by": out["sort_by"],
            "sample": samples[:sample_rows],
        }
    return {
        "directory": where,
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
        "tables": described,
        "run": run,
    }


def describe_all(
    directory: str | Path, *, sample_rows: int = 5, tables: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """`describe` every stage directory at or under `directory`; with `tables`, only the stages
    having one of them, and only those tables."""
    reports = []
    for d in stage_dirs(directory):
        if not tables:
            reports.append(describe(d, sample_rows=sample_rows))
            continue
        wanted = [t for t in tables if t in load_manifest(d)["outputs"]]
        if wanted:
            reports.append(describe(d, sample_rows=sample_rows, tables=wanted))
    if not reports:
        raise UserError(f"{directory}: no stage has a table named {', '.join(tables)}")
    return reports


# --- text layout -----------------------------------------------------------------------------------
def display_width(text: str) -> int:
    """Terminal columns `text` takes: East Asian wide/fullwidth characters 2, combining marks 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` columns, with an ellipsis when cut."""
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = 0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def pad(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded with spaces to `width` columns."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def cell(value: Any) -> str:
    """A value as one line of text (JSON for lists and structs, `null` for None)."""
    if value is None:
        return "null"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("\n", "\\n").replace("\t", " ")


def grid(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, max_cell: int = 40, numeric: Sequence[bool] = ()
) -> list[str]:
    """An aligned text table: header, a rule, then rows; cells clipped to `max_cell` columns."""
    body = [[clip(c, max_cell) for c in row] for row in rows]
    head = [clip(h, max_cell) for h in header]
    widths = [max([display_width(h)] + [display_width(r[i]) for r in body]) for i, h in enumerate(head)]
    right = list(numeric) + [False] * (len(head) - len(numeric))
    lines = ["  ".join(pad(h, w, right=r) for h, w, r in zip(head, widths, right, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(pad(c, w, right=r) for c, w, r in zip(row, widths, right, strict=True)).rstrip()
        for row in body
    ]
    return lines


def _sample_lines(columns: list[str], sample: list[dict[str, Any]], width: int) -> list[str]:
    """Sample rows as a grid if it fits in `width` columns, else as one block per record."""
    cells = [[cell(row.get(c)) for c in columns] for row in sample]
    table = grid(columns, cells, max_cell=32)
    if max(display_width(line) for line in table) + 4 <= width:
        return table
    name_width = max(display_width(c) for c in columns)
    lines: list[str] = []
    for i, row in enumerate(cells, 1):
        lines.append(f"-[ row {i} ]" + "-" * max(0, min(width - 4, 40) - 10))
        lines += [
            f"{pad(c, name_width)}  {clip(v, max(20, width - name_width - 6))}"
            for c, v in zip(columns, row, strict=True)
        ]
    return lines


def render_text(report: dict[str, Any], *, width: int = 120) -> str:
    """A human-readable rendering of `describe`'s report, laid out for `width` terminal columns."""
    indent = "  "
    lines = [
        f"{report['layer']}/{report['stage']} v{report['version']}  fingerprint {report['fingerprint'][:12]}"
    ]
    lines.append(f"{indent}directory  {report['directory']}")
    if report["description"]:
        lines.append(f"{indent}computes   {report['description']}")
    for name, src in report["sources"].items():
        lines.append(
            f"{indent}source     {name}: {src['path']} ({src['size']:,} bytes, sha256 {src['sha256'][:12]})"
        )
    for name, up in report["inputs"].items():
        lines.append(f"{indent}input      {name}: fingerprint {up['fingerprint'][:12]}")
    params = "  ".join(f"{k}={cell(v)}" for k, v in sorted(report["params"].items())) or "(none)"
    lines.append(f"{indent}params     {clip(params, max(40, width - 13))}")
    run = report.get("run")
    if run:
        lines.append(
            f"{indent}run        {run.get('seconds', '?')} s, {run.get('workers', '?')} worker(s), "
            f"{run.get('executor', '?')} executor, entbench {run.get('entbench', '?')}"
        )
    for name, info in sorted(report["files"].items()):
        lines.append(f"{indent}file       {name} ({info['bytes']:,} bytes)")
    if report["stats"]:
        lines += ["", f"{indent}stats"]
        rows = [
            (k, f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else cell(v))
            for k, v in report["stats"].items()
        ]
        lines += [
            indent * 2 + line for line in grid(["counter", "value"], rows, max_cell=60, numeric=(False, True))
        ]
    for name, info in report["tables"].items():
        shards = "shard" if info["num_shards"] == 1 else "shards"
        lines += [
            "",
            f"{indent}table {name}: {info['rows']:,} rows in {info['num_shards']} {shards}, sorted by "
            f"{', '.join(info['sort_by'])}",
        ]
        schema_rows = [(f["name"], f["type"], "" if f["nullable"] else "not null") for f in info["schema"]]
        type_width = min(72, max(20, width - 4 - max(len(f["name"]) for f in info["schema"]) - 14))
        lines += [
            indent * 2 + line for line in grid(["column", "type", ""], schema_rows, max_cell=type_width)
        ]
        if info["sample"]:
            columns = [f["name"] for f in info["schema"]]
            lines += ["", f"{indent * 2}first {len(info['sample'])} row(s):"]
            lines += [indent * 2 + line for line in _sample_lines(columns, info["sample"], width - 4)]
    return "\n".join(lines)


def render_overview(
    reports: Sequence[dict[str, Any]], incomplete: Sequence[IncompleteStage], *, root: Path
) -> str:
    """One line per stage of a build (rows per table), then its unfinished stages."""
    rows = []
    for r in reports:
        tables = ", ".join(f"{name} {info['rows']:,}" for name, info in r["tables"].items())
        rows.append((f"{r['layer']}/{r['stage']}", f"v{r['version']}", r["fingerprint"][:12], tables))
    lines = grid(["stage", "version", "fingerprint", "rows"], rows, max_cell=80)
    for stage in incomplete:
        total = "?" if stage.num_shards is None else str(stage.num_shards)
        lines.append(
            f"incomplete: {stage.directory.relative_to(root)} ({stage.shards_done}/{total} shards done; "
            "re-run the build to resume)"
        )
    return "\n".join(lines)
