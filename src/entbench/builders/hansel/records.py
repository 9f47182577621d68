"""Hansel records as the official release writes them (spec §5).

The released files are JSON lines, one object per line with exactly the keys `id, text, start,
end, mention, gold_id` in that order (test slices add `source, domain`), UTF-8 without ASCII
escaping and with Python's default separators, as `hansel.readme-example.jsonl` shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from entbench.schemas.hansel import RECORD_KEYS


def record_line(row: Mapping[str, Any], keys: Sequence[str] = RECORD_KEYS) -> str:
    """One record as its JSON line (no newline); a ValueError if the span does not spell the mention."""
    text, start, end, mention = row["text"], row["start"], row["end"], row["mention"]
    if text[start:end] != mention:
        raise ValueError(f"record {row.get('id')}: text[{start}:{end}] != mention {mention!r}")
    return json.dumps({key: row[key] for key in keys}, ensure_ascii=False)
