"""The per-user cache directory: source dumps' hashes (`engine.sources`) and the seek indexes of
gzip dumps that cannot be written beside them (`readers.compressed.gzip_index`).

`$ENTBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/entbench`, else `~/.cache/entbench`.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """Where per-user caches live."""
    explicit = os.environ.get("ENTBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "entbench"
