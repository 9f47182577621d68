"""`entbench inspect` and `entbench verify`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import click

from entbench.cli.app import cli, verbose_option


@cli.command()
@click.argument("directory")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--rows", default=5, show_default=True, type=click.IntRange(min=0), help="Sample rows per table."
)
@click.option("--table", "tables", multiple=True, metavar="NAME", help="Only this table (repeatable).")
@click.option(
    "--width", default=None, type=click.IntRange(min=40), help="Output width (default: the terminal's)."
)
@verbose_option
def inspect(directory: str, as_json: bool, rows: int, tables: tuple[str, ...], width: int | None) -> None:
    """Show a stage directory's manifest, schema, stats and sample rows (or every stage of a build).

    DIRECTORY may also be the store URL a build was published to, or a stage directory in it."""
    from entbench.engine.build_out import is_store_url, local_dir
    from entbench.engine.inspect import (
        IncompleteStage,
        describe_all,
        describe_store,
        incomplete_dirs,
        render_overview,
        render_text,
    )

    incomplete: list[IncompleteStage] = []
    if is_store_url(directory):
        reports = describe_store(directory, sample_rows=rows, tables=tables)
        build_dir = len(reports) > 1 or reports[0]["directory"] != directory.rstrip("/")
        root = Path(".")
    else:
        root = local_dir(directory)
        if not root.is_dir():
            raise click.BadParameter(
                f"{directory!r} is not a directory or a store URL", param_hint="DIRECTORY"
            )
        reports = describe_all(root, sample_rows=rows, tables=tables)
        build_dir = not (root / "_MANIFEST.json").is_file()
        if build_dir:
            incomplete = incomplete_dirs(root)
    if as_json:
        payload = reports[0] if len(reports) == 1 else reports
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        return
    columns = width or shutil.get_terminal_size((120, 24)).columns
    if build_dir:
        click.echo(render_overview(reports, incomplete, root=root))
    for report in reports:
        if build_dir:
            click.echo("")
        click.echo(render_text(report, width=columns))


@cli.command()
@click.argument("directory")
@verbose_option
def verify(directory: str) -> None:
    """Re-hash every shard against its manifest; exit 1 naming the first bad shard.

    DIRECTORY is a stage or build directory, or the store URL a build published to."""
    from entbench.engine.build_out import is_store_url, local_dir
    from entbench.engine.inspect import verify_build, verify_store

    local = local_dir(directory)
    if is_store_url(directory):
        report = verify_store(directory)
    elif not local.is_dir():
        raise click.BadParameter(f"{directory!r} is not a directory or a store URL", param_hint="DIRECTORY")
    else:
        report = verify_build(local)
    if report.problem:
        click.echo(f"entbench: verify failed: {report.problem_dir}: {report.problem}", err=True)
        sys.exit(1)
    dirs = len(report.directories)
    plural = "y" if dirs == 1 else "ies"
    click.echo(f"ok: {report.files_checked} file(s) in {dirs} stage director{plural} match their manifests")
    for stage in report.incomplete:
        click.echo(
            f"note: {stage.directory} is incomplete ({stage.shards_done} shard(s) done); "
            "the next build resumes it"
        )
