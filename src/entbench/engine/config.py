"""Build configuration: a TOML file with `[sources]` and `[params.<stage>]`, plus CLI overrides.

```toml
[sources]
wikidata = "wikidata/entities-old.json.bz2"     # relative to this file

[params.wikidata]
languages = ["en", "zh"]
num_shards = 4
```

A list of paths names a numbered series of dumps in date order: `wikidata = ["2019.json.gz",
"2020.json.gz"]` gives the sources `wikidata_0` and `wikidata_1` (as `--source wikidata_0=…` would).
`--source NAME=PATH` (relative to the current directory) and `--param STAGE.KEY=VALUE` override the
file. Two worlds, never mixed: with neither `--config` nor `--source`, the bundled demo world
(`fixtures/entbench.toml`: its small real dumps and fixture-sized parameters) is built; otherwise
only the given file and flags apply, on top of each stage's documented defaults, and nothing comes
from the demo world.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from entbench.engine.registry import Alias
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
    #: stage -> parameter -> the directory a relative path in it is taken from (the config file's)
    param_bases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: whether this is the bundled demo world (no `--config`, no `--source`)
    demo: bool = False
    #: the source names given with `--source` (checked against the target's sources)
    given_sources: tuple[str, ...] = ()
    #: source -> what of its dump a trial build reads (`build --limit N`, `engine.sources.limit_sources`)
    source_limits: Mapping[str, str] = field(default_factory=dict)
    #: the `STAGE.KEY`s given with `--param` (they win over the file, under an alias too)
    given_params: tuple[str, ...] = ()

    def params_for(self, params_type: type[Params], stage: str) -> Params:
        """The parameters of `stage`: its documented defaults plus what this config gives."""
        return make_params(params_type, stage, self.params.get(stage, {}), self.param_bases.get(stage, {}))


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
    """The build's configuration: the file at `path`, the bundled demo world when there is neither a
    file nor a `--source`, else nothing but the overrides; then `NAME=PATH` / `STAGE.KEY=VALUE`."""
    demo = path is None and not source_overrides
    if path is None and not demo:
        # Real dumps given on the command line: the documented defaults, never the demo's.
        config = BuildConfig(sources={}, params={})
    else:
        config = _read_file(Path(path) if path is not None else default_config_path())
    return _with_overrides(config, source_overrides, param_overrides, demo=demo)


def _read_file(config_path: Path) -> BuildConfig:
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
    for name, value in _source_entries(raw_sources, config_path):
        if name in sources:
            raise UserError(f"{config_path}: source {name!r} is given twice")
        sources[name] = str((base / value).resolve()) if "://" not in value else value
        labels[name] = value
    params: dict[str, dict[str, Any]] = {}
    bases: dict[str, dict[str, str]] = {}
    for stage, values in raw_params.items():
        if not isinstance(values, dict):
            raise UserError(f"{config_path}: [params.{stage}] must be a table")
        params[stage] = dict(values)
        bases[stage] = dict.fromkeys(values, str(base))
    return BuildConfig(
        sources=sources, params=params, path=str(config_path), source_labels=labels, param_bases=bases
    )


def _source_entries(raw: Mapping[str, Any], config_path: Path) -> list[tuple[str, str]]:
    """(name, path) of every `[sources]` entry; a list of paths names a series of dumps in date
    order, `NAME = [a, b, c]` giving the sources `NAME_0`, `NAME_1`, `NAME_2`."""
    entries = []
    for name, value in raw.items():
        if isinstance(value, list):
            if not value or not all(isinstance(item, str) for item in value):
                raise UserError(f"{config_path}: source {name!r} must be a path or a non-empty list of paths")
            entries += [(f"{name}_{index}", item) for index, item in enumerate(value)]
        elif isinstance(value, str):
            entries.append((name, value))
        else:
            raise UserError(f"{config_path}: source {name!r} must be a path string (or a list of them)")
    return entries


def _with_overrides(
    config: BuildConfig, source_overrides: Sequence[str], param_overrides: Sequence[str], *, demo: bool
) -> BuildConfig:
    sources = dict(config.sources)
    labels = dict(config.source_labels)
    given: list[str] = []
    for override in source_overrides:
        name, sep, value = override.partition("=")
        if not sep or not name or not value:
            raise UserError(f"--source expects NAME=PATH, got {override!r}")
        sources[name] = str(Path(value).resolve()) if "://" not in value else value
        labels[name] = value
        given.append(name)
    params = {stage: dict(values) for stage, values in config.params.items()}
    bases = {stage: dict(values) for stage, values in config.param_bases.items()}
    cwd = str(Path.cwd())
    given_params: list[str] = []
    for override in param_overrides:
        key, sep, value = override.partition("=")
        stage, dot, param = key.partition(".")
        if not sep or not dot or not stage or not param:
            raise UserError(f"--param expects STAGE.KEY=VALUE, got {override!r}")
        params.setdefault(stage, {})[param] = value
        bases.setdefault(stage, {})[param] = cwd
        given_params.append(f"{stage}.{param}")
    return dataclasses.replace(
        config,
        sources=sources,
        params=params,
        source_labels=labels,
        param_bases=bases,
        demo=demo,
        given_sources=tuple(given),
        given_params=tuple(given_params),
    )


def resolve_aliases(config: BuildConfig, aliases: Mapping[str, Alias]) -> BuildConfig:
    """`config` with every alias of a source and of its scan stage's parameter section renamed to
    the name it stands for (`registry.Alias`). Given under both names, a source path or a parameter
    value from the command line wins over the config file's; two different values from the same
    place are a user error: they name the same thing."""
    sources, labels = dict(config.sources), dict(config.source_labels)
    params = {stage: dict(values) for stage, values in config.params.items()}
    bases = {stage: dict(values) for stage, values in config.param_bases.items()}
    given, given_params = list(config.given_sources), list(config.given_params)
    for alias in sorted(aliases):
        spec = aliases[alias]
        same = f"{alias} is {spec.why}, another name for {spec.name}"
        if alias in sources:
            path = sources.pop(alias)
            label = labels.pop(alias, path)
            keep_alias = _pick(
                alias in given, spec.name in given, spec.name in sources, path, sources.get(spec.name)
            )
            if keep_alias is None:
                raise UserError(
                    f"sources {spec.name} and {alias} are both given, with different paths ({same}): "
                    f"give only --source {spec.name}=PATH"
                )
            if keep_alias:
                sources[spec.name], labels[spec.name] = path, label
            given = list(dict.fromkeys(spec.name if name == alias else name for name in given))
        if alias in params:
            section, section_bases = params.pop(alias), bases.pop(alias, {})
            target = params.setdefault(spec.name, {})
            for key, value in section.items():
                from_cli = f"{alias}.{key}" in given_params
                keep_alias = _pick(
                    from_cli, f"{spec.name}.{key}" in given_params, key in target, value, target.get(key)
                )
                if keep_alias is None:
                    raise UserError(
                        f"parameter {key} is given for {spec.name} and for {alias} with different "
                        f"values ({same}): give only {spec.name}.{key}"
                    )
                if keep_alias:
                    target[key] = value
                    if key in section_bases:
                        bases.setdefault(spec.name, {})[key] = section_bases[key]
                if from_cli:
                    given_params.append(f"{spec.name}.{key}")
    return dataclasses.replace(
        config,
        sources=sources,
        source_labels=labels,
        params=params,
        param_bases=bases,
        given_sources=tuple(given),
        given_params=tuple(dict.fromkeys(p for p in given_params if p.split(".", 1)[0] not in aliases)),
    )


def _pick(alias_cli: bool, name_cli: bool, name_set: bool, alias_value: Any, name_value: Any) -> bool | None:
    """Whether the alias's value is kept: yes when the name has none (or the same one), or when only
    the alias's came from the command line; None when neither wins."""
    if not name_set or alias_value == name_value or (alias_cli and not name_cli):
        return True
    if name_cli and not alias_cli:
        return False
    return None


def make_params(
    params_type: type[Params], stage: str, raw: Mapping[str, Any], bases: Mapping[str, str] | None = None
) -> Params:
    """Build a stage's parameters from raw values (TOML-typed or CLI strings), checking names and types.

    `msgspec.convert` (lax mode: "5" is an int, "0.1" a float, "true"/"1" a bool) does the
    conversion and runs the dataclass's checks; before it, `_cli_forms` turns the spellings a
    `--param` string has for what TOML writes natively (lists as `a,b,c`; `none`; `yes`/`off`).
    A class attribute `PRESETS: dict[str, dict]` on the params type lets `preset=NAME` set several
    fields at once; explicitly given fields win over the preset. A relative path in one of the
    type's `PATH_FIELDS` (a string, or each string of a list) is taken from `bases[field]` (the
    config file's directory), else the current directory.
    """
    fields = {f.name for f in dataclasses.fields(params_type)}
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
    for key in values:
        if key not in fields:
            known = ", ".join(sorted(fields)) or "(none)"
            raise UserError(f"unknown parameter {stage}.{key}; {stage} takes: {known}")
    for key in params_type.PATH_FIELDS:
        base = Path((bases or {}).get(key) or Path.cwd())
        value = values.get(key)
        if isinstance(value, str):
            value = _cli_forms(value, hints[key])  # "a,b" -> ["a", "b"], "none" -> None, first
        if isinstance(value, str):
            values[key] = _resolve_path(value, base)
        elif isinstance(value, list | tuple):
            values[key] = [_resolve_path(v, base) if isinstance(v, str) else v for v in value]
        elif key in values:
            values[key] = value
    prepared = {key: _cli_forms(value, hints[key]) for key, value in values.items()}
    try:
        return msgspec.convert(prepared, params_type, strict=False)
    except msgspec.ValidationError as exc:
        raise UserError(_explain(exc, stage, prepared, hints)) from None


def _resolve_path(value: str, base: Path) -> str:
    """A path parameter made absolute against `base` (empty values and URLs are left as they are)."""
    if not value or "://" in value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


#: Words a `--param` value may use for a boolean besides msgspec's own (true/false/1/0).
_BOOL_WORDS = {"yes": True, "on": True, "no": False, "off": False}
#: Strings that mean "no value" for an optional parameter.
_NONE_WORDS = ("", "none", "null")
#: How a type is named in an error message.
_EXPECTED = {bool: "true/false", int: "an integer", float: "a number", str: "a string"}
#: msgspec's words for a value of the right type that breaks a declared `Meta` constraint.
_CONSTRAINT = re.compile(r"Expected `\w+` (?P<rule>(?:of length )?[<>=]=? \S+)$")
_AT = re.compile(r" - at `\$\.(?P<field>\w+)(?:\[(?P<index>\d+)\])?`$")


def _optional(hint: Any) -> tuple[Any, bool]:
    """The type behind `T | None`, and whether None is allowed."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (types.UnionType, typing.Union) and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return hint, False


def _cli_forms(value: Any, hint: Any) -> Any:
    """A `--param` string spelled as the value msgspec converts (lists, None, bool words); a
    number for a string parameter as its text (TOML `site = 5`). Anything else is left to msgspec."""
    inner, optional = _optional(hint)
    if isinstance(value, str):
        if optional and value.lower() in _NONE_WORDS:
            return None
        if typing.get_origin(inner) is tuple:
            return [item.strip() for item in value.split(",") if item.strip()]
        if inner is bool and value.lower() in _BOOL_WORDS:
            return _BOOL_WORDS[value.lower()]
    elif inner is str and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    elif typing.get_origin(inner) is tuple and isinstance(value, list | tuple):
        item_type = (typing.get_args(inner) or (str,))[0]
        return [_cli_forms(item, item_type) for item in value]
    return value


def _explain(
    exc: msgspec.ValidationError, stage: str, values: Mapping[str, Any], hints: Mapping[str, Any]
) -> str:
    """The user-facing line for a conversion error: `STAGE.KEY: expected …, got VALUE` (with the
    declared constraint or choices when the value broke one), or the dataclass's own check
    (`invalid parameters for STAGE: …`)."""
    at = _AT.search(str(exc))
    if at is None:
        return f"invalid parameters for {stage}: {exc}"
    field, index = at["field"], at["index"]
    hint, _ = _optional(hints[field])
    value = values[field]
    if index is not None:
        hint, value = (typing.get_args(hint) or (str,))[0], value[int(index)]
        hint, _ = _optional(hint)
    if typing.get_origin(hint) is typing.Literal:
        choices = ", ".join(repr(choice) for choice in typing.get_args(hint))
        return f"{stage}.{field}: expected one of {choices}, got {value!r}"
    expected = "a list" if typing.get_origin(hint) is tuple else _EXPECTED.get(hint, str(hint))
    broken = _CONSTRAINT.match(str(exc)[: at.start()])
    if broken is not None:  # the right type, outside the declared bounds
        expected = f"{expected} {broken['rule']}"
    return f"{stage}.{field}: expected {expected}, got {value!r}"


def is_demo_world(sources: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether a build's sources (its manifests' `sources`: name -> path as given, size) are the
    bundled demo world's files (a trial build of it, `--limit`, included)."""
    if not sources:
        return False
    try:
        demo = load_config(None)
    except UserError:
        return False
    for name, info in sources.items():
        if name not in demo.sources or info.get("path") != demo.source_labels.get(name):
            return False
        if not info.get("limit"):
            try:
                size = Path(demo.sources[name]).stat().st_size
            except OSError:
                return False
            if info.get("size") != size:
                return False
    return True
