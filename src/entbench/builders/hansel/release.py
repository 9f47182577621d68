"""Reading files in the Hansel release's JSON-lines shape, and its gold labels.

A file is one JSON object per line (blank lines are skipped). A line that is not a JSON object,
or lacks a key the caller needs, is a `DataError` naming the file, the line and its byte offset;
a missing file is a `UserError`. Every line keeps its raw bytes, so a filter can write the lines
it keeps exactly as they were.

Gold labels (`gold_id`, and a scorer's `pred_id`) are a QID of the KB or, for a mention whose
entity is not in it, NIL with the coarse type the annotator gave (`NIL_PER`, …; Hansel §3.3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entbench.errors import DataError, UserError
from entbench.schemas.hansel import NIL_LABELS
from entbench.typesys.qids import is_qid

#: An untyped NIL, which a prediction may use (it is never right under typed-NIL scoring).
NIL = "NIL"


@dataclass(frozen=True)
class Line:
    """One object of a JSON-lines file: where it is, its raw bytes and its value."""

    path: str
    number: int  # 1-based line number
    offset: int  # byte offset of the line
    raw: bytes
    record: dict[str, Any]

    def error(self, message: str) -> DataError:
        """A `DataError` about this line."""
        return DataError(f"line {self.number}: {message}", path=self.path, offset=self.offset)

    def string(self, key: str, *, allow_empty: bool = False) -> str:
        """The string at `key` (a `DataError` if it is missing, not a string, or empty)."""
        value = self.record.get(key)
        if not isinstance(value, str) or (not value and not allow_empty):
            raise self.error(f"{key!r} must be a {'' if allow_empty else 'non-empty '}string, got {value!r}")
        return value

    def integer(self, key: str) -> int:
        """The integer at `key` (a `DataError` otherwise; booleans are not integers)."""
        value = self.record.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"{key!r} must be an integer, got {value!r}")
        return value


def read_lines(path: str | Path, required: Sequence[str] = (), what: str = "file") -> Iterator[Line]:
    """The objects of a JSON-lines file, in order, each with the `required` keys."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"{what} not found: {file}")
    offset = 0
    with open(file, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if raw.strip():
                try:
                    record = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise DataError(
                        f"line {number} is not JSON ({exc})", path=str(file), offset=offset
                    ) from exc
                if not isinstance(record, dict):
                    raise DataError(f"line {number} is not a JSON object", path=str(file), offset=offset)
                missing = [key for key in required if key not in record]
                if missing:
                    raise DataError(
                        f"line {number} lacks {', '.join(missing)}", path=str(file), offset=offset
                    )
                yield Line(str(file), number, offset, raw, record)
            offset += len(raw)


def is_nil(label: str) -> bool:
    """Whether a gold or predicted label is a NIL (typed or not)."""
    return label == NIL or label in NIL_LABELS


def nil_type(label: str) -> str:
    """`PER` for `NIL_PER` (the coarse type a typed NIL names)."""
    return label.removeprefix("NIL_")


def check_label(line: Line, key: str, *, allow_untyped_nil: bool = False) -> str:
    """The label at `key`: a QID or a typed NIL (or `NIL` when allowed); a `DataError` otherwise."""
    label = line.string(key)
    if is_qid(label) or label in NIL_LABELS or (allow_untyped_nil and label == NIL):
        return label
    allowed = ", ".join((*NIL_LABELS, *((NIL,) if allow_untyped_nil else ())))
    raise line.error(f"{key} {label!r} is neither a QID nor one of {allowed}")
