"""`entbench inspect` and `entbench verify`."""

from __future__ import annotations

import json
import sys

import click

from entbench.cli.main import cli, verbose_option


@cli.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--rows", default=5, show_default=True, type=int, help="Sample rows per table.")
@verbose_option
def inspect(directory: str, as_json: bool, rows: int) -> None:
    """Show a stage directory's manifest, schema, stats and sample rows (or every stage of a build)."""
    from entbench.builders.inspect import describe, render_text, stage_dirs

    reports = [describe(d, sample_rows=rows) for d in stage_dirs(directory)]
    if as_json:
        payload = reports[0] if len(reports) == 1 else reports
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        return
    for i, report in enumerate(reports):
        if i:
            click.echo("")
        click.echo(render_text(report))


@cli.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@verbose_option
def verify(directory: str) -> None:
    """Re-hash every shard against its manifest; exit 1 naming the first bad shard."""
    from entbench.builders.inspect import stage_dirs, verify_dir

    dirs = stage_dirs(directory)
    checked = 0
    for d in dirs:
        problem, n = verify_dir(d)
        checked += n
        if problem:
            click.echo(f"entbench: verify failed: {d}: {problem}", err=True)
            sys.exit(1)
    plural = "y" if len(dirs) == 1 else "ies"
    click.echo(f"ok: {checked} file(s) in {len(dirs)} stage director{plural} match their manifests")
