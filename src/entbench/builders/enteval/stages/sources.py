"""Task sources of `enteval-tasks`: optional local files named by stage parameters.

EntEval's task sources (KORE, WikiSRS, Freebase tuples, AIDA CoNLL-YAGO, the rare-entity corpus,
PreCo, ConceptNet, GloVe vectors) cannot be downloaded by a build, and a user has some of them,
not all. So each task stage names its files in parameters (`--param enteval_kore.source=PATH`,
or `[params.enteval_kore] source = "…"` in the config) rather than in `[sources]`, which the
framework requires to be present for every stage of a target: a task whose parameters name no file
is skipped and listed (`enteval_tasks.tasks`), not an error.

Such a parameter is identified by content, as a source is: `to_json` (what the fingerprint and the
manifest record) gives the file's name, size and sha256, not where it is, so editing a task file
rebuilds its stage and moving it does not. A relative path is taken relative to the config file that
names it, or to the current directory for `--param` (`Params.PATH_FIELDS`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from entbench.builders.enteval.errors import SourceError
from entbench.engine.stage import Params
from entbench.errors import DataError, UserError

_HASHES: dict[tuple[str, int, int], str] = {}


def resolve_source(value: str, name: str) -> Path:
    """The file a task-source parameter names (a `UserError` if there is none). The configuration
    made a relative path absolute already (`Params.PATH_FIELDS`)."""
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    raise UserError(
        f"{name}: file not found: {value} (a relative path is taken relative to the config file that "
        "names it, or to the current directory for --param)"
    )


def file_identity(path: Path) -> dict[str, Any]:
    """Size and sha256 of a file (hashes cached per process by path, size and mtime)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return {"size": st.st_size, "sha256": _HASHES[key]}


def directory_identity(path: Path) -> dict[str, Any]:
    """Size and sha256 of every file under a directory, by relative path (`__pycache__` left out:
    what Python writes there changes with the interpreter, not with the content)."""
    files = sorted(
        p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.relative_to(path).parts
    )
    return {p.relative_to(path).as_posix(): file_identity(p) for p in files}


@dataclass(frozen=True)
class TaskParams(Params):
    """Parameters of a task stage.

    `SOURCE_FIELDS` name the fields that name the task's files: a string field holds one path (a
    directory when it is a key of `DIRECTORY_FILES`, which lists the files it must hold), a tuple
    field several. A task is configured when they are all set, skipped when none is, and a user
    error otherwise. `OPTIONAL_SOURCE_FIELDS` name files a task reads only when given (identified
    like the others); `EXTRA_PATH_FIELDS` other paths, resolved relative to the config file but
    identified by the stage itself.
    """

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ()
    OPTIONAL_SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ()
    EXTRA_PATH_FIELDS: ClassVar[tuple[str, ...]] = ()
    DIRECTORY_FILES: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # task files are paths, resolved like sources
        cls.PATH_FIELDS = (*cls.SOURCE_FIELDS, *cls.OPTIONAL_SOURCE_FIELDS, *cls.EXTRA_PATH_FIELDS)

    def __post_init__(self) -> None:
        given = [f for f in self.SOURCE_FIELDS if getattr(self, f)]
        if given and len(given) != len(self.SOURCE_FIELDS):
            missing = [f for f in self.SOURCE_FIELDS if f not in given]
            raise ValueError(f"{', '.join(given)} given without {', '.join(missing)}")

    @property
    def configured(self) -> bool:
        """Whether every source file of the task is named."""
        return bool(self.SOURCE_FIELDS) and all(getattr(self, f) for f in self.SOURCE_FIELDS)

    def source_path(self, field: str) -> Path:
        """The resolved file (or directory, for a `DIRECTORY_FILES` field) of a one-path field."""
        value = getattr(self, field)
        assert isinstance(value, str), f"{field} holds several paths: use source_paths"
        name = f"{type(self).__name__}.{field}"
        if field in self.DIRECTORY_FILES:
            return resolve_directory(value, name, self.DIRECTORY_FILES[field])
        return resolve_source(value, name)

    def source_paths(self, field: str) -> list[Path]:
        """The resolved files of a field, one path or several, in the order given."""
        value = getattr(self, field)
        values = [value] if isinstance(value, str) else list(value)
        return [resolve_source(str(v), f"{type(self).__name__}.{field}") for v in values]

    def to_json(self) -> dict[str, Any]:
        """The parameters, each task file by its name only, plus the content identity of each (so
        the fingerprint follows the files' content, never the directory they are in)."""
        data = super().to_json()
        identities: dict[str, Any] = {}
        for f in (*self.SOURCE_FIELDS, *self.OPTIONAL_SOURCE_FIELDS):
            value = getattr(self, f)
            if not value:
                continue
            if isinstance(value, str):
                data[f] = Path(value).name
                path = self.source_path(f)
                if f in self.DIRECTORY_FILES:
                    identities[f] = {n: file_identity(path / n) for n in self.DIRECTORY_FILES[f]}
                else:
                    identities[f] = file_identity(path)
            else:
                data[f] = [Path(v).name for v in value]
                identities[f] = [file_identity(p) for p in self.source_paths(f)]
        data["source_files"] = identities
        return data


def resolve_directory(value: str, name: str, files: tuple[str, ...]) -> Path:
    """The directory a task-source parameter names, which must hold `files` (a `UserError` if not)."""
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UserError(
            f"{name}: directory not found: {value} (a relative path is taken relative to the config "
            "file that names it, or to the current directory for --param)"
        )
    missing = [f for f in files if not (path / f).is_file()]
    if missing:
        raise UserError(f"{name}: {value} has no {', '.join(missing)}")
    return path.resolve()


class SourceLines:
    """A task source's text lines (UTF-8), with the byte offset of each for error messages."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets: list[int] = []

    def __iter__(self) -> Iterator[str]:
        """The lines, "\\n" kept off; a byte that is not UTF-8 is a `DataError` at its line's offset."""
        self.offsets = []
        offset = 0
        with open(self.path, "rb") as f:
            for raw in f:
                self.offsets.append(offset)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataError(f"not UTF-8 ({exc.reason})", path=str(self.path), offset=offset) from exc
                offset += len(raw)
                yield line.rstrip("\n")

    def error(self, exc: SourceError) -> DataError:
        """A parser's error as a `DataError` naming this file and the line's byte offset."""
        offset = self.offsets[exc.line - 1] if 0 < exc.line <= len(self.offsets) else None
        return DataError(str(exc), path=str(self.path), offset=offset)
