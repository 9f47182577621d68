"""Publishing a build to a store given as a URL (`--out s3://bucket/prefix`, any fsspec URL).

Stages run in a work directory on a file system, exactly as for a local `--out`: resuming relies on
atomic renames and a lock, which object stores do not offer, and DuckDB stages read local paths.
When a stage is complete there, its directory is copied to the store at the same relative path,
its `_MANIFEST.json` last. So a stage directory in the store is complete exactly when its manifest
is there: a reader, or a later build from any machine, never takes a half-copied stage for a
finished one, and a copy cut short is simply redone. Builds are deterministic, so two builds
publishing the same stage write the same bytes and cannot spoil each other's copy.

A later build with the same `--out` skips every stage whose manifest the store has (a listing
checks that every file it names is there with its size) and downloads such a stage only when a
stage that reads it has to run, or for the dataset card.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from entbench.engine.manifest import (
    MANIFEST_NAME,
    check_complete,
    manifest_files,
    parse_manifest,
    refresh_stamps,
)
from entbench.engine.progress import StageBar
from entbench.errors import StorageError, UserError

T = TypeVar("T")


def default_work_dir(url: str) -> Path:
    """Where a build published to `url` runs when no `--work-dir` is given: one directory per URL
    under the user's cache, so a re-run finds its finished stages and resumes unfinished ones."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(url.rstrip("/").encode("utf-8")).hexdigest()[:16]
    return cache / "entbench" / "work" / key


class Store:
    """The fsspec location a build publishes its finished stage directories to."""

    def __init__(self, url: str) -> None:
        try:
            from fsspec.core import url_to_fs
        except ImportError as exc:
            raise UserError(f"--out {url} needs fsspec: pip install 'entbench[remote]'") from exc
        self.url = url.rstrip("/")
        try:
            self._fs, root = url_to_fs(self.url)
        except (ImportError, ValueError) as exc:  # unknown protocol, or its driver (s3fs, gcsfs) missing
            raise UserError(f"--out {url}: {exc}") from exc
        self._root = root.rstrip("/")

    def location(self, rel: str) -> str:
        """The URL of `rel` (a path relative to the build root) in the store."""
        return f"{self.url}/{rel}" if rel else self.url

    # --- stages --------------------------------------------------------------------------------
    def read_manifest(self, rel: str) -> bytes | None:
        """The raw `_MANIFEST.json` of stage directory `rel` if the store has the whole stage there
        (every file the manifest names, with its size); None if it has not, or only part of it."""
        raw = self._call(
            f"reading {rel}/{MANIFEST_NAME}", lambda: self._read_if_exists(f"{rel}/{MANIFEST_NAME}")
        )
        if raw is None:
            return None
        try:
            manifest = parse_manifest(raw, self.location(f"{rel}/{MANIFEST_NAME}"))
            entries = manifest_files(manifest)
        except (KeyError, TypeError, UserError):
            return None  # an unreadable manifest vouches for nothing: the stage is published again
        sizes = self._call(f"listing {rel}", lambda: self._sizes(rel))
        for entry in entries:
            if sizes.get(entry["file"]) != entry["bytes"]:
                return None
        return raw

    def publish_stage(
        self, local: Path, rel: str, log: Callable[[str], None], *, progress: bool = False
    ) -> None:
        """Copy the complete stage directory `local` to `rel`, its manifest last."""
        files = sorted(
            p.relative_to(local).as_posix()
            for p in local.rglob("*")
            if p.is_file() and p.name != MANIFEST_NAME
        )
        total = sum((local / name).stat().st_size for name in files)
        bar = StageBar(
            f"{_stage_name(rel)} [publish]", total=total, unit="B", items="files", enabled=progress
        )
        try:
            self._upload(local, rel, files, bar)
            self._upload(local, rel, [MANIFEST_NAME])
        finally:
            bar.close()
        log(f"published {self.location(rel)} ({len(files) + 1} files)")

    def fetch_stage(
        self, rel: str, local: Path, log: Callable[[str], None], *, progress: bool = False
    ) -> None:
        """Download stage directory `rel` into `local` (absent), checking every file's sha256.

        The copy lands under a temporary name and is renamed into place once it matches its
        manifest, so a killed download never leaves a directory that looks complete."""
        tmp = local.with_name(f".fetch-{local.name}-{os.getpid()}")
        if local.parent.is_dir():  # what a killed download left (the caller holds the build lock)
            for stale in local.parent.glob(f".fetch-{local.name}-*"):
                shutil.rmtree(stale, ignore_errors=True)
        sizes = self._call(f"listing {rel}", lambda: self._sizes(rel))
        tmp.mkdir(parents=True)
        bar = StageBar(
            f"{_stage_name(rel)} [fetch]",
            total=sum(sizes.values()),
            unit="B",
            items="files",
            enabled=progress,
        )
        try:
            for name, size in sorted(sizes.items()):
                target = tmp / name
                target.parent.mkdir(parents=True, exist_ok=True)
                download = functools.partial(self._fs.get_file, f"{self._root}/{rel}/{name}", str(target))
                self._call(f"downloading {self.location(rel)}/{name}", download)
                bar.update(size, 1)
            problem = check_complete(tmp, trust_stamps=False)
            if problem:
                raise StorageError(
                    f"{self.location(rel)}: {problem} after download: the store's copy is damaged "
                    f"(`entbench verify {self.url}` checks it all); delete that stage directory "
                    "from the store and re-run"
                )
            refresh_stamps(tmp)
            os.rename(tmp, local)
        finally:
            bar.close()
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"fetched {self.location(rel)} into {local}")

    # --- other files ---------------------------------------------------------------------------
    def publish_file(self, local: Path, rel: str) -> None:
        """Copy one small file (a target listing) to `rel`."""
        self._call(
            f"uploading {local} to {self.location(rel)}", lambda: self._put(local, f"{self._root}/{rel}")
        )

    def publish_tree(self, local: Path, rel: str) -> None:
        """Copy every file under directory `local` to `rel` (a dataset card)."""
        self._upload(
            local, rel, sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file())
        )

    def exists(self, rel: str) -> bool:
        """Whether the store has a file at `rel`."""
        return bool(self._call(f"looking up {rel}", lambda: self._fs.exists(f"{self._root}/{rel}")))

    def read_bytes(self, rel: str) -> bytes | None:
        """The bytes of file `rel`, or None if the store has no such file."""
        return self._call(f"reading {rel}", lambda: self._read_if_exists(rel))

    def open(self, rel: str) -> Any:
        """A binary file object reading `rel` (for streaming a shard through a hash)."""
        return self._call(f"opening {rel}", lambda: self._fs.open(f"{self._root}/{rel}", "rb"))

    def stage_dirs(self) -> list[str]:
        """Relative paths of every stage directory with a manifest (`layer/stage/version`)."""
        pattern = f"{self._root}/*/*/*/{MANIFEST_NAME}"
        found = self._call("listing stage directories", lambda: self._fs.glob(pattern))
        prefix = len(self._root) + 1
        return sorted(str(path)[prefix:].rsplit("/", 1)[0] for path in found)

    def iter_files(self, rel: str) -> Iterator[tuple[str, int]]:
        """(name relative to `rel`, size) of every file under `rel`, sorted."""
        yield from sorted(self._call(f"listing {rel}", lambda: self._sizes(rel)).items())

    # --- helpers -------------------------------------------------------------------------------
    def _upload(self, local: Path, rel: str, names: list[str], bar: StageBar | None = None) -> None:
        for name in names:
            source = local / name
            remote = f"{self._root}/{rel}/{name}" if rel else f"{self._root}/{name}"
            self._call(
                f"uploading {source} to {self.location(rel)}/{name}",
                functools.partial(self._put, source, remote),
            )
            if bar is not None:
                bar.update(source.stat().st_size, 1)

    def _put(self, source: Path, remote: str) -> None:
        self._fs.makedirs(remote.rsplit("/", 1)[0], exist_ok=True)
        self._fs.put_file(str(source), remote)
        size = self._fs.size(remote)
        if size != source.stat().st_size:
            raise OSError(f"the store holds {size} bytes, {source.stat().st_size} were sent")

    def _read_if_exists(self, rel: str) -> bytes | None:
        path = f"{self._root}/{rel}"
        if not self._fs.exists(path):
            return None
        data: bytes = self._fs.cat_file(path)
        return data

    def _sizes(self, rel: str) -> dict[str, int]:
        base = f"{self._root}/{rel}"
        if not self._fs.exists(base):
            return {}
        found: dict[str, dict[str, Any]] = self._fs.find(base, detail=True)
        prefix = len(base.rstrip("/")) + 1
        return {
            str(path)[prefix:]: int(info["size"])
            for path, info in found.items()
            if info.get("type", "file") == "file"
        }

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one store operation; its failure (network, permissions, a full bucket) becomes one
        clear error saying what was being done. Nothing published is left looking complete."""
        try:
            return fn()
        except StorageError:
            raise
        except Exception as exc:  # fsspec drivers raise their own exception types
            raise StorageError(
                f"{self.url}: {what} failed ({type(exc).__name__}: {exc}); re-run to resume"
            ) from exc


def _stage_name(rel: str) -> str:
    """The stage a `layer/stage/version` path holds (how the progress bars name a stage)."""
    parts = rel.split("/")
    return parts[-2] if len(parts) >= 2 else rel
