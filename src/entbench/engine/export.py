"""What an export of a finished build wrote (`entbench export TARGET`), for every dataset's export.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ExportResult:
    """What an export wrote: records (or lines) per split or file, and the files."""

    out: Path
    counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    #: Lines for the person reading the command's output (what a count means).
    notes: list[str] = field(default_factory=list)
