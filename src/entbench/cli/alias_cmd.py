"""`entbench alias lookup` and `entbench eval alias-table`: thin commands over `builders.alias.lookup`."""

from __future__ import annotations

import json

import click

from entbench.cli.app import cli, note_variant, variant_option, verbose_option

_FROM = click.option(
    "--from",
    "out",
    default="entbench-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Build directory holding the alias table (the --out of `entbench build alias-table`), "
    "or the store URL it was published to.",
)
_TARGET = click.option(
    "--target",
    default="alias-table",
    show_default=True,
    type=click.Choice(["alias-table", "alias-table-kb", "hansel-kb"]),
    help="Which alias-table target of the build to read (hansel-kb: Hansel's AT-base over zhwiki).",
)


@cli.group()
def alias() -> None:
    """Query a built alias table (AT-base).

    How it is computed: docs/stages.md#alias_table--the-at-base-alias-table.
    """


@alias.command("lookup")
@click.argument("mention")
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=1), help="Candidates to show.")
@_FROM
@_TARGET
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@variant_option
@verbose_option
def alias_lookup(mention: str, top: int, out: str, target: str, as_json: bool) -> None:
    """Show the top candidates of MENTION with P(e|m), and its P(unlinked|m)."""
    from entbench.builders.alias.lookup import labels, lookup, mention_stats, open_alias_table
    from entbench.engine.synthetic_ids import is_synthetic

    note_variant(out, target)
    tables = open_alias_table(out, target)
    (key,) = tables.normalize([mention])
    candidates = lookup(tables, [key], top=top)[key]
    stats = mention_stats(tables, [key]).get(key)
    names = labels(tables, [c.qid for c in candidates])
    if as_json:
        payload = {
            "mention": mention,
            "normalized": key,
            "candidates": [
                {**c.__dict__, "label": names.get(c.qid), "synthetic": is_synthetic(c.qid)}
                for c in candidates
            ],
            "mention_stats": stats,
        }
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    click.echo(f"mention {mention!r} (normalised {key!r}): {len(candidates)} candidate(s)")
    if stats is not None:
        p = stats["p_unlinked"]
        shown = "n/a" if p is None else f"{p:.4f}"
        click.echo(
            f"P(unlinked|m) = {shown} ({stats['linked_occurrences']} linked, "
            f"{stats['unlinked_occurrences']} unlinked occurrences)"
        )
    if candidates:
        click.echo(
            f"{'rank':>4}  {'qid':<12} {'P(e|m)':>8} {'count':>7} {'links':>7}  title  redirect  label"
        )
    for c in candidates:
        click.echo(
            f"{c.rank:>4}  {c.qid:<12} {c.p_e_given_m:>8.4f} {c.count:>7} {c.link_count:>7}  "
            f"{'yes' if c.title_flag else 'no':<5}  {'yes' if c.redirect_flag else 'no':<8}  "
            f"{names.get(c.qid, '–')}{' (a synthetic id of the demo world)' if is_synthetic(c.qid) else ''}"
        )


@cli.group("eval")
def eval_group() -> None:
    """Evaluate built artifacts on labeled data."""


@eval_group.command("alias-table")
@click.option("--dataset", required=True, type=click.Path(dir_okay=False), help="Hansel-format jsonl file.")
@_FROM
@_TARGET
@variant_option
@verbose_option
def eval_alias_table(dataset: str, out: str, target: str) -> None:
    """R@1/R@10/R@100 (In-KB) and R@1 with NIL of the alias table on DATASET (JSON report, with the
    first misses at R@1 and the labels of their gold and predicted QIDs)."""
    from entbench.builders.alias.lookup import evaluate, open_alias_table, read_hansel

    note_variant(out, target)
    tables = open_alias_table(out, target)
    report = evaluate(tables, read_hansel(dataset))
    click.echo(json.dumps({"dataset": dataset, **report}, indent=2))
