"""Source dumps are identified by size and sha256; hashing a 100 GB dump takes a minute, so it is cached.

The cache maps a path to the (size, mtime_ns, inode, sha256) seen last time: the cheap stat check
comes first, as dvc does, and the content is only re-hashed when the file changed on disk. It is
per user, not per output directory (`$ENTBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/entbench`, else
`~/.cache/entbench`), so building several outputs from one dump hashes it once.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import SourceInfo, Stage
from entbench.errors import UserError
from entbench.readers.cache import default_cache_dir

if TYPE_CHECKING:
    from entbench.engine.config import BuildConfig
    from entbench.engine.registry import Alias


def identify_source(
    name: str, path: str, label: str, cache_dir: Path | None = None, *, progress: bool = True
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
        cache[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino, "sha256": digest}
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            atomic_write_text(cache_path, json.dumps(cache, sort_keys=True, indent=1))
        except OSError:
            pass  # a read-only home only costs re-hashing next time
    return SourceInfo(name=name, path=key, label=label, size=st.st_size, sha256=digest)


def _sha256_with_progress(path: Path, size: int, name: str, progress: bool) -> str:
    h = hashlib.sha256()
    show = progress and size > (256 << 20)
    with (
        open(path, "rb") as f,
        tqdm(
            total=size, desc=f"hash {name}", unit="B", unit_scale=True, disable=not show, leave=False
        ) as bar,
    ):
        while block := f.read(1 << 22):
            h.update(block)
            bar.update(len(block))
    return h.hexdigest()


def check_sources(
    target: str,
    order: Sequence[Stage],
    config: BuildConfig,
    known: Iterable[str],
    aliases: Mapping[str, Alias] | None = None,
) -> list[str]:
    """The `--source` names given that `target` does not read (but another target does); a
    `UserError` for a name no target reads (with the closest of the target's, a likely typo) or for
    every source the target needs and was not given (naming the aliases it is accepted under).
    `config` has its aliases resolved already (`config.resolve_aliases`)."""
    needed = list(dict.fromkeys(name for stage in order for name in stage.sources))
    reads = ", ".join(needed) or "no source"
    known_names = set(known)
    unused = []
    for name in config.given_sources:
        if name in needed:
            continue
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
