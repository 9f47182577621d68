"""JSON-lines task sources (ET's crowd files, FEVER for EFP, Rare): one object a line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from entbench.builders.enteval.errors import SourceError


def json_objects(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line's JSON object with its 1-based line number; empty lines are skipped, and a line
    that is not JSON, or not an object, is a `SourceError` naming it."""
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SourceError(number, f"not JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise SourceError(number, "not a JSON object")
        yield number, record
