"""`entbench export wikireading --from BUILD_OUT --format wikireading-json|recycled --out DIR`."""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, note_variant, variant_option, verbose_option
from entbench.cli.export_cmd import echo_export, export, format_option, format_target


@export.command("wikireading")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@format_option(
    "wikireading",
    "wikireading-json: the google-research-datasets/wiki-reading JSON lines and vocabularies; "
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

    note_variant(build_out, format_target("wikireading", fmt))
    result = export_wikireading(
        build_out=build_out,
        fmt=fmt,
        out=out,
        max_document_vocab=max_document_vocab,
        max_answer_vocab=max_answer_vocab,
        max_raw_answer_vocab=max_raw_answer_vocab,
    )
    echo_export("wikireading", fmt, result)
