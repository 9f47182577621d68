"""Source dumps are identified by size and sha256; hashing a 100 GB dump takes a minute, so it is cached.

The cache maps a path to the (size, mtime_ns, inode, sha256) seen last time: the cheap stat check
comes first, as dvc does, and the content is only re-hashed when the file changed on disk. It is
per user, not per output directory (`$ENTBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/entbench`, else
`~/.cache/entbench`), so building several outputs from one dump hashes it once.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from entbench.engine.progress import StageBar
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import SourceInfo, Stage
from entbench.errors import UserError
from entbench.readers.cache import default_cache_dir
from entbench.readers.head import KINDS, cut_head

if TYPE_CHECKING:
    from entbench.engine.config import BuildConfig
    from entbench.engine.registry import Alias


def identify_source(
    name: str,
    path: str,
    label: str,
    cache_dir: Path | None = None,
    *,
    progress: bool = True,
    limit: str = "",
) -> SourceInfo:
    """Stat and hash a source file (hash cached by size and mtime)."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"source {name}: file not found: {label}")
    if not p.is_file():
        raise UserError(f"source {name}: not a regular file: {label}")
    st = p.stat()
    cache_dir = cache_dir or default_cache_dir()
    cache_path = cache_dir / "sources.json"
    cache: dict[str, dict[str, object]] = {}
    if cache_path.exists():
        try:
            cache = json.loads(cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cache = {}
    key = str(p.resolve())
    hit = cache.get(key)
    if (
        hit
        and hit.get("size") == st.st_size
        and hit.get("mtime_ns") == st.st_mtime_ns
        and hit.get("inode") == st.st_ino
    ):
        digest = str(hit["sha256"])
    else:
        digest = _sha256_with_progress(p, st.st_size, name, progress)
        cache = {path: entry for path, entry in cache.items() if _exists(path)}
        cache[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino, "sha256": digest}
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            # Compact, so that json's C encoder writes it (with `indent` the Python one does, ~0.1 s
            # per 1000 entries at every new source).
            atomic_write_text(cache_path, json.dumps(cache, sort_keys=True, separators=(",", ":")))
        except OSError:
            pass  # a read-only home only costs re-hashing next time
    return SourceInfo(name=name, path=key, label=label, size=st.st_size, sha256=digest, limit=limit)


def _exists(path: str) -> bool:
    """Whether the cached `path` is still a file: entries of deleted files (a test's or a user's
    temporary dumps) can never match again, so the cache keeps only files that exist."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def _sha256_with_progress(path: Path, size: int, name: str, progress: bool) -> str:
    h = hashlib.sha256()
    bar = StageBar(f"hash {name}", total=size, unit="B", items="", enabled=progress and size > (256 << 20))
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                h.update(block)
                bar.update(len(block))
    finally:
        bar.close()
    return h.hexdigest()


def check_sources(
    target: str,
    order: Sequence[Stage],
    config: BuildConfig,
    known: Callable[[], Iterable[str]],
    aliases: Mapping[str, Alias] | None = None,
) -> list[str]:
    """The `--source` names given that `target` does not read (but another target does); a
    `UserError` for a name no target reads (with the closest of the target's, a likely typo) or for
    every source the target needs and was not given (naming the aliases it is accepted under).
    `config` has its aliases resolved already (`config.resolve_aliases`). `known()` gives every
    source a stage reads (`registry.source_names`), asked for only when a source given is not the
    target's: it makes every dataset's stages."""
    needed = list(dict.fromkeys(name for stage in order for name in stage.sources))
    reads = ", ".join(needed) or "no source"
    known_names: set[str] | None = None
    unused = []
    for name in config.given_sources:
        if name in needed:
            continue
        if known_names is None:
            known_names = set(known())
        if name in known_names:
            unused.append(name)
            continue
        close = difflib.get_close_matches(name, needed, n=1) or difflib.get_close_matches(
            name, known_names, n=1
        )
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UserError(
            f"--source {name}: no target reads a source of that name{hint}; {target} reads {reads}"
        )
    missing = [name for name in needed if name not in config.sources]
    if missing:
        flags = " ".join(f"--source {name}=PATH" for name in missing)
        noun = "source" if len(missing) == 1 else "sources"
        accepted = "".join(
            f"; {a.alias}, {a.why}, is accepted for {a.name} too"
            for a in sorted((aliases or {}).values(), key=lambda a: a.alias)
            if a.name in missing
        )
        raise UserError(
            f"target {target} needs {noun} {', '.join(missing)}: pass {flags} "
            f"(or name {'it' if len(missing) == 1 else 'them'} in [sources] of a --config file{accepted}); "
            f"it reads {reads}"
        )
    return unused


def human_bytes(size: int) -> str:
    """A size as people read it: 512 B, 3.4 MB, 120.5 GB (powers of 1000, as disks are sold)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


#: Where a trial build's cut dumps are written, under the build (or work) directory.
LIMITED_DIR = ".limited"


def limit_sources(
    order: Sequence[Stage], config: BuildConfig, n: int, directory: Path, log: Callable[[str], None]
) -> BuildConfig:
    """The config of a trial build (`build --limit N`): each source the stages read replaced by the
    first `n` entities, pages or lines of its dump (`readers.head`, by the `Stage.source_kind` of
    the stage reading it; written under `directory`), whose own size and sha256 then give every
    stage its own fingerprint; each source keeps its label, and records what was kept in
    `source_limits` (and the manifests)."""
    if n < 1:
        raise UserError(f"--limit must be at least 1, got {n}")
    readers: dict[str, Stage] = {}
    for stage in order:
        for name in stage.sources:
            readers.setdefault(name, stage)
    sources = dict(config.sources)
    limits = dict(config.source_limits)
    for name, stage in readers.items():
        path, label = config.sources[name], config.source_labels.get(name, config.sources[name])
        if "://" in path:
            raise UserError(f"--limit: source {name} is a URL ({label}); give a local file")
        if not Path(path).is_file():
            raise UserError(f"source {name}: file not found: {label}")
        if stage.source_kind not in KINDS:
            raise UserError(f"--limit: source {name} (read by {stage.stage_name}) cannot be cut short")
        unit, suffix, _ = KINDS[stage.source_kind]
        dest = directory / f"{name}-first-{n}.{suffix}"
        kept = cut_head(stage.source_kind, path, n, dest)
        sources[name] = str(dest)
        limits[name] = f"first {kept:,} {unit} of {Path(label).name}"
        log(f"source {name}: --limit {n}: the {limits[name]} ({human_bytes(dest.stat().st_size)}, {dest})")
    return dataclasses.replace(config, sources=sources, source_limits=limits)
