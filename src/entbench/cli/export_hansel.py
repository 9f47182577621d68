"""`entbench export hansel-train|hansel-kb|hansel-test` (docs/stages.md, hansel and hansel_kb)."""

from __future__ import annotations

import click

from entbench.cli.app import FROM_HELP, note_variant, variant_option, verbose_option
from entbench.cli.export_cmd import echo_export, export, format_option, format_target, formats


@export.command("hansel-train")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@format_option(
    "hansel-train",
    "jsonl: train.jsonl and validation.jsonl, one record per line with the official keys "
    "id, text, start, end, mention, gold_id (UTF-8, no ASCII escaping).",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@variant_option
@verbose_option
def hansel_train(build_out: str, fmt: str, out: str) -> None:
    """Export the Hansel train/validation sets of a build (`entbench build hansel-train`)."""
    from entbench.builders.hansel.export import export_hansel_train

    note_variant(build_out, format_target("hansel-train", fmt))
    result = export_hansel_train(build_out=build_out, fmt=fmt, out=out)
    echo_export("hansel-train", fmt, result)


@export.command("hansel-kb")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@format_option(
    "hansel-kb",
    "jsonl: kb.jsonl, one entity per line with the keys id, title, text, url, label, "
    "description, aliases, type, split (UTF-8, no ASCII escaping).",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@verbose_option
def hansel_kb(build_out: str, fmt: str, out: str) -> None:
    """Export the entity KB of a build (`entbench build hansel-kb`): E_known and E_new with each
    entity's zhwiki title and first paragraph (Simplified), URL, label, description, aliases,
    coarse type and set."""
    from entbench.builders.hansel.export import export_hansel_kb

    result = export_hansel_kb(build_out=build_out, fmt=fmt, out=out)
    echo_export("hansel-kb", fmt, result)


@export.command("hansel-test")
@click.option("--from", "build_out", required=True, type=click.Path(file_okay=False), help=FROM_HELP)
@click.option(
    "--annotations",
    required=True,
    type=click.Path(dir_okay=False),
    help="JSON lines filled in by annotators: candidate (hansel-fewshot-N or hansel-zeroshot-N), "
    "gold_id (a QID or NIL_PER|NIL_LOC|NIL_ORG|NIL_EVENT|NIL_OTHER), source, domain; few-shot: "
    "optional start/end (corrected boundary); zero-shot: text, start, end.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory to write.")
@verbose_option
def hansel_test(build_out: str, annotations: str, out: str) -> None:
    """Turn annotations of a build's few-shot candidates and zero-shot pool into Hansel-FS and
    Hansel-ZS in the release format (hansel-few-shot.jsonl, hansel-zero-shot.jsonl), dropping
    few-shot examples whose AT@1 is the gold, and write table1.json (Hansel Table 1's columns)."""
    from entbench.builders.hansel.testsets import export_hansel_test

    done = export_hansel_test(build_out=build_out, annotations=annotations, out=out)
    echo_export("hansel-test", formats("hansel-test")[0], done.result)
    for reason, n in sorted(done.dropped.items()):
        click.echo(f"dropped {reason}: {n:,}")
    click.echo(render_table1(done.table1))


def render_table1(table1: dict[str, dict[str, dict[str, int]]]) -> str:
    """Hansel Table 1's rows for the slices written."""
    header = (
        f"{'slice':<10} {'mentions In-KB':>14} {'NIL':>6} {'total':>6}  {'docs In-KB':>10} {'NIL':>6} "
        f"{'total':>6}  {'E_known':>7} {'E_new':>6} {'total':>6}"
    )
    lines = [header]
    for name, row in table1.items():
        m, d, e = row["mentions"], row["documents"], row["entities"]
        lines.append(
            f"{name:<10} {m['in_kb']:>14,} {m['nil']:>6,} {m['total']:>6,}  {d['in_kb']:>10,} "
            f"{d['nil']:>6,} {d['total']:>6,}  {e['e_known']:>7,} {e['e_new']:>6,} {e['total']:>6,}"
        )
    return "\n".join(lines)
