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


@dataclass(frozen=True)
class TaskParams(Params):
    """Parameters of a task stage. `SOURCE_FIELDS` name the string fields that are file paths; a task
    is configured when they are all set, skipped when none is, and a user error otherwise."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.PATH_FIELDS = cls.SOURCE_FIELDS  # task files are paths, resolved like sources

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
        """The resolved file of a source field."""
        return resolve_source(str(getattr(self, field)), f"{type(self).__name__}.{field}")

    def to_json(self) -> dict[str, Any]:
        """The parameters, each task file by its name only, plus the content identity of each (so
        the fingerprint follows the files' content, never the directory they are in)."""
        data = super().to_json()
        for f in self.SOURCE_FIELDS:
            if data[f]:
                data[f] = Path(data[f]).name
        data["source_files"] = {
            f: file_identity(self.source_path(f)) for f in self.SOURCE_FIELDS if getattr(self, f)
        }
        return data


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
