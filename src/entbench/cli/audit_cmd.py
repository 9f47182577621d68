"""`entbench audit leakage --from BUILD_OUT [--json]`: what benchmarks built together share."""

from __future__ import annotations

import json

import click

from entbench.cli.app import cli, verbose_option


@cli.group()
def audit() -> None:
    """Audit built benchmarks against each other."""


@audit.command("leakage")
@click.option(
    "--from",
    "build_out",
    default="entbench-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="A build's --out directory: every benchmark built there is compared with every other.",
)
@click.option("--json", "as_json", is_flag=True, help="The report as JSON (format entbench.leakage/1).")
@verbose_option
def audit_leakage(build_out: str, as_json: bool) -> None:
    """Overlap between each benchmark's evaluation data and every other benchmark's training data.

    Evaluation data is a benchmark's evaluation splits (WikiReading valid/test, Hansel validation),
    or all of it where it has no split (WikiEnt, few-/zero-shot sets, EntEval tasks, kb-series);
    training data its train split, or all of it. Compared: shared documents (Wikipedia page ids,
    within one wiki), entities (QIDs) and (mention, entity) pairs, with counts, the evaluation rows
    they touch, and examples. Prints a Markdown report, or with --json the same as JSON.
    What each benchmark contributes: docs/stages.md#leakage-across-benchmarks-entbench-audit-leakage.
    """
    from entbench.api import audit_leakage as audit

    markdown, doc = audit(build_out)
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False) if as_json else markdown, nl=as_json)
