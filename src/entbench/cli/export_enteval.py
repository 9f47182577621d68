"""`entbench export enteval --from BUILD_OUT --format wikient-tsv|tasks --out DIR`."""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, note_variant, variant_option, verbose_option
from entbench.cli.export_cmd import echo_export, export, format_option, format_target


@export.command("enteval")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@format_option(
    "enteval",
    "wikient-tsv: WikiEnt as wikient.tsv (sentence, mention_start, mention_end, mention, "
    "target_qid, target_title, description; tab-separated, no header) from `entbench build wikient`; "
    "tasks: the EntEval loaders' task directory from `entbench build enteval-tasks` (CAP/same, "
    "CAP/next, ERT, EFP, ET, CERP, rare, conll-yago, wikisrs, KORE; the ten tasks of "
    "enteval/engine.py) and TASKS.tsv. The relation-typing task is ERT: older upstream code lists it "
    "as 'ER' in SE.list_tasks but tests for 'ERT', so use an engine.py from commit a674f92 on.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@variant_option
@verbose_option
def enteval(build_out: str, fmt: str, out: str) -> None:
    """Export WikiEnt or the EntEval task files of a build."""
    from entbench.builders.enteval.export import export_tasks, export_wikient

    target = format_target("enteval", fmt)
    note_variant(build_out, target)
    result = (export_wikient if fmt == "wikient-tsv" else export_tasks)(build_out=build_out, out=out)
    echo_export(target, fmt, result)
