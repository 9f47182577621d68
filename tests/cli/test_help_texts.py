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
    """The path of `command` and of every subcommand below it (asked the way click asks a group
    that loads its commands when run, as `export` does)."""
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from command_paths(sub, [*path, name])


#: Stands for where `docs/stages.md` is on this machine (the epilogs name it; a clone is anywhere).
DOC_PLACEHOLDER = "<docs/stages.md on this machine>"


def help_texts() -> dict[str, str]:
    """Every command's `--help` output at a fixed width, the stage reference's path replaced."""
    from entbench.cli import commands  # noqa: F401 - registers the commands
    from entbench.cli.app import cli
    from entbench.engine.docs import stages_doc_path

    runner = CliRunner()
    found = {}
    doc = str(stages_doc_path())
    for path in command_paths(cli, []):
        # Wide enough that the path never wraps, whatever directory the clone is in.
        result = runner.invoke(cli, [*path, "--help"], prog_name="entbench", terminal_width=400)
        assert result.exit_code == 0, (path, result.output)
        found[" ".join(["entbench", *path])] = result.output.replace(doc, DOC_PLACEHOLDER)
    return found


def test_every_help_text_is_unchanged() -> None:
    found = help_texts()
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert sorted(found) == sorted(expected)
    for name, text in expected.items():
        assert found[name] == text, name


if __name__ == "__main__":  # after a deliberate change: python -m tests.cli.test_help_texts
    EXPECTED.write_text(json.dumps(help_texts(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
