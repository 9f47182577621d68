"""`entbench export TARGET --from BUILD_OUT --format … --out DIR`: benchmarks in their original formats.

`export` is a click group with one subcommand per target; a target adds its own (e.g.
`@export.command("hansel-train")`) next to `wikireading` below or in a module of its own that
`cli.commands` imports. Each command validates its options and calls a keyword-only function that
tests can call directly.
"""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, cli, note_variant, variant_option, verbose_option
from entbench.engine.export import ExportResult


@cli.group()
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


@export.command("wikireading")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@click.option(
    "--format",
    "fmt",
    default="wikireading-json",
    show_default=True,
    type=click.Choice(["wikireading-json", "recycled"]),
    help="wikireading-json: the google-research-datasets/wiki-reading JSON lines and vocabularies; "
    "recycled: WikiReading Recycled in.tsv/expected.tsv, one line per article.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@click.option("--max-document-vocab", default=0, show_default=True, type=int, help="0 = every train token.")
@click.option("--max-answer-vocab", default=0, show_default=True, type=int, help="0 = every train token.")
@click.option(
    "--max-raw-answer-vocab", default=0, show_default=True, type=int, help="0 = every train answer."
)
@variant_option
@verbose_option
def wikireading(
    build_out: str,
    fmt: str,
    out: str,
    max_document_vocab: int,
    max_answer_vocab: int,
    max_raw_answer_vocab: int,
) -> None:
    """Export the WikiReading splits of a build (`entbench build wikireading`)."""
    from entbench.builders.wikireading.export import export_wikireading

    note_variant(build_out, "wikireading")
    result = export_wikireading(
        build_out=build_out,
        fmt=fmt,
        out=out,
        max_document_vocab=max_document_vocab,
        max_answer_vocab=max_answer_vocab,
        max_raw_answer_vocab=max_raw_answer_vocab,
    )
    echo_export("wikireading", fmt, result)
