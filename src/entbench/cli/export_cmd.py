"""`entbench export COMMAND --from BUILD_OUT --format … --out DIR`: benchmarks in their original formats.

`export` is a click group whose subcommands are the export commands the registered targets declare
(`register_target(…, exports=(Export(COMMAND, FORMAT), …))` in a dataset's `pipeline.py`). A
dataset's commands are in `cli/export_<dataset>.py`, imported only when `entbench export` runs
(importing every pipeline costs a second), and take their `--format` choices from the registry
(`formats`). Each command validates its options and calls a keyword-only function that tests can
call directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import click

from entbench.cli.app import cli
from entbench.engine.export import ExportResult


class ExportGroup(click.Group):
    """The commands the registry's targets declare, each loaded from its dataset's module."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every declared export command, by name."""
        return sorted(_datasets())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command `cmd_name`, its dataset's module imported first (None: no target declares it)."""
        dataset = _datasets().get(cmd_name)
        if dataset is None:
            return None
        importlib.import_module(f"{__package__}.export_{dataset}")
        return super().get_command(ctx, cmd_name)


def _registry() -> ModuleType:
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
    from entbench.engine import registry

    return registry


def _datasets() -> dict[str, str]:
    """Export command -> the dataset whose targets declare it."""
    return {e.command: t.dataset for t in _registry().targets().values() for e in t.exports}


def formats(command: str) -> list[str]:
    """The `--format` choices of an export command as its targets declare them, the default first."""
    return list(_registry().exports()[command])


def format_option(command: str, help: str) -> Callable[[Any], Any]:
    """An export command's `--format` option (as `fmt`): the formats its targets declare, the first
    the default."""
    choices = formats(command)
    return click.option(
        "--format", "fmt", default=choices[0], show_default=True, type=click.Choice(choices), help=help
    )


def format_target(command: str, fmt: str) -> str:
    """The target an export command reads in format `fmt` (the one target declaring it)."""
    (target,) = _registry().exports()[command][fmt]
    return str(target)


@cli.group(cls=ExportGroup)
def export() -> None:
    """Write a build's benchmark tables in the original release formats."""


def echo_export(name: str, fmt: str, result: ExportResult) -> None:
    """What an export wrote, and on stderr a warning for each part it wrote empty."""
    counts = ", ".join(f"{part} {n:,}" for part, n in result.counts.items())
    click.echo(f"{name} ({fmt}) -> {result.out}: {counts}")
    for note in result.notes:
        click.echo(f"note: {note}")
    for file in result.files:
        click.echo(f"  {file}")
    for part, n in result.counts.items():
        if n == 0:
            click.echo(
                f"entbench: warning: {name}: {part} is empty (0 records), so its file is empty; "
                f"the build's card (cards/{name.split(maxsplit=1)[0]}/README.md) says where the rows went",
                err=True,
            )
