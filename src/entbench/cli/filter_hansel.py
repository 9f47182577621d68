"""`entbench filter hansel-hard`: the few-shot subset of a dataset, whose AT@1 is wrong (Hansel
Appendix I, Table 12)."""

from __future__ import annotations

import json
from typing import Any

import click

from entbench.cli.app import FROM_HELP, verbose_option
from entbench.cli.filter_cmd import filter_group

_TARGETS = ("hansel-kb", "hansel-fewshot", "alias-table", "alias-table-kb")


@filter_group.command("hansel-hard")
@click.option(
    "--dataset",
    required=True,
    type=click.Path(dir_okay=False),
    help="Hansel-format jsonl (mention, gold_id; a QID or NIL_<TYPE>).",
)
@click.option(
    "--from", "build_out", default="entbench-out", show_default=True, type=click.Path(), help=FROM_HELP
)
@click.option(
    "--target",
    default="hansel-kb",
    show_default=True,
    type=click.Choice(_TARGETS),
    help="The build's target whose alias table ranks the candidates (hansel-kb, hansel-fewshot: "
    "Hansel's AT-base over zhwiki).",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON-lines file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbose_option
def hansel_hard(dataset: str, build_out: str, target: str, out: str, as_json: bool) -> None:
    """Keep the examples of DATASET whose top alias-table candidate is not the gold (a NIL gold:
    whose mention has a candidate), and print Hansel Table 12's columns for it and the subset."""
    from entbench.builders.hansel.hard import filter_hard

    done = filter_hard(dataset=dataset, build_out=build_out, target=target, out=out)
    if as_json:
        click.echo(json.dumps(done.report, indent=2, ensure_ascii=False))
        return
    click.echo(render_table12(done.report))
    kept = done.report["table12"]["few-shot subset"]["mentions"]["total"]
    total = done.report["table12"]["dataset"]["mentions"]["total"]
    click.echo(f"wrote {done.out}: {kept:,} of {total:,} examples (AT@1 wrong)")


def render_table12(report: dict[str, Any]) -> str:
    """The dataset's and the subset's Table 12 rows."""
    lines = [
        f"{'':<16} {'mentions In-KB':>14} {'NIL':>6} {'total':>6}  {'distinct In-KB':>14} {'NIL':>6} "
        f"{'total':>6}  {'docs In-KB':>10} {'NIL':>6} {'total':>6}  {'entities':>8}"
    ]
    for name, row in report["table12"].items():
        m, d, docs = row["mentions"], row["distinct_mentions"], row["documents"]
        doc_cells = (
            f"{docs['in_kb']:>10,} {docs['nil']:>6,} {docs['total']:>6,}"
            if docs is not None
            else f"{'–':>10} {'–':>6} {'–':>6}"
        )
        lines.append(
            f"{name:<16} {m['in_kb']:>14,} {m['nil']:>6,} {m['total']:>6,}  {d['in_kb']:>14,} {d['nil']:>6,} "
            f"{d['total']:>6,}  {doc_cells}  {row['entities']:>8,}"
        )
    removed = report["removed"]
    lines.append(
        f"removed: {removed['at1_correct_in_kb']:,} In-KB whose AT@1 is the gold, "
        f"{removed['at1_correct_nil_no_candidate']:,} NIL without a candidate"
        + (f"; documents by {report['document_key']}" if report["document_key"] else "")
    )
    return "\n".join(lines)
