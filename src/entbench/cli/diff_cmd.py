"""`entbench diff DIR_A DIR_B`: compare two builds (or two stage directories) by their manifests."""

from __future__ import annotations

import json
import sys

import click

from entbench.cli.app import cli, verbose_option


@cli.command()
@click.argument("dir_a", type=click.Path(exists=True, file_okay=False))
@click.argument("dir_b", type=click.Path(exists=True, file_okay=False))
@click.option("--target", default=None, help="Compare only the stages of this target (targets/TARGET.json).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--all", "show_all", is_flag=True, help="Also list the identical stages.")
@verbose_option
def diff(dir_a: str, dir_b: str, target: str | None, as_json: bool, show_all: bool) -> None:
    """Compare the manifests of two builds: fingerprints, parameters, sources, rows, shard hashes, stats.

    Exit status as diff(1): 0 if the builds are identical, 1 if they differ, 2 on a usage error.
    """
    from entbench.engine.diff import diff_builds
    from entbench.engine.inspect import build_manifests

    result = diff_builds(build_manifests(dir_a, target=target), build_manifests(dir_b, target=target))
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, sort_keys=True))
    else:
        click.echo(f"A: {dir_a}\nB: {dir_b}")
        click.echo(result.render(show_identical=show_all))
    sys.exit(0 if result.identical else 1)
