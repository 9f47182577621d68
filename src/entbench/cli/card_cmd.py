"""`entbench card TARGET [--from BUILD_OUT]`: (re)write a built target's dataset card."""

from __future__ import annotations

import sys

import click

from entbench.cli.app import cli, note_variant, variant_option, verbose_option


@cli.command()
@click.argument("target")
@click.option(
    "--from",
    "build_out",
    default="entbench-out",
    show_default=True,
    help="The build's --out directory (its targets/<TARGET>.json names the stage directories), "
    "or the store URL it was published to (the card is then published there too).",
)
@variant_option
@verbose_option
def card(target: str, build_out: str) -> None:
    """Write BUILD_OUT/cards/TARGET/: README.md (dataset card) and its PNG plots.

    `entbench build` writes the card itself; run this to regenerate it. Exits 1 if a plot or a
    section failed (the card is still written, with a note where it failed).
    """
    from entbench.api import card as write_card

    note_variant(build_out, target)
    result = write_card(target, build_out)
    click.echo(f"{target}: {result.readme}")
    for name in sorted(result.plots_written):
        click.echo(f"  plot {name}")
    for name in sorted(result.plots_skipped_empty):
        click.echo(f"  plot {name}: no data, not drawn")
    for name in sorted(result.plots_single_bar):
        click.echo(f"  plot {name}: a single bar, said in words instead")
    if result.failures:
        for name, error in sorted({**result.plots_failed, **result.sections_failed}.items()):
            click.echo(f"entbench: card: {name} failed: {error}", err=True)
        sys.exit(1)
