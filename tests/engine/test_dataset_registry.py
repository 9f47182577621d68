"""A dataset is registered once (issue 35): each `builders/<dataset>/pipeline.py` declares its
targets with their card module and release formats, and the stage reference's sections on its
stages; every list of targets, cards, export commands and docs headings elsewhere is read from the
registry: `entbench targets` (what `make run` builds), the golden check, `cards.registry`,
`cards.stage_docs`, `cards.cross_leakage` (which targets are benchmarks, and their tables), the
`export` group and the tests; the Hub metadata is part of each target's own card."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable

import click
import pytest
from click.testing import Result

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.cards.registry import CARD_PACKAGE, card_for, card_module
from entbench.cards.stage_docs import HEADINGS
from entbench.engine import registry
from entbench.golden import GOLDEN_TARGETS
from tests.conftest import REPO_ROOT

CLI = Callable[[list[str]], Result]
SRC = REPO_ROOT / "src" / "entbench"


def _closure(target: str) -> set[str]:
    return {s.stage_name for s in registry.stage_order(registry.get_target(target).stages)}


def test_build_order_lists_every_target_once_each_after_those_it_builds_too() -> None:
    order = registry.build_order()
    assert sorted(order) == sorted(registry.targets()) and len(order) == len(set(order))
    for i, name in enumerate(order):
        for later in order[i + 1 :]:
            assert not set(registry.get_target(later).stages) <= _closure(name), (later, name)
    # The dumps' scans come first, and title-qid (which alias-table builds too) before alias-table.
    assert order[:2] == ["wikidata", "wikipedia"]
    assert order.index("title-qid") < order.index("alias-table")
    assert order.index("hansel-kb") < order.index("hansel-fewshot")  # few-shot shows the KB's texts


def test_make_run_and_the_golden_check_build_what_entbench_targets_prints(run_cli: CLI) -> None:
    printed = run_cli(["targets"])
    assert printed.exit_code == 0
    assert printed.output.splitlines() == registry.build_order()
    assert list(GOLDEN_TARGETS) == registry.build_order()
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^RUN_TARGETS \?=\s*$", makefile, re.MULTILINE)  # no list kept by hand
    assert "$(BIN)/entbench targets" in makefile
    run = makefile[makefile.index("\nrun:") :].split("\n\n", 1)[0]
    assert "entbench targets" in run
    assert [n for n in registry.targets() if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", run)] == []
    golden = (SRC / "golden.py").read_text(encoding="utf-8")
    assert [n for n in registry.targets() if f'"{n}"' in golden] == []


def test_the_cards_package_lists_no_targets_outside_their_own_card_modules() -> None:
    # Names that are only targets (hyphenated: stages and sources are not); each target's own card
    # module (cards/targets/) registers its card under its name, nothing else in cards/ names one.
    only_targets = [n for n in registry.targets() if n not in registry.stages() and "-" in n]
    assert len(only_targets) >= 9
    files = [SRC / "golden.py", *(SRC / "cards").glob("*.py")]
    found = [
        f"{p.name}: {n}" for p in files for n in only_targets if f'"{n}"' in p.read_text(encoding="utf-8")
    ]
    assert found == []
    benchmarks = {n for n, t in registry.targets().items() if t.audited is not None}
    assert benchmarks == {
        "wikireading",
        "wikient",
        "enteval-tasks",
        "hansel-train",
        "hansel-fewshot",
        "hansel-zeroshot",
        "kb-series",
    }
    assert card_for("hansel-fewshot").hub.paper.startswith("Hansel") and not card_for("kb").hub.paper


def test_each_target_names_the_card_module_that_registers_its_sections() -> None:
    named = set()
    for name, target in registry.targets().items():
        if target.card is None:
            continue
        named.add(target.card)
        assert card_module(name) == f"{CARD_PACKAGE}.{target.card}"
        card = card_for(name)
        assert card.target == name and card.sections and card.summary, name
    # Every card module that registers a card is named by a target (the rest are their helpers).
    registering = set()
    for path in (SRC / "cards" / "targets").glob("*.py"):
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register_card"
        ]
        if calls:
            registering.add(path.stem)
    assert registering == named
    assert card_module("no-such-target") is None and card_for("no-such-target").sections == ()


def test_the_cards_package_keeps_no_list_of_card_modules() -> None:
    text = (SRC / "cards" / "registry.py").read_text(encoding="utf-8")
    assert f'"{CARD_PACKAGE}.' not in text
    importlib.import_module(CARD_PACKAGE)


def test_export_commands_are_the_ones_targets_declare_with_their_formats() -> None:
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli

    group = cli.commands["export"]
    assert isinstance(group, click.Group)
    ctx = click.Context(group)
    declared = registry.exports()
    assert group.list_commands(ctx) == sorted(declared)
    assert sorted(declared) == ["enteval", "hansel-kb", "hansel-test", "hansel-train", "wikireading"]
    for name, formats in declared.items():
        command = group.get_command(ctx, name)
        assert command is not None, name
        choices = [p for p in command.params if p.name == "fmt"]
        if choices:  # a command with `--format`: its choices and default are the declared formats
            assert isinstance(choices[0].type, click.Choice)
            assert list(choices[0].type.choices) == list(formats)
            assert choices[0].default == next(iter(formats))
        else:
            assert list(formats) == ["jsonl"]  # hansel-test writes its one format
    assert declared["enteval"] == {"wikient-tsv": ("wikient",), "tasks": ("enteval-tasks",)}
    assert declared["hansel-test"] == {"jsonl": ("hansel-fewshot", "hansel-zeroshot")}
    assert group.get_command(ctx, "no-such-export") is None
    # Each dataset with exports has its commands module, and no other export module exists.
    modules = {p.stem for p in (SRC / "cli").glob("export_*.py")} - {"export_cmd"}  # the group
    datasets = {t.dataset for t in registry.targets().values() if t.exports}
    assert modules == {f"export_{d}" for d in datasets}


@pytest.mark.parametrize(
    ("doc", "header"),
    [("docs/stages.md", "| target | final stages |"), ("README.md", "| target | sources |")],
)
def test_the_targets_tables_users_read_list_every_registered_target(doc: str, header: str) -> None:
    text = (REPO_ROOT / doc).read_text(encoding="utf-8")
    table = text[text.index(header) :].split("\n\n", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = [name for cell in rows for name in re.findall(r"`([\w-]+)`", cell)]
    assert sorted(listed) == sorted(registry.targets())


def test_docs_headings_are_declared_by_the_pipelines_only() -> None:
    sections = registry.doc_sections()
    assert {key: section.heading for key, section in sections.items()} == HEADINGS
    stages = registry.stages()
    # A section describes a registered stage, or one shared by several (the audits, ESR's two).
    assert sorted(key for key in sections if key not in stages) == ["enteval_esr", "mem_audit"]
    assert registry.doc_section_of("wikidata_12") == "wikidata"  # any scan of a long series
    assert registry.doc_section_of("enteval_wikisrs") == "enteval_esr"
    assert registry.doc_section_of("no_such_stage") is None
    text = (SRC / "cards" / "stage_docs.py").read_text(encoding="utf-8")
    assert [h for h in HEADINGS.values() if h in text] == []
