"""Schema helpers shared by all tables: canonical JSON form and hash of an Arrow schema."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pyarrow as pa


def schema_to_json(schema: pa.Schema) -> list[dict[str, Any]]:
    """Describe a schema as plain JSON: name, Arrow type string and nullability per field."""
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def schema_hash(schema: pa.Schema) -> str:
    """sha256 of the canonical JSON description of `schema` (stable across pyarrow versions)."""
    payload = json.dumps(schema_to_json(schema), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def column_suffix(code: str) -> str:
    """A language or site code as a column-name suffix: `zh-hans` -> `zh_hans`."""
    return code.replace("-", "_")
