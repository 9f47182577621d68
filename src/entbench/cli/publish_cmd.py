"""`entbench publish TARGET --from BUILD_OUT --out DIR`: a built target as a Hugging Face dataset folder."""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, cli, note_variant, variant_option, verbose_option


@cli.command()
@click.argument("target")
@click.option("--from", "build_out", default="entbench-out", show_default=True, help=FROM_HELP)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="The folder to write (new, empty or an earlier publish).",
)
@variant_option
@verbose_option
def publish(target: str, build_out: str, out: str) -> None:
    """Write TARGET of BUILD_OUT as a Hugging Face dataset folder: data/<config>/<split>-*.parquet,
    README.md (the card, its front matter mapping configs to files) and croissant.json.

    `datasets.load_dataset(DIR)` then reads it as it is; upload it with
    `huggingface-cli upload USER/NAME DIR . --repo-type dataset`.
    """
    from entbench.api import publish as publish_folder

    note_variant(build_out, target)
    result = publish_folder(target, build_out, out)
    click.echo(f"{target} -> {result.out}")
    for name, place, rows in result.tables:
        click.echo(f"  {place.config}/{place.split}: {name}, {rows:,} rows ({place.glob})")
    for name in result.left_out:
        click.echo(f"  left out: {name} (no rows; Hugging Face datasets refuses an empty split)")
    click.echo(
        "  README.md (the dataset card), croissant.json; upload the folder with "
        f"huggingface-cli upload USER/NAME {result.out} . --repo-type dataset"
    )
