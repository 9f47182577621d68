"""Plain functions behind the CLI commands (callable from Python and tests)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from entbench.builders.config import load_config
from entbench.builders.runner import Builder
from entbench.builders.shards import is_url
from entbench.builders.stage import BuildOptions
from entbench.errors import UserError


def output_dir(out: str | Path) -> Path:
    """The local directory a build writes to: a path, or a `file://` URL.

    Builds resume through atomic renames and file locks, which object stores do not offer; so any
    other URL scheme is refused here rather than taken for a relative directory named `s3:`."""
    text = str(out)
    if not is_url(text):
        return Path(out)
    parsed = urllib.parse.urlparse(text)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(urllib.parse.unquote(parsed.path))
    raise UserError(
        f"--out {text}: only local or shared-filesystem directories are supported (builds resume "
        "through atomic renames and locks); mount the store (e.g. s3fs, gcsfuse) and pass its path"
    )


def build(
    target: str,
    *,
    config: str | Path | None = None,
    sources: Sequence[str] = (),
    params: Sequence[str] = (),
    out: str | Path = "entbench-out",
    workers: int = 1,
    executor: str = "local",
    dask_address: str | None = None,
    force: bool = False,
    max_bad_lines: int = 0,
    chunk_mb: int = 64,
    progress: bool = True,
    log: object = None,
    card: bool = True,
    shuffle_groups: int = BuildOptions.shuffle_groups,
) -> dict[str, Path]:
    """Build `target` into `out`; returns stage name -> output directory.

    `sources` are `NAME=PATH` overrides, `params` are `STAGE.KEY=VALUE` overrides; with no `config`
    the bundled fixture config is used. With `card` (default) the target's dataset card is written
    to `<out>/cards/<target>/` afterwards (`entbench.cards`). `shuffle_groups` tunes the map-reduce
    shuffle (`builders.buckets`), never the output.
    """
    if workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if max_bad_lines < 0:
        raise UserError(f"--max-bad-lines must be >= 0, got {max_bad_lines}")
    if chunk_mb < 1:
        raise UserError(f"--chunk-mb must be >= 1, got {chunk_mb}")
    if executor not in ("local", "dask"):
        raise UserError(f"--executor must be local or dask, got {executor!r}")
    out = output_dir(out)
    cfg = load_config(config, sources, params)
    options = BuildOptions(
        workers=workers,
        max_bad_lines=max_bad_lines,
        chunk_bytes=chunk_mb << 20,
        executor=executor,
        dask_address=dask_address,
        progress=progress,
        shuffle_groups=shuffle_groups,
    )
    dirs = Builder(out, cfg, options, log=log).build(target, force=force)
    if card:
        # The dataset card (`<out>/cards/<target>/`); it never raises: a failed plot is counted.
        from entbench.cards.model import Invocation
        from entbench.cards.writer import card_after_build

        invocation = Invocation(
            None if config is None else str(config), tuple(sources), tuple(params), str(out)
        )
        card_after_build(out, target, invocation, log=log if callable(log) else None)
    return dirs
