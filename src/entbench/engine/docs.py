"""Where users read what a stage computes: `docs/stages.md`, entbench's own stage reference.

The file is `docs/stages.md` in the entbench repository, and the wheel installs it with the package
as `entbench/_docs/stages.md` (`stages_doc_path` finds either). The cards link to its sections
(`cards.stage_docs`); `--help` says where it is on this machine.
"""

from __future__ import annotations

from pathlib import Path

DOC = "docs/stages.md"


def stages_doc_path() -> Path | None:
    """The stage reference on this machine: the checkout's `docs/stages.md` (a source or editable
    install), else the copy installed with the package; None if neither is there."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[3] / "docs" / "stages.md", here.parents[1] / "_docs" / "stages.md"):
        if candidate.is_file():
            return candidate
    return None


def where_it_is() -> str:
    """One sentence for `--help`: what the stage reference is and where it is on this machine."""
    path = stages_doc_path()
    here = f" On this machine: {path}." if path is not None else ""
    return (
        f"What each stage computes, its parameters and defaults, and what its statistics count: "
        f"{DOC} of the entbench repository, also installed with the package.{here}"
    )
