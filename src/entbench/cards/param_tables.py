"""`docs/stages.md`'s parameter tables, generated from the parameters' declarations.

A stage's parameters are declared once, in its `Params` dataclass: the type, the default, and the
help as `Annotated[T, msgspec.Meta(description=…)]`. Each table in `docs/stages.md` follows a line
`<!-- parameters of STAGE -->` and is rewritten from that stage's declaration; the prose around
the tables is the file's own. `tests/cards/test_stage_docs.py` fails when the file is stale;
regenerate it with `python -m entbench.cards.param_tables`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

import msgspec

from entbench.engine import registry
from entbench.engine.docs import DOC
from entbench.engine.stage import Params

#: The line a generated table follows.
MARKER = re.compile(r"^<!-- parameters of (?P<stage>\w+) -->$")
HEADER = ("| parameter | default | meaning |", "|---|---|---|")
#: Recorded by the engine for a task's files, never set by users: not in the tables.
UNDOCUMENTED = ("source_files",)
#: A list default longer than this shows its first items and its length.
SHOWN_ITEMS = 8


def help_of(params_type: type[Params], name: str) -> str:
    """A parameter's help: the `description` of the `Meta` in its declared type ("" if none)."""
    hint = typing.get_type_hints(params_type, include_extras=True)[name]
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, msgspec.Meta) and meta.description:
            return str(meta.description)
    return ""


def render_default(value: Any) -> str:
    """A default as the table shows it: a plain string bare (others, `""` included, as JSON), lists
    and numbers as JSON, a long list cut to its first items."""
    if isinstance(value, str):
        return (
            f"`{value}`"
            if value.isprintable() and value.strip() == value and value
            else f"`{json.dumps(value)}`"
        )
    if value is None:
        return "`none`"
    if isinstance(value, list) and len(value) > SHOWN_ITEMS:
        head = json.dumps(value[: SHOWN_ITEMS - 1], ensure_ascii=False)[:-1]
        return f"`{head}, …]` ({len(value)} in all)"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def table(params_type: type[Params]) -> list[str]:
    """The markdown table of a parameters type, in declaration order."""
    defaults = params_type().to_json()
    rows = list(HEADER)
    for field in dataclasses.fields(params_type):
        if field.name in UNDOCUMENTED:
            continue
        default = render_default(defaults[field.name])
        rows.append(f"| `{field.name}` | {default} | {help_of(params_type, field.name)} |")
    return rows


def render(text: str) -> str:
    """`docs/stages.md` with every marked table regenerated (the rest left as it is)."""
    stages = registry.stages()
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        marker = MARKER.match(lines[i])
        i += 1
        if marker is None:
            continue
        out.extend(table(stages[marker["stage"]].params_type))
        while i < len(lines) and lines[i].startswith("|"):
            i += 1  # the table as it was
    return "\n".join(out)


def main() -> None:
    """Rewrite `docs/stages.md` (in the current checkout) from the declarations."""
    import entbench.builders  # noqa: F401 - registers every dataset's stages

    path = Path(__file__).resolve().parents[3] / DOC
    text = path.read_text(encoding="utf-8")
    new = render(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    sys.stdout.write(f"{DOC}: {'regenerated' if new != text else 'up to date'}\n")


if __name__ == "__main__":
    main()
