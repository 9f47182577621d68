"""Every `--help` text is part of the interface: `help_texts.json` holds each command's, as they
were before the layout renovation (issue 20). A deliberate change to a command's help updates
the file in the same commit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

EXPECTED = Path(__file__).with_name("help_texts.json")


def command_paths(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    """The path of `command` and of every subcommand below it."""
    yield path
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            yield from command_paths(command.commands[name], [*path, name])


def test_every_help_text_is_unchanged() -> None:
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli

    runner = CliRunner()
    found = {}
    for path in command_paths(cli, []):
        result = runner.invoke(cli, [*path, "--help"], prog_name="entbench", terminal_width=100)
        assert result.exit_code == 0, (path, result.output)
        found[" ".join(["entbench", *path])] = result.output
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert sorted(found) == sorted(expected)
    for name, text in expected.items():
        assert found[name] == text, name
