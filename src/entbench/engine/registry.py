"""The registry of stages and targets, and the deterministic order of a target's stage DAG.

The engine knows no dataset: each dataset is a package whose `pipeline.py` registers its stages,
its targets (with each one's card module and release formats) and the sections of the stage
reference describing its stages; importing `entbench.builders` declares that package here
(`declare_datasets`). Its datasets' pipelines are found and imported the first time a stage or
target is looked up, so `entbench --help` stays fast; every list of targets elsewhere (`make
run`'s, the golden check's, the cards', the export commands', the tests') is read from here.

A pipeline declares each stage by name with a function that makes it (`register_stage`), and
reaches its stage modules through `lazy_module`: a stage's module (and what it imports: pyarrow's
compute functions, DuckDB, numpy, spaCy) is imported when the stage is first looked up, so a
process reads the target list, a build's manifests or one target's stages without importing every
dataset's code (an up-to-date `entbench build` then takes 0.70-0.74 s of CPU instead of
0.87-0.88, compiled bytecode cached: most of a process's start-up is pyarrow, numpy and the
engine, which every build needs).
Stages whose number follows a build's sources (one scan per dump of a series) are registered by a
sources hook (`on_sources`), which a build runs with its source names before it plans
(`configure_sources`).
"""

from __future__ import annotations

import graphlib
import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from entbench.errors import UserError

if TYPE_CHECKING:  # only annotations: importing `builders` (every command line does) stays light
    from entbench.engine.stage import Stage

#: Packages whose subpackages are datasets (`declare_datasets`).
_DATASET_PACKAGES: list[str] = []
#: The module of a dataset package that registers its stages and targets.
PIPELINE_MODULE = "pipeline"


@dataclass(frozen=True)
class Alias:
    """Another name accepted for a source and for the scan stage named after it: `--source
    ALIAS=PATH`, `[sources] ALIAS`, `[params.ALIAS]` and `--param ALIAS.KEY=VALUE` mean `name`."""

    alias: str
    name: str
    why: str  # what the alias is, in a sentence's words: "its name in the published Hansel setting"


@dataclass(frozen=True)
class Export:
    """A release format a target's tables are written in: `entbench export COMMAND --format FORMAT`
    (the first format a command is declared with is its default; a command without `--format`
    writes its one format)."""

    command: str
    format: str


@dataclass(frozen=True)
class AuditedTable:
    """One table of a benchmark target as `entbench audit leakage` reads it (`cards.cross_leakage`):
    its role (`all` where the benchmark has no split) and the columns holding each kind of key:
    `documents`, page ids of the wiki the Wikipedia scan `wiki_stage` read; `entities`, QIDs;
    `pair`, (mention column, entity column)."""

    stage: str
    table: str
    role: Literal["train", "evaluation", "all"]
    documents: tuple[str, ...] = ()
    wiki_stage: str = ""
    entities: tuple[str, ...] = ()
    pair: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        """`stage.table`, as the audit's report names the table."""
        return f"{self.stage}.{self.table}"


@dataclass(frozen=True)
class Target:
    """A user-facing build target: a named set of final stages, and how it is published."""

    name: str
    stages: tuple[str, ...]
    description: str
    #: The dataset package (under `entbench.builders`) whose pipeline registered it.
    dataset: str = ""
    #: The module of `entbench.cards.targets` that draws the target's own card sections, by its
    #: name there (a lower layer names it, never imports it); None: the generic card only.
    card: str | None = None
    #: The release formats `entbench export` writes it in.
    exports: tuple[Export, ...] = ()
    #: If the target is a benchmark, the tables the leakage audit across benchmarks reads (empty:
    #: found in the build, as EntEval's task tables are); None: not a benchmark.
    audited: tuple[AuditedTable, ...] | None = None


@dataclass(frozen=True)
class DocSection:
    """A section of the stage reference (`docs/stages.md`, `engine.docs`): its key, the stage it
    describes (cards link to it by key: `cards.stage_docs.section_link`), and its heading there
    without the leading hashes (the link's anchor is made from it)."""

    key: str
    heading: str


#: A function of a build's source names that registers the stages those names call for.
SourcesHook = Callable[[Collection[str]], None]

#: A function making the stage declared under the name it is given (`register_stage`).
StageMaker = Callable[[str], "Stage"]

_STAGES: dict[str, Stage] = {}
#: Stages declared and not made yet (`register_stage`), by name: made at their first lookup.
_MAKERS: dict[str, StageMaker] = {}
_TARGETS: dict[str, Target] = {}
_SOURCES_HOOKS: list[SourcesHook] = []
_ALIASES: dict[str, Alias] = {}
_DOCS: dict[str, DocSection] = {}
#: Stage instance -> the key of the section describing it (the same stage over other sources).
_DOC_INSTANCES: dict[str, str] = {}
#: (pattern of numbered instance names, key of the section describing them).
_DOC_NUMBERED: list[tuple[re.Pattern[str], str]] = []
_loaded = False
#: The dataset whose pipeline is being imported (what `register_target` records as `Target.dataset`).
_loading = ""


def register_stage(name: str, make: StageMaker, *, replace: bool = False) -> None:
    """Declare the stage `name`, made by `make(name)` the first time it is looked up (its module
    is imported then: `lazy_module`). Names are unique; `replace` lets a sources hook put the stage
    for this build's sources in place of the one declared for another build's."""
    if (name in _STAGES or name in _MAKERS) and not replace:
        raise ValueError(f"stage {name!r} registered twice")
    _STAGES.pop(name, None)
    _MAKERS[name] = make


def _made(name: str) -> Stage:
    """The stage `name`, made now if it was only declared."""
    make = _MAKERS.get(name)
    if make is not None:
        stage = make(name)
        if stage.stage_name != name:
            raise ValueError(f"stage declared as {name!r} was made as {stage.stage_name!r}")
        _STAGES[name] = stage
        del _MAKERS[name]  # only once made: a maker that raised raises again at the next lookup
    return _STAGES[name]


class _LazyModule(ModuleType):
    """A module imported at its first attribute lookup (`lazy_module`)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def lazy_module(name: str) -> ModuleType:
    """The module `name`, imported when one of its attributes is first read: how a pipeline names
    its stage classes in the functions that make its stages (`register_stage`) without importing
    them. Bind it in the `else` of an `if TYPE_CHECKING:` that imports the module for the type
    checker, which then checks each stage's construction arguments."""
    return _LazyModule(name)


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


def register_target(
    name: str,
    stages: tuple[str, ...],
    description: str,
    *,
    card: str | None = None,
    exports: tuple[Export, ...] = (),
    audited: tuple[AuditedTable, ...] | None = None,
) -> None:
    """Declare a target built by `entbench build NAME`: its final stages, the line `entbench build
    --help` shows, the `entbench.cards.targets` module with its card sections (`Target.card`), the
    formats `entbench export` writes it in and, for a benchmark, the tables `entbench audit
    leakage` compares (`Target.audited`)."""
    if name in _TARGETS:
        raise ValueError(f"target {name!r} registered twice")
    _TARGETS[name] = Target(name, stages, description, _loading, card, exports, audited)


def register_alias(alias: str, name: str, why: str) -> None:
    """Accept `alias` wherever the source (and scan stage) `name` is named (`Alias`)."""
    if alias in _ALIASES:
        raise ValueError(f"alias {alias!r} registered twice")
    _ALIASES[alias] = Alias(alias, name, why)


def register_docs(key: str, heading: str, *, instances: tuple[str, ...] = ()) -> None:
    """Declare the section of `docs/stages.md` headed `heading` that describes the stage `key` and
    its `instances` (the same stage registered under other names, over other sources)."""
    if key in _DOCS:
        raise ValueError(f"docs section {key!r} registered twice")
    _DOCS[key] = DocSection(key, heading)
    _describe(key, instances)


def register_doc_instances(key: str, *instances: str, numbered: str = "") -> None:
    """Have the docs section `key` (which another dataset may declare) describe more instances of
    its stage: `instances` by name, and every name matching `numbered` (a regular expression, such
    as the scans `wikidata_0`, `wikidata_1`, … of a series, registered by a sources hook)."""
    _describe(key, instances)
    if numbered:
        _DOC_NUMBERED.append((re.compile(numbered), key))


def _describe(key: str, instances: tuple[str, ...]) -> None:
    for name in instances:
        if name in _DOC_INSTANCES:
            raise ValueError(f"stage {name!r} given a docs section twice")
        _DOC_INSTANCES[name] = key


def declare_datasets(package: str) -> None:
    """Name the package whose subpackages are the datasets: each one with a `pipeline` module
    registers its stages and targets there (imported at the first lookup, in name order; the
    registry's order is no interface: readers sort, or take `build_order`)."""
    if package not in _DATASET_PACKAGES:
        _DATASET_PACKAGES.append(package)


def pipeline_modules() -> dict[str, str]:
    """Dataset name -> its pipeline module, for every dataset package declared."""
    found: dict[str, str] = {}
    for package in _DATASET_PACKAGES:
        root = importlib.import_module(package)
        for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
            module = f"{package}.{info.name}.{PIPELINE_MODULE}"
            if info.ispkg and importlib.util.find_spec(module) is not None:
                found[info.name] = module
    return found


def _load() -> None:
    global _loaded, _loading  # noqa: PLW0603 - the registry is filled once per process
    if not _loaded:
        if not _DATASET_PACKAGES:
            raise RuntimeError(
                "no pipelines declared: import entbench.builders, which declares every dataset's, "
                "before looking up stages or targets"
            )
        for dataset, module in pipeline_modules().items():
            _loading = dataset
            try:
                importlib.import_module(module)
            finally:
                _loading = ""
        _loaded = True


def stages() -> dict[str, Stage]:
    """All registered stages by name (each one made: every dataset's stage modules are imported)."""
    _load()
    for name in list(_MAKERS):
        _made(name)
    return dict(_STAGES)


def source_names() -> set[str]:
    """Every source some registered stage reads (each stage is made to know)."""
    return {name for stage in stages().values() for name in stage.sources}


def stage_names() -> set[str]:
    """The names of all registered stages, none of them made (no stage module imported)."""
    _load()
    return {*_STAGES, *_MAKERS}


def targets() -> dict[str, Target]:
    """All registered targets by name."""
    _load()
    return dict(_TARGETS)


def aliases() -> dict[str, Alias]:
    """All registered aliases by alias name."""
    _load()
    return dict(_ALIASES)


def doc_sections() -> dict[str, DocSection]:
    """Every section of the stage reference the pipelines declare, by key."""
    _load()
    return dict(_DOCS)


def doc_section_of(stage: str) -> str | None:
    """The key of the docs section describing the stage (or instance) named `stage`, if any."""
    _load()
    key = _DOC_INSTANCES.get(stage, stage)
    for pattern, section in _DOC_NUMBERED:
        if pattern.fullmatch(stage):
            key = section
    return key if key in _DOCS else None


def datasets() -> dict[str, tuple[str, ...]]:
    """Every dataset with a pipeline -> the names of the targets it registered."""
    names: dict[str, list[str]] = {dataset: [] for dataset in pipeline_modules()}
    for target in targets().values():
        names.setdefault(target.dataset, []).append(target.name)
    return {dataset: tuple(found) for dataset, found in names.items()}


def exports() -> dict[str, dict[str, tuple[str, ...]]]:
    """Every `entbench export` command -> its formats (the default first) -> the targets each reads."""
    commands: dict[str, dict[str, tuple[str, ...]]] = {}
    for target in targets().values():
        for export in target.exports:
            formats = commands.setdefault(export.command, {})
            formats[export.format] = (*formats.get(export.format, ()), target.name)
    return commands


def build_order() -> list[str]:
    """Every target, each after the targets whose final stages it builds as well (so a build of
    them in this order finds each one's upstream stages built); of those ready, the one with fewer
    stages first, then by name. What `entbench targets` prints, `make run` builds and the golden
    check snapshots."""
    final = {name: set(t.stages) for name, t in targets().items()}
    closure = {name: {s.stage_name for s in stage_order(tuple(f))} for name, f in final.items()}

    def builds(name: str, other: str) -> bool:  # two targets building each other's: no order
        return final[other] <= closure[name] and not final[name] <= closure[other]

    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter(
        {name: {up for up in final if builds(name, up)} for name in final}
    )
    sorter.prepare()
    order: list[str] = []
    ready: list[str] = []
    while sorter.is_active():
        ready.extend(sorter.get_ready())
        ready.sort(key=lambda name: (len(closure[name]), name))
        order.append(ready.pop(0))
        sorter.done(order[-1])
    return order


def get_stage(name: str) -> Stage:
    """A stage by name, or a user error listing the known ones."""
    names = stage_names()
    if name not in names:
        raise UserError(f"unknown stage {name!r}; known stages: {', '.join(sorted(names))}")
    return _made(name)


def find_stage(name: str) -> Stage | None:
    """The stage registered as `name` (made now, its module imported), or None if there is none:
    for readers of a build whose manifests may name stages this entbench does not have."""
    return _made(name) if name in stage_names() else None


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
