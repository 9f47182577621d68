"""`entbench eval wikireading`: a thin command over `builders.wikireading.evaluate`."""

from __future__ import annotations

import json

import click

from entbench.builders.wikireading.scoring import PAPER_CLASSIFIER_VOCAB
from entbench.builders.wikireading.splits import SPLITS
from entbench.cli.alias_cmd import eval_group
from entbench.cli.app import FROM_HELP, verbose_option


@eval_group.command("wikireading")
@click.option(
    "--from",
    "build_out",
    default="entbench-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help=FROM_HELP,
)
@click.option(
    "--split", default="test", show_default=True, type=click.Choice(list(SPLITS)), help="The split to score."
)
@click.option(
    "--predictions",
    required=True,
    type=click.Path(dir_okay=False),
    help='JSON lines, one per instance key: {"key": K, "answer": "…"} or {"key": K, "answers": ["…", …]}; '
    "a key with no prediction scores 0.",
)
@click.option(
    "--classifier-vocab",
    default=PAPER_CLASSIFIER_VOCAB,
    show_default=True,
    type=click.IntRange(min=0),
    help="N of the classifier bound: a classifier over the N most frequent train answers "
    "(the paper: 50,000).",
)
@verbose_option
def eval_wikireading(build_out: str, split: str, predictions: str, classifier_vocab: int) -> None:
    """Mean F1 of predictions on a WikiReading split, with its breakdowns and bounds (JSON report).

    The metric of Hewlett et al. 2016 (§4): overall, for categorical, relational and date
    properties (Table 3), per property (Table 5),
    and the split's upper bounds: a single-value answer, and a classifier over the N most frequent
    train answers. Answers match by exact string, case-sensitive, after trimming and collapsing
    whitespace. How it is computed: docs/stages.md#mean-f1-entbench-eval-wikireading.
    """
    from entbench.builders.wikireading.evaluate import evaluate_wikireading, warnings

    result = evaluate_wikireading(
        build_out=build_out, split=split, predictions=predictions, classifier_vocab=classifier_vocab
    )
    for note in warnings(result):
        click.echo(f"entbench: warning: {note}", err=True)
    click.echo(json.dumps(result, ensure_ascii=False, indent=2))
