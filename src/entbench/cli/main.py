"""`entbench` entry point: the process set-up, then the command group of `cli.app` with every command."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point (it may run the command again in a fresh process first:
    `process.reexec_with_huge_pages`)."""
    try:
        from entbench.engine.process import reexec_with_huge_pages, set_up_owned_process

        reexec_with_huge_pages()
        set_up_owned_process()
        from entbench.cli import commands  # noqa: F401 - registers the commands on `cli`
        from entbench.cli.app import cli

        cli(prog_name="entbench")
    except KeyboardInterrupt:
        # Ctrl-C outside a command's run (start-up, imports, exit): the same one line as inside it.
        print("entbench: interrupted; re-run the same command to resume", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
    sys.exit(0)
