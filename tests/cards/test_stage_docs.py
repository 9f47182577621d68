"""`docs/stages.md`, the stage reference cards and `--help` point users to (instead of a design
document they do not have): every stage has a section, every parameter is described there, every
link to it resolves, and no user-facing text cites the design spec."""

from __future__ import annotations

import re
from collections.abc import Callable

import click
import pytest
from click.testing import Result

import entbench.builders  # noqa: F401 - registers the pipelines
from entbench.cards.param_tables import HEADER, MARKER, UNDOCUMENTED, help_of, render
from entbench.cards.stage_docs import HEADINGS, anchor, section_of, stage_link
from entbench.engine import registry
from entbench.engine.docs import DOC, stages_doc_path
from tests.conftest import REPO_ROOT

CLI = Callable[[list[str]], Result]
STAGES_MD = REPO_ROOT / DOC
#: The line another branch's section replaces (its parameters are checked once it is written).
PLACEHOLDER = "(rendering rules: see below)"


def headings() -> dict[str, str]:
    """Anchor -> the body of its section (up to the next heading of any level)."""
    sections: dict[str, str] = {}
    current: list[str] | None = None
    for line in STAGES_MD.read_text(encoding="utf-8").splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            current = []
            sections[anchor(match.group(1))] = ""
            last = anchor(match.group(1))
            continue
        if current is not None:
            sections[last] += line + "\n"
    return sections


def test_every_registered_stage_has_a_section_there() -> None:
    sections = headings()
    for key, heading in HEADINGS.items():
        assert anchor(heading) in sections, f"{key}: heading {heading!r} not in {DOC}"
    missing = [name for name in registry.stages() if section_of(name) is None]
    assert missing == []
    assert stage_link("title_qid_kb") == "docs/stages.md#title_qid--titles-to-qids"
    assert stage_link("hansel_zeroshot_mem_audit") == "docs/stages.md#mem_audit--memorisation-audits"


def test_every_parameter_is_described_in_its_stage_section() -> None:
    sections = headings()
    undocumented = []
    for name, stage in registry.stages().items():
        key = section_of(name)
        assert key is not None
        body = sections[anchor(HEADINGS[key])]
        if body.strip() == PLACEHOLDER:
            continue
        for param in stage.params_type().to_json():
            if param == "source_files":  # the task files' identities, recorded, never set by users
                continue
            if f"`{param}`" not in body:
                undocumented.append(f"{name}.{param}")
    assert undocumented == []


def test_links_inside_the_reference_resolve() -> None:
    sections = headings()
    text = STAGES_MD.read_text(encoding="utf-8")
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links
    assert [link for link in links if link not in sections] == []


def test_the_reference_is_found_where_help_says() -> None:
    assert stages_doc_path() == STAGES_MD


def _help_texts(run_cli: CLI) -> dict[str, str]:
    from entbench.cli.app import cli

    texts = {"entbench": run_cli(["--help"]).output}
    for name, command in cli.commands.items():
        texts[name] = run_cli([name, "--help"]).output
        if isinstance(command, click.Group):
            for sub in command.list_commands(click.Context(command)):
                texts[f"{name} {sub}"] = run_cli([name, sub, "--help"]).output
    return texts


def test_help_names_the_stage_reference_and_no_design_spec(run_cli: CLI) -> None:
    texts = _help_texts(run_cli)
    assert len(texts) > 10
    assert [name for name, text in texts.items() if "spec §" in text] == []
    flat = " ".join(texts["entbench"].split())
    assert f"{DOC} of the entbench repository" in flat and str(STAGES_MD) in flat


@pytest.mark.parametrize("kind", ["stage", "target"])
def test_descriptions_users_see_cite_no_design_spec(kind: str) -> None:
    if kind == "stage":
        descriptions = {name: s.description for name, s in registry.stages().items()}
    else:
        descriptions = {name: t.description for name, t in registry.targets().items()}
    assert all(descriptions.values())
    assert [name for name, text in descriptions.items() if "spec §" in text] == []


def test_readme_links_to_the_reference_resolve_and_cite_no_design_spec() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    anchors = re.findall(r"docs/stages\.md#([\w-]+)", readme)
    assert anchors
    sections = headings()
    assert [a for a in anchors if a not in sections] == []
    assert "spec §" not in readme


def test_the_parameter_tables_are_generated_from_the_declarations() -> None:
    """Every stage's table follows its `<!-- parameters of STAGE -->` line and is what the stage's
    `Params` declares (defaults and help); regenerate with `python -m entbench.cards.param_tables`."""
    text = STAGES_MD.read_text(encoding="utf-8")
    assert render(text) == text, "docs/stages.md is stale: run `python -m entbench.cards.param_tables`"
    marked = set(re.findall(r"^<!-- parameters of (\w+) -->$", text, re.M))
    types = {stage.params_type for name, stage in registry.stages().items() if name in marked}
    declared = {s.params_type for s in registry.stages().values() if s.params_type().to_json()}
    assert declared <= types
    undescribed = [
        f"{t.__name__}.{f}"
        for t in types
        for f in t().to_json()
        if f not in UNDOCUMENTED and not help_of(t, f)
    ]
    assert undescribed == []
    lines = text.splitlines()
    by_hand = [i for i, line in enumerate(lines) if line == HEADER[0] and not MARKER.match(lines[i - 1])]
    assert by_hand == []  # every parameter table is a generated one
