"""`entbench filter mem`: the edge-probing memorisation heuristics on a train/test pair
(docs/stages.md, mem_audit)."""

from __future__ import annotations

import time
from typing import Any

import click

from entbench.cli.app import cli, verbose_option

_INPUT_FORMATS = ("jiant", "conllu-upos", "conllu-deprel", "conllu-dep-pred")
_TITLES = {"mem_exact": "Mem-Exact", "mem_freq": "Mem-Freq", "mem_uniform": "Mem-Uniform"}


@cli.group(name="filter")
def filter_group() -> None:
    """Filter benchmark test sets (memorisation heuristics)."""


@filter_group.command()
@click.option("--train", required=True, type=click.Path(exists=True, dir_okay=False), help="Train split.")
@click.option(
    "--test", required=True, type=click.Path(exists=True, dir_okay=False), help="Test split to audit."
)
@click.option(
    "--input-format",
    default="jiant",
    show_default=True,
    type=click.Choice(_INPUT_FORMATS),
    help="jiant edge-probing JSON lines, or CoNLL-U converted to pos / dep-cls / dep-pred.",
)
@click.option(
    "--mode",
    default="eptest",
    show_default=True,
    type=click.Choice(("eptest", "strict")),
    help="eptest: EPtest's code, the paper's Table 2 (CoNLL-U: every token line, as EPtest); "
    "strict: the paper's prose (CoNLL-U: words only).",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--seed", default=30, show_default=True, type=int, help="Heuristics' seed (EPtest: 30).")
@click.option(
    "--negative-seed", default=0, show_default=True, type=int, help="dep-pred negatives' seed (EPtest: 0)."
)
@verbose_option
def mem(train: str, test: str, input_format: str, mode: str, out: str, seed: int, negative_seed: int) -> None:
    """Share of TEST items Mem-Exact, Mem-Freq and Mem-Uniform solve from TRAIN; write filtered sets.

    Writes OUT/report.json, OUT/stats.json, OUT/test.parquet, OUT/unseen_label.parquet, per
    heuristic OUT/<heuristic>/{filtered.parquet,filtered.jsonl,removed.parquet}, and OUT/README.md
    (the audit's card: shares, inputs with sha256, parameters, rebuild command).
    """
    from entbench.api import filter_mem

    started = time.monotonic()
    done = filter_mem(
        train=train,
        test=test,
        out=out,
        input_format=input_format,
        mode=mode,
        seed=seed,
        negative_seed=negative_seed,
    )
    click.echo(render_table(done.report, done.stats))
    click.echo(f"wrote {done.out} in {time.monotonic() - started:.1f}s")


def render_table(report: dict[str, Any], stats: dict[str, Any]) -> str:
    """The report as the paper's Table 2 row, with counts."""
    n_test = int(report["n_test"])
    lines = [
        f"mode {report['mode']}, seed {stats['seed']}: train {stats['train']['items']} items, "
        f"test {stats['test']['items']} items, {stats['unseen_label_drops']} dropped "
        f"(label unseen in train), {n_test} audited",
        f"{'heuristic':<12} {'solved':>8} {'of':>8} {'percent':>8}",
    ]
    for key, title in _TITLES.items():
        lines.append(f"{title:<12} {stats['removed'][key]:>8} {n_test:>8} {report[key]:>8.2f}")
    return "\n".join(lines)
