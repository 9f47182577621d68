"""`entbench export hansel-train --from BUILD_OUT --format jsonl --out DIR` (docs/stages.md, hansel)."""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, note_variant, variant_option, verbose_option
from entbench.cli.export_cmd import echo_export, export


@export.command("hansel-train")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@click.option(
    "--format",
    "fmt",
    default="jsonl",
    show_default=True,
    type=click.Choice(["jsonl"]),
    help="jsonl: train.jsonl and validation.jsonl, one record per line with the official keys "
    "id, text, start, end, mention, gold_id (UTF-8, no ASCII escaping).",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@variant_option
@verbose_option
def hansel_train(build_out: str, fmt: str, out: str) -> None:
    """Export the Hansel train/validation sets of a build (`entbench build hansel-train`)."""
    from entbench.builders.hansel.export import export_hansel_train

    note_variant(build_out, "hansel-train")
    result = export_hansel_train(build_out=build_out, fmt=fmt, out=out)
    echo_export("hansel-train", fmt, result)
