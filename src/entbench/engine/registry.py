"""The registry of stages and targets, and the deterministic order of a target's stage DAG.

The engine knows no dataset: each dataset's `pipeline.py` registers its stages and targets, and
importing `entbench.builders` declares those modules here (`declare_pipelines`). They are imported
the first time a stage or target is looked up, so `entbench --help` stays fast.
"""

from __future__ import annotations

import graphlib
import importlib
from collections.abc import Sequence
from dataclasses import dataclass

from entbench.engine.stage import Stage
from entbench.errors import UserError

#: Modules whose import registers stages and targets, in the order they are imported.
_PIPELINES: list[str] = []


@dataclass(frozen=True)
class Alias:
    """Another name accepted for a source and for the scan stage named after it: `--source
    ALIAS=PATH`, `[sources] ALIAS`, `[params.ALIAS]` and `--param ALIAS.KEY=VALUE` mean `name`."""

    alias: str
    name: str
    why: str  # what the alias is, in a sentence's words: "its name in the published Hansel setting"


@dataclass(frozen=True)
class Target:
    """A user-facing build target: a named set of final stages."""

    name: str
    stages: tuple[str, ...]
    description: str


_STAGES: dict[str, Stage] = {}
_TARGETS: dict[str, Target] = {}
_ALIASES: dict[str, Alias] = {}
_loaded = False


def register_stage(stage: Stage) -> Stage:
    """Add a stage instance under its name (names are unique)."""
    if stage.stage_name in _STAGES:
        raise ValueError(f"stage {stage.stage_name!r} registered twice")
    _STAGES[stage.stage_name] = stage
    return stage


def register_target(name: str, stages: tuple[str, ...], description: str) -> None:
    """Declare a target built by `entbench build NAME`."""
    if name in _TARGETS:
        raise ValueError(f"target {name!r} registered twice")
    _TARGETS[name] = Target(name, stages, description)


def register_alias(alias: str, name: str, why: str) -> None:
    """Accept `alias` wherever the source (and scan stage) `name` is named (`Alias`)."""
    if alias in _ALIASES:
        raise ValueError(f"alias {alias!r} registered twice")
    _ALIASES[alias] = Alias(alias, name, why)


def declare_pipelines(modules: Sequence[str]) -> None:
    """Name modules whose import registers stages and targets (imported at the first lookup)."""
    for module in modules:
        if module not in _PIPELINES:
            _PIPELINES.append(module)


def _load() -> None:
    global _loaded  # noqa: PLW0603 - the registry is filled once per process
    if not _loaded:
        if not _PIPELINES:
            raise RuntimeError(
                "no pipelines declared: import entbench.builders, which declares every dataset's, "
                "before looking up stages or targets"
            )
        for module in list(_PIPELINES):
            importlib.import_module(module)
        _loaded = True


def stages() -> dict[str, Stage]:
    """All registered stages by name."""
    _load()
    return dict(_STAGES)


def targets() -> dict[str, Target]:
    """All registered targets by name."""
    _load()
    return dict(_TARGETS)


def aliases() -> dict[str, Alias]:
    """All registered aliases by alias name."""
    _load()
    return dict(_ALIASES)


def get_stage(name: str) -> Stage:
    """A stage by name, or a user error listing the known ones."""
    all_stages = stages()
    if name not in all_stages:
        raise UserError(f"unknown stage {name!r}; known stages: {', '.join(sorted(all_stages))}")
    return all_stages[name]


def get_target(name: str) -> Target:
    """A target by name, or a user error listing the known ones."""
    all_targets = targets()
    if name not in all_targets:
        raise UserError(f"unknown target {name!r}; known targets: {', '.join(sorted(all_targets))}")
    return all_targets[name]


def stage_order(final_stages: tuple[str, ...]) -> list[Stage]:
    """Every stage the given final stages need, upstream first; ties broken by name (kedro-style)."""
    needed: dict[str, Stage] = {}
    todo = list(final_stages)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        stage = get_stage(name)
        needed[name] = stage
        todo.extend(stage.inputs)
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter(
        {name: set(stage.inputs) for name, stage in needed.items()}
    )
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        raise RuntimeError(f"stage graph has a cycle: {exc.args[1]}") from exc
    order: list[Stage] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order.extend(needed[name] for name in ready)
        sorter.done(*ready)
    return order
