"""The registry of stages and targets, and the deterministic order of a target's stage DAG.

The engine knows no dataset: each dataset's `pipeline.py` registers its stages and targets, and
importing `entbench.builders` declares those modules here (`declare_pipelines`). They are imported
the first time a stage or target is looked up, so `entbench --help` stays fast. Stages whose
number follows a build's sources (one scan per dump of a series) are registered by a sources hook
(`on_sources`), which a build runs with its source names before it plans (`configure_sources`).
"""

from __future__ import annotations

import graphlib
import importlib
from collections.abc import Callable, Collection, Sequence
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


#: A function of a build's source names that registers the stages those names call for.
SourcesHook = Callable[[Collection[str]], None]

_STAGES: dict[str, Stage] = {}
_TARGETS: dict[str, Target] = {}
_SOURCES_HOOKS: list[SourcesHook] = []
_ALIASES: dict[str, Alias] = {}
_loaded = False


def register_stage(stage: Stage, *, replace: bool = False) -> Stage:
    """Add a stage instance under its name (names are unique; `replace` lets a sources hook put
    the instance for this build's sources in place of the one registered for another build's)."""
    if stage.stage_name in _STAGES and not replace:
        raise ValueError(f"stage {stage.stage_name!r} registered twice")
    _STAGES[stage.stage_name] = stage
    return stage


def on_sources(hook: SourcesHook) -> None:
    """Have `hook(source_names)` run before a build plans (`configure_sources`).

    For stages whose number or inputs follow the sources a build is given rather than being
    fixed, such as one scan per dump of a numbered series (`wikidata_0`, `wikidata_1`, …) and a
    stage reading all of them: the hook registers them with `register_stage(…, replace=True)`.
    It must not raise for names it does not expect (every build runs every hook); a series cut
    short is left for the usual check of missing sources to name."""
    _SOURCES_HOOKS.append(hook)


def configure_sources(names: Collection[str]) -> None:
    """Run every sources hook with a build's source names (a build, or a reader of one, calls this
    before it looks up the stages of a target)."""
    _load()
    for hook in _SOURCES_HOOKS:
        hook(names)


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
