"""The `entbench` command group, the one place errors become exit codes, and the options commands share.

User errors (bad flag, missing file, malformed config) exit 2, data errors exit 1, each with one
line on stderr; tracebacks only with `--verbose`. Command modules attach their commands to `cli`
(`cli.commands` imports them all); none of them imports the entry point (`cli.main`).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from entbench import __version__
from entbench.engine.docs import where_it_is
from entbench.errors import INTERRUPTED, INTERRUPTED_EXIT, EntbenchError

#: The status of a command whose reader closed the pipe (128 + SIGPIPE, as the shell reports `cat`'s).
SIGPIPE_EXIT = 141


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a Ctrl-C is behind `exc`: a library that catches everything while it loads (opencc
    turns a KeyboardInterrupt during its import into `ImportError: opencc_clib not found`) must not
    make an interrupt look like an internal error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def closed_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class EntbenchGroup(click.Group):
    """A click group whose commands' errors are turned into one clear line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; map known errors to exit codes."""
        try:
            return super().invoke(ctx)
        except EntbenchError as exc:
            verbose = bool(ctx.meta.get("verbose"))
            if verbose:
                traceback.print_exc()
            click.echo(f"entbench: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo(INTERRUPTED, err=True)
            ctx.exit(INTERRUPTED_EXIT)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except MemoryError:
            click.echo("entbench: error: out of memory; try fewer --workers or more shards", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            # The reader of our output went away (`entbench inspect … | head`): what it read was
            # whole, the rest is not wanted. Leave without a word, as tools killed by SIGPIPE do.
            closed_stdout()
            ctx.exit(SIGPIPE_EXIT)
        except OSError as exc:
            verbose = bool(ctx.meta.get("verbose"))
            if verbose:
                traceback.print_exc()
            click.echo(f"entbench: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True)
            ctx.exit(1)
        except Exception as exc:
            if caused_by_interrupt(exc):
                click.echo(INTERRUPTED, err=True)
                ctx.exit(INTERRUPTED_EXIT)
            verbose = bool(ctx.meta.get("verbose"))
            if verbose:
                traceback.print_exc()
            else:
                click.echo(
                    f"entbench: internal error: {type(exc).__name__}: {exc} "
                    "(re-run with --verbose for details)",
                    err=True,
                )
            ctx.exit(1)


def _set_verbose(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.find_root().meta["verbose"] = True
        ctx.meta["verbose"] = True
    return value


def verbose_option(fn: Any) -> Any:
    """`--verbose/-v` on a command (also accepted before the command name)."""
    return click.option(
        "--verbose",
        "-v",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_verbose,
        help="Show tracebacks on errors.",
    )(fn)


@click.group(
    cls=EntbenchGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=where_it_is(),
)
@verbose_option
@click.version_option(__version__, prog_name="entbench")
def cli() -> None:
    """Build entity-centric NLP benchmarks deterministically from Wikidata and Wikipedia dumps.

    Every build writes a dataset card per target (BUILD_OUT/cards/TARGET/README.md).
    """


# `--help` texts are part of the interface and stay as they are; the module is now `engine.build_out`.
FROM_HELP = (
    "A build's --out directory (its targets/<TARGET>.json names the stage directories), or the "
    "store URL it was published to (the stages read are downloaded once, see builders.build_out)."
)


def _enter_variant(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value:
        from entbench.engine.build_out import reading_variant

        ctx.with_resource(reading_variant(value))
    return value


def variant_option(fn: Any) -> Any:
    """`--variant ID` on a command reading a build: read that variant of the target rather than the
    one built last (`engine.build_out`, variants)."""
    return click.option(
        "--variant",
        default=None,
        metavar="ID",
        expose_value=False,
        callback=_enter_variant,
        help="Read this variant of the target (an id `entbench summary` lists, or 4+ of its first "
        "digits) instead of the one built last into BUILD_OUT.",
    )(fn)


def note_variant(build_out: str, target: str) -> None:
    """Say on stderr which variant of `target` a command reads, when BUILD_OUT holds several."""
    from entbench.engine.build_out import is_store_url, variant_note

    if not is_store_url(build_out):
        note = variant_note(Path(build_out), target)
        if note:
            click.echo(f"entbench: {note}", err=True)
