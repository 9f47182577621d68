"""`entbench build`, `entbench stages`, `entbench targets` and `entbench summary`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from entbench.cli.app import cli, verbose_option
from entbench.engine.docs import where_it_is


class TargetsListed(click.Command):
    """A command whose `--help` ends with the targets and what each builds (read from the registry
    only when help is asked for: importing every pipeline costs a second)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The targets, then the usual epilog."""
        import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
        from entbench.engine import registry

        with formatter.section("Targets"):
            formatter.write_dl(
                [(name, spec.description) for name, spec in sorted(registry.targets().items())]
            )
        super().format_epilog(ctx, formatter)


@cli.command(cls=TargetsListed, epilog=where_it_is())
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    help="TOML config (default, with no --source either: the bundled demo world).",
)
@click.option("--source", "sources", multiple=True, metavar="NAME=PATH", help="A source dump of the target.")
@click.option(
    "--param", "params", multiple=True, metavar="STAGE.KEY=VALUE", help="Override a stage parameter."
)
@click.option(
    "--out",
    default="entbench-out",
    show_default=True,
    help="Output directory, or a store URL (s3://bucket/prefix, any fsspec URL) to publish to.",
)
@click.option(
    "--work-dir",
    default=None,
    type=click.Path(file_okay=False),
    help="With an --out URL: where stages run before being published "
    "(default: under ~/.cache/entbench; on a cluster, a directory every worker shares).",
)
@click.option("--workers", default=1, show_default=True, type=int, help="Worker processes.")
@click.option("--executor", default="local", show_default=True, type=click.Choice(["local", "dask"]))
@click.option("--dask-address", default=None, help="dask scheduler address (default: a LocalCluster).")
@click.option("--force", is_flag=True, help="Rebuild every stage even if its output is complete.")
@click.option(
    "--max-bad-lines",
    default=0,
    show_default=True,
    type=int,
    help="Bad input records (Wikidata lines, Wikipedia pages, corpus lines) tolerated per scan before "
    "the build fails (all are listed in _rejects.jsonl).",
)
@click.option("--chunk-mb", default=64, show_default=True, type=int, help="Input block size per map task.")
@click.option(
    "--no-progress",
    is_flag=True,
    help="Show no progress (otherwise a bar on a terminal, a plain line every few seconds in a log).",
)
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(min=1),
    metavar="N",
    help="A trial build from the first N entities, pages or lines of each dump (its own fingerprints, "
    "marked in the card).",
)
@click.option(
    "--no-card",
    is_flag=True,
    help="Write no dataset card (`entbench card TARGET` writes it later).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Build nothing: print the stages that would run, the sources with their sizes, and estimated "
    "time, scratch space and memory per worker.",
)
@verbose_option
def build(targets: tuple[str, ...], **options: Any) -> None:
    """Build TARGET (e.g. wikidata, kb, hansel-train) and print its output directories.

    Several TARGETs are built one after the other, each as `entbench build TARGET` with the same
    options would (its lines, its card), in one process: `make run` builds every target so."""
    if len(targets) > 1:  # a misspelt later target is named before the first one is built
        import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
        from entbench.engine import registry

        for target in targets:
            registry.get_target(target)
    for target in targets:
        _build_one(target, **options)  # the options as `_build_one` declares them


def _build_one(
    target: str,
    *,
    config: str | None,
    sources: tuple[str, ...],
    params: tuple[str, ...],
    out: str,
    work_dir: str | None,
    workers: int,
    executor: str,
    dask_address: str | None,
    force: bool,
    max_bad_lines: int,
    chunk_mb: int,
    no_progress: bool,
    limit: int | None,
    no_card: bool,
    dry_run: bool,
) -> None:
    """`entbench build TARGET`: the build (or its dry run) and the lines it prints."""
    from entbench.api import build as build_target
    from entbench.api import build_location, published_location

    if dry_run:
        from entbench.api import dry_run as plan

        for line in plan(
            target,
            config=config,
            sources=sources,
            params=params,
            out=out,
            work_dir=work_dir,
            workers=workers,
            limit=limit,
        ):
            click.echo(line)
        return

    dirs = build_target(
        target,
        config=config,
        sources=sources,
        params=params,
        out=out,
        work_dir=work_dir,
        workers=workers,
        executor=executor,
        dask_address=dask_address,
        force=force,
        max_bad_lines=max_bad_lines,
        chunk_mb=chunk_mb,
        progress=not no_progress,
        limit=limit,
        card=not no_card,
    )
    work, _ = build_location(out, work_dir)
    listing = published_location(out, work, work / "targets" / f"{target}.json")
    click.echo(f"target {target}: {len(dirs)} stage(s); listed in {listing}")
    for stage, directory in dirs.items():
        click.echo(f"  {stage}: {published_location(out, work, directory)}")
    _echo_final_tables(work, target)


def _echo_final_tables(out: Path, target: str) -> None:
    """The target's final tables with their rows; on stderr, when one is empty or tiny, one line
    saying in words what was missing."""
    from entbench.engine import summary

    tables = summary.final_tables(out, target)
    click.echo(f"final tables of {target}:")
    for line in summary.table_lines(tables):
        click.echo(line)
    coverage = summary.coverage_line(out, target)
    if coverage:
        click.echo(coverage, err=True)
    ids = summary.demo_ids_line(out, target)
    if ids:
        click.echo(f"entbench: note: {target}: {ids}", err=True)


@cli.command(epilog=where_it_is())
@click.argument("target", required=False)
@verbose_option
def stages(target: str | None) -> None:
    """Print the stage DAG of TARGET (or of every target), upstream first."""
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
    from entbench.engine import registry

    names = [target] if target else sorted(registry.targets())
    for name in names:
        spec = registry.get_target(name)
        click.echo(f"{name}: {spec.description}")
        for stage in registry.stage_order(spec.stages):
            deps = ", ".join([*(f"source:{s}" for s in stage.sources), *stage.inputs]) or "-"
            outputs = ", ".join(o.name for o in stage.outputs(stage.params_type()))
            click.echo(f"  {stage.layer}/{stage.stage_name} v{stage.version}  <- {deps}  -> {outputs}")


@cli.command(epilog=where_it_is())
@verbose_option
def targets() -> None:
    """Print every target's name, one per line, in the order `make run` builds them.

    Each comes after the targets whose stages it builds as well; `entbench build --help` says what
    each target is."""
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
    from entbench.engine import registry

    for name in registry.build_order():
        click.echo(name)


@cli.command(epilog=where_it_is())
@click.option(
    "--from",
    "build_out",
    default="entbench-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="A build's --out directory.",
)
@verbose_option
def summary(build_out: str) -> None:
    """Print every target built in BUILD_OUT with its final tables and their rows."""
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
    from entbench.engine import summary as summaries
    from entbench.engine.build_out import known_variants, variant_id
    from entbench.errors import UserError

    out = Path(build_out)
    targets = summaries.built_targets(out)
    if not targets:
        raise UserError(
            f"{build_out}: no target was built there (no targets/*.json); run entbench build first"
        )
    for target in targets:
        tables = summaries.final_tables(out, target)
        empty = sum(t.rows == 0 for t in tables)
        click.echo(f"{target}:" + (f"  ({empty} empty table(s))" if empty else ""))
        for line in summaries.table_lines(tables):
            click.echo(line)
        ids = summaries.demo_ids_line(out, target)
        if ids:
            click.echo(f"  {ids}")
        found = variant_id(summaries.listed(out, target))
        others = [v for v in known_variants(out, target) if v != found]
        if others:
            click.echo(
                f"  variant {found}, built last; other variants here: {', '.join(others)} "
                "(`--variant ID` on card, export, publish, alias reads one)"
            )
