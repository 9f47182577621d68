"""Lines in the EntEval loaders' tab-separated formats (`ZeweiChu/EntEval:enteval/*.py`).

The loaders read `line.strip().split("\\t")` and then `field.split()`: a field holding a tab
shifts the columns, an empty first or last field is eaten by `strip()`, and the CAP, CERP, ERT
and WikiSRS loaders iterate `codecs.open(...)`, which breaks lines at every Unicode line boundary
(`str.splitlines`: also \\x0b, \\x0c, \\x1c-\\x1e, \\x85, \\u2028, \\u2029), not only at "\\n". So
every field written here is non-empty and equal to its own whitespace-collapsed form: no tab, no
line boundary, no leading, trailing or doubled space. Word sequences are joined by one space.
"""

from __future__ import annotations

from collections.abc import Sequence


class FieldError(ValueError):
    """A value that would not survive the loaders' line and field splitting."""


def clean(text: str) -> str:
    """Whitespace runs (tabs and line boundaries included) as one space, trimmed."""
    return " ".join(text.split())


def check_field(value: str) -> str:
    """`value` if the loaders read it back unchanged as one field, else `FieldError`."""
    if not value or clean(value) != value:
        raise FieldError(f"not a loader-safe field: {value!r}")
    return value


def tsv(*fields: str) -> str:
    """One line of tab-separated, loader-safe fields."""
    return "\t".join(check_field(f) for f in fields)


def words_field(words: Sequence[str]) -> str:
    """Word tokens as one field (each word must already be free of whitespace)."""
    return check_field(" ".join(words))
