"""Where users read what a stage computes: `docs/stages.md`, entbench's own stage reference.

The file is `docs/stages.md` in the entbench repository, and the wheel installs it with the package
as `entbench/_docs/stages.md` (`stages_doc_path` finds either). Cards live in a build directory, so
they cannot link to it relatively: they name it as `docs/stages.md#<anchor>`, the anchor GitHub
gives the stage's heading. Every heading is written once, in the pipeline of the dataset whose
stage it describes (`register_docs`); a test checks each against the file, and that every
registered stage has one.
"""

from __future__ import annotations

import re

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.engine import registry
from entbench.engine.docs import DOC

#: Section key -> the heading of its section in `docs/stages.md` (without the leading hashes), as
#: each dataset's pipeline declares it (`engine.registry.register_docs`).
HEADINGS: dict[str, str] = {key: section.heading for key, section in registry.doc_sections().items()}


def anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation removed (word characters,
    hyphens and spaces kept), each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def section_of(stage: str) -> str | None:
    """The section key describing `stage` (or an instance of it), if any."""
    return registry.doc_section_of(stage)


def stage_link(stage: str) -> str:
    """`docs/stages.md#<anchor>` of the section describing `stage` (the whole file if none does)."""
    key = section_of(stage)
    return DOC if key is None else f"{DOC}#{anchor(HEADINGS[key])}"


def section_link(key: str) -> str:
    """`docs/stages.md#<anchor>` of a section by its key (`mem_audit`, `coarse_types`, …)."""
    return f"{DOC}#{anchor(HEADINGS[key])}"


#: How cards name the stage reference (no machine path: a card is read elsewhere too).
REFERENCE = (
    f"`{DOC}` of the entbench repository (also installed with the package; `entbench --help` prints where)"
)
