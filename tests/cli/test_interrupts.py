"""Ctrl-C at any point of a command is one line and exit 130 (issue 19's fault matrix sends it at
fixed times; these cover the windows a timer hits only now and then, deterministically)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from entbench.cli import commands  # noqa: F401 - registers the commands on `cli`
from entbench.cli.app import EntbenchGroup, caused_by_interrupt, cli
from entbench.cli.main import run
from entbench.engine import process
from entbench.engine.process import SIGINT_HELD_VARIABLE
from entbench.errors import INTERRUPTED


def group_with(command: Any) -> click.Group:
    group = EntbenchGroup("entbench")
    group.add_command(click.command("go")(command))
    return group


def test_a_ctrl_c_while_click_parses_the_arguments_is_the_interrupt_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(EntbenchGroup, "make_context", interrupted)
    assert run(cli, ["build", "--help"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == INTERRUPTED and "Aborted" not in err


def test_an_import_error_raised_by_a_ctrl_c_is_the_interrupt_line(capsys: pytest.CaptureFixture[str]) -> None:
    def go() -> None:
        try:
            raise KeyboardInterrupt
        except BaseException as exc:  # what opencc does while it loads its library
            raise ImportError("opencc_clib not found") from exc

    assert run(group_with(go), ["go"]) == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED


def test_other_errors_are_still_internal_errors(capsys: pytest.CaptureFixture[str]) -> None:
    def go() -> None:
        raise ImportError("no such module")

    assert run(group_with(go), ["go"]) == 1
    assert "internal error: ImportError: no such module" in capsys.readouterr().err


def test_run_keeps_clicks_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(cli, ["--version"]) == 0
    assert "entbench" in capsys.readouterr().out
    assert run(cli, ["nope"]) == 2
    assert "No such command 'nope'" in capsys.readouterr().err
    assert run(cli, ["build", "nope"]) == 2
    assert "unknown target 'nope'" in capsys.readouterr().err


def test_caused_by_interrupt_follows_causes_and_contexts() -> None:
    inner = KeyboardInterrupt()
    outer = RuntimeError("wrapped")
    outer.__context__ = ImportError("x")
    outer.__context__.__cause__ = inner
    assert caused_by_interrupt(outer)
    assert not caused_by_interrupt(ValueError("plain"))
    looped = ValueError("loop")
    looped.__context__ = looped
    assert not caused_by_interrupt(looped)


def test_a_ctrl_c_held_across_the_huge_pages_exec_interrupts_the_new_process(tmp_path: Path) -> None:
    """`reexec_with_huge_pages` holds SIGINT across its exec; a Ctrl-C in that window (here: sent
    while held) reaches the new process, which stops with the one line, not a build to the end.

    SIGINT's default action first: a command started with it ignored (a background job of a
    non-interactive shell, as a suite started with `&` is) never sees a Ctrl-C, and Python keeps
    an inherited SIG_IGN across the exec, so the held one would be dropped."""
    program = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        f"os.environ[{SIGINT_HELD_VARIABLE!r}] = '1'\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'entbench.cli.main', 'build', 'kb', '--out', 'o'])\n"
    )
    command = [sys.executable, "-c", program]
    done = subprocess.run(command, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == INTERRUPTED
    assert not (tmp_path / "o").exists()


def test_the_huge_pages_exec_blocks_sigint_and_marks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def execv(*_args: Any) -> None:
        seen["blocked"] = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        seen["marked"] = os.environ.get(SIGINT_HELD_VARIABLE)
        raise OSError("not here")

    monkeypatch.setattr(process, "huge_pages_environment", lambda: {"ENTBENCH_TEST_UNUSED": "1"})
    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.setattr(sys, "argv", ["entbench", "build"])
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "entbench", "build"], raising=False)
    process.reexec_with_huge_pages()
    assert seen == {"blocked": True, "marked": "1"}
    # The exec failed: the process runs on as it was.
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    assert SIGINT_HELD_VARIABLE not in os.environ
