"""`entbench` entry point: the process set-up, then the command group of `cli.app` with every command."""

from __future__ import annotations

import errno
import sys

from entbench.errors import INTERRUPTED, INTERRUPTED_EXIT


def main() -> None:
    """Console-script entry point (it may run the command again in a fresh process first:
    `process.reexec_with_huge_pages`)."""
    try:
        from entbench.engine.process import raise_lost_interrupt, reexec_with_huge_pages, set_up_owned_process

        if builds_data(sys.argv[1:]):
            reexec_with_huge_pages()
        set_up_owned_process()
        from entbench.cli import commands  # noqa: F401 - registers the commands on `cli`
        from entbench.cli.app import cli

        raise_lost_interrupt()
        sys.exit(run(cli))
    except KeyboardInterrupt:
        # Ctrl-C outside a command's run (start-up, imports, exit): the same one line as inside it.
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(INTERRUPTED_EXIT)


#: Arguments after which a command only prints what it knows (help, version, the target list):
#: huge pages would not help it, and the re-execution would start a second interpreter (~0.05 s).
_PRINTS_ONLY = frozenset({"-h", "--help", "--version"})


def builds_data(args: list[str]) -> bool:
    """Whether the command line `args` (after `entbench`) may read or write data, so that its
    process is worth re-running with huge pages (`process.reexec_with_huge_pages`)."""
    return bool(args) and args[0] != "targets" and _PRINTS_ONLY.isdisjoint(args)


def run(group: object, args: list[str] | None = None) -> int:
    """Run the click group and return the exit status; what click's standalone mode would do, except
    that a Ctrl-C anywhere (while the arguments are parsed, or as the context closes) gives the one
    line and exit 130 of an interrupted build, not click's "Aborted!" and exit 1. `args`: the
    command line after `entbench` (default: `sys.argv[1:]`)."""
    import click

    from entbench.cli.app import SIGPIPE_EXIT, closed_stdout
    from entbench.engine.process import raise_lost_interrupt

    assert isinstance(group, click.Command)
    try:
        status = group.main(args, prog_name="entbench", standalone_mode=False)
        raise_lost_interrupt()
    except (click.exceptions.Abort, KeyboardInterrupt, EOFError):
        print(INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_EXIT
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        closed_stdout()
        return SIGPIPE_EXIT
    # Non-standalone, click returns a command's own return value, or the status of `ctx.exit`;
    # commands return None.
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    main()
    sys.exit(0)
