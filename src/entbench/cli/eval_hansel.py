"""`entbench eval hansel`: a linker's predictions scored on a Hansel-format gold file."""

from __future__ import annotations

import json

import click

from entbench.cli.alias_cmd import eval_group
from entbench.cli.app import verbose_option


@eval_group.command("hansel")
@click.option(
    "--gold",
    required=True,
    type=click.Path(dir_okay=False),
    help="Hansel-format jsonl (id, gold_id; source and domain if any): a release file or an export.",
)
@click.option(
    "--predictions",
    required=True,
    type=click.Path(dir_okay=False),
    help='JSON lines {"id", "pred_id"}, one per gold record; pred_id a QID, NIL_<TYPE> or NIL.',
)
@click.option(
    "--kb",
    type=click.Path(dir_okay=False),
    default=None,
    help="kb.jsonl of `entbench export hansel-kb`: the coarse types of In-KB golds, for the per-type scores.",
)
@verbose_option
def eval_hansel(gold: str, predictions: str, kb: str | None) -> None:
    """Accuracy (R@1 over In-KB golds) and, where the gold has NIL, accuracy with typed NIL, overall
    and per coarse type, source and domain (JSON report; Hansel Tables 3 and 5)."""
    from entbench.builders.hansel.scoring import score

    click.echo(json.dumps(score(gold, predictions, kb), indent=2, ensure_ascii=False))
