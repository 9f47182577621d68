"""Build configuration: a TOML file with `[sources]` and `[params.<stage>]`, plus CLI overrides.

```toml
[sources]
wikidata = "wikidata/entities-old.json.bz2"     # relative to this file

[params.wikidata]
languages = ["en", "zh"]
num_shards = 4
```

`--source NAME=PATH` (relative to the current directory) and `--param STAGE.KEY=VALUE` override the
file. With no `--config`, the bundled fixture config is used.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from entbench.engine.stage import Params
from entbench.errors import UserError

DEFAULT_CONFIG_NAME = "entbench.toml"


@dataclass(frozen=True)
class BuildConfig:
    """Sources by name (absolute paths as strings) and raw parameter values by stage."""

    sources: Mapping[str, str]
    params: Mapping[str, Mapping[str, Any]]
    path: str | None = None
    source_labels: Mapping[str, str] = field(default_factory=dict)  # as written, for manifests


def default_config_path() -> Path:
    """The bundled fixture config: `fixtures/entbench.toml` of the checkout, or the copy in the wheel."""
    here = Path(__file__).resolve()
    candidates = [
        here.parents[3] / "fixtures" / DEFAULT_CONFIG_NAME,  # src/entbench/builders -> repo root
        here.parents[1] / "_fixtures" / DEFAULT_CONFIG_NAME,  # installed wheel
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise UserError("no --config given and the bundled fixture config was not found; pass --config FILE")


def load_config(
    path: str | Path | None,
    source_overrides: Sequence[str] = (),
    param_overrides: Sequence[str] = (),
) -> BuildConfig:
    """Read the config file (or the bundled default) and apply `NAME=PATH` / `STAGE.KEY=VALUE` overrides."""
    config_path = Path(path) if path is not None else default_config_path()
    if not config_path.is_file():
        raise UserError(f"config file not found: {config_path}")
    try:
        data = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"malformed config {config_path}: {exc}") from exc
    unknown = set(data) - {"sources", "params"}
    if unknown:
        raise UserError(
            f"{config_path}: unknown section(s) {sorted(unknown)}; expected [sources], [params.*]"
        )
    base = config_path.resolve().parent
    raw_sources = data.get("sources", {})
    raw_params = data.get("params", {})
    if not isinstance(raw_sources, dict) or not isinstance(raw_params, dict):
        raise UserError(f"{config_path}: [sources] and [params] must be tables")
    sources: dict[str, str] = {}
    labels: dict[str, str] = {}
    for name, value in raw_sources.items():
        if not isinstance(value, str):
            raise UserError(f"{config_path}: source {name!r} must be a path string")
        sources[name] = str((base / value).resolve()) if "://" not in value else value
        labels[name] = value
    params: dict[str, dict[str, Any]] = {}
    for stage, values in raw_params.items():
        if not isinstance(values, dict):
            raise UserError(f"{config_path}: [params.{stage}] must be a table")
        params[stage] = dict(values)
    for override in source_overrides:
        name, sep, value = override.partition("=")
        if not sep or not name or not value:
            raise UserError(f"--source expects NAME=PATH, got {override!r}")
        sources[name] = str(Path(value).resolve()) if "://" not in value else value
        labels[name] = value
    for override in param_overrides:
        key, sep, value = override.partition("=")
        stage, dot, param = key.partition(".")
        if not sep or not dot or not stage or not param:
            raise UserError(f"--param expects STAGE.KEY=VALUE, got {override!r}")
        params.setdefault(stage, {})[param] = value
    return BuildConfig(sources=sources, params=params, path=str(config_path), source_labels=labels)


def make_params(params_type: type[Params], stage: str, raw: Mapping[str, Any]) -> Params:
    """Build a stage's parameters from raw values (TOML-typed or CLI strings), checking names and types.

    A class attribute `PRESETS: dict[str, dict]` on the params type lets `preset=NAME` set several
    fields at once; explicitly given fields win over the preset.
    """
    fields = {f.name: f for f in dataclasses.fields(params_type)}
    hints = typing.get_type_hints(params_type)
    values = dict(raw)
    presets: Mapping[str, Mapping[str, Any]] = getattr(params_type, "PRESETS", {})
    if "preset" in values and presets:
        preset = str(values["preset"])
        if preset not in presets:
            raise UserError(f"{stage}.preset: unknown preset {preset!r}; choose from {sorted(presets)}")
        values = {**presets[preset], **values}
        if "preset" not in fields:
            del values["preset"]  # its effect is in the fields it set, which the fingerprint sees
    converted: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            known = ", ".join(sorted(fields)) or "(none)"
            raise UserError(f"unknown parameter {stage}.{key}; {stage} takes: {known}")
        converted[key] = _convert(value, hints[key], f"{stage}.{key}")
    try:
        return params_type(**converted)
    except (TypeError, ValueError) as exc:
        raise UserError(f"invalid parameters for {stage}: {exc}") from exc


def _convert(value: Any, hint: Any, name: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        means_none = value is None or (isinstance(value, str) and value.lower() in ("", "none", "null"))
        if means_none and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        return _convert(value, non_none[0], name)
    if origin is tuple:
        item_type = args[0] if args else str
        if isinstance(value, str):
            items: list[Any] = [v.strip() for v in value.split(",") if v.strip()] if value.strip() else []
        elif isinstance(value, list | tuple):
            items = list(value)
        else:
            raise UserError(f"{name}: expected a list, got {value!r}")
        return tuple(_convert(v, item_type, name) for v in items)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
            return False
        raise UserError(f"{name}: expected true/false, got {value!r}")
    if hint is int:
        if isinstance(value, bool):
            raise UserError(f"{name}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise UserError(f"{name}: expected an integer, got {value!r}") from None
    if hint is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise UserError(f"{name}: expected a number, got {value!r}") from None
    if hint is str:
        if not isinstance(value, str | int | float):
            raise UserError(f"{name}: expected a string, got {value!r}")
        return str(value)
    raise TypeError(f"unsupported parameter type {hint!r} for {name}")
