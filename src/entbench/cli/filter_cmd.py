"""`entbench filter mem`: the edge-probing memorisation heuristics on a train/test pair
(docs/stages.md, mem_audit)."""

from __future__ import annotations

import time
from typing import Any

import click

from entbench.builders.edge_probing.paper_table import PAPER_ROWS
from entbench.cli.app import cli, verbose_option

#: `readers.edge_probing.formats.INPUT_FORMATS`, spelled out so that `--help` imports no reader.
_INPUT_FORMATS = (
    "jiant",
    "conllu-upos",
    "conllu-xpos",
    "conllu-deprel",
    "conllu-dep-pred",
    "conll2003-ner",
    "conll2000-chunk",
)
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
    help="jiant edge-probing JSON lines; CoNLL-U (or CoNLL-X) as UPOS or XPOS tags, dependency "
    "labels or arcs; CoNLL-2003 NER or CoNLL-2000 chunk column files (tags in IOB2, IOB1 converted).",
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
@click.option(
    "--dev-from-train",
    type=float,
    metavar="FRACTION",
    help="Reserve this share of the train sentences as dev (the paper's rule for datasets without "
    "a dev split: 0.1), write OUT/dev.jsonl and OUT/train.jsonl, audit against the rest.",
)
@click.option("--dev-seed", default=0, show_default=True, type=int, help="Seed of the --dev-from-train draw.")
@click.option(
    "--paper-row",
    type=click.Choice(tuple(PAPER_ROWS), case_sensitive=False),
    metavar="DATASET",
    help="Show the paper's Table 2 row of DATASET in the card, beside this run's figures: "
    + ", ".join(PAPER_ROWS)
    + ".",
)
@verbose_option
def mem(
    train: str,
    test: str,
    input_format: str,
    mode: str,
    out: str,
    seed: int,
    negative_seed: int,
    dev_from_train: float | None,
    dev_seed: int,
    paper_row: str | None,
) -> None:
    """Share of TEST items Mem-Exact, Mem-Freq and Mem-Uniform solve from TRAIN; write filtered sets.

    Writes OUT/report.json, OUT/stats.json, OUT/test.parquet, OUT/unseen_label.parquet, per
    heuristic OUT/<heuristic>/{filtered.parquet,filtered.jsonl,removed.parquet}, with
    --dev-from-train OUT/dev.jsonl and OUT/train.jsonl, and OUT/README.md (the audit's card: shares,
    the paper's row, inputs with sha256, parameters, rebuild command).
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
        dev_from_train=dev_from_train,
        dev_seed=dev_seed,
        paper_row=paper_row,
    )
    click.echo(render_table(done.report, done.stats))
    click.echo(f"wrote {done.out} in {time.monotonic() - started:.1f}s")


def render_table(report: dict[str, Any], stats: dict[str, Any]) -> str:
    """The report as the paper's Table 2 row, with counts (and the paper's row when named)."""
    n_test = int(report["n_test"])
    dev = stats.get("dev_from_train")
    reserved = (
        "" if not dev else f" ({dev['train_items_left']} left after {dev['dev_items']} reserved as dev)"
    )
    row = PAPER_ROWS[stats["paper_row"]] if stats.get("paper_row") else None
    lines = [
        f"mode {report['mode']}, seed {stats['seed']}: train {stats['train']['items']} items{reserved}, "
        f"test {stats['test']['items']} items, {stats['unseen_label_drops']} dropped "
        f"(label unseen in train), {n_test} audited",
        f"{'heuristic':<12} {'solved':>8} {'of':>8} {'percent':>8}"
        + ("" if row is None else f" {'paper':>8}"),
    ]
    paper = (
        {}
        if row is None
        else {"mem_exact": row.mem_exact, "mem_freq": row.mem_freq, "mem_uniform": row.mem_uniform}
    )
    for key, title in _TITLES.items():
        line = f"{title:<12} {stats['removed'][key]:>8} {n_test:>8} {report[key]:>8.2f}"
        lines.append(line if row is None else f"{line} {paper[key]:>8}")
    if row is not None:
        items = "?" if row.test is None else f"{row.test:,}"
        lines.append(f"paper: {row.dataset}, the paper's Table 2 (test split, {items} items in Table 1)")
    return "\n".join(lines)
