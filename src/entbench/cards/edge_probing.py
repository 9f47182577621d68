"""The card of an `entbench filter mem` run: `OUT/README.md`, the edge-probing leakage audit.

Edge probing has no dump build, so no `<out>/cards/<target>/`: the memorisation audit of a
train/test pair *is* its leakage audit (issue 10: "Mem-Exact overlap between train and the other
splits, in the card"). This card says, from the run's own `report.json` and `stats.json`, how
much of the test split a train-memorising baseline solves (Ray Choudhury & Kalra 2023 §3,
Table 2), which inputs (by sha256) and parameters gave it, what each output file holds, and the
command that writes the same files again. It holds no timestamp or timing, so two identical runs
write identical bytes. Pure text: no matplotlib, no I/O.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from entbench.builders.edge_probing.paper_table import PAPER_ROWS, SOURCE, PaperRow
from entbench.cards.charts import md_table
from entbench.cards.stage_docs import section_link

#: The heuristics in the paper's Table 2 order, with their names there.
TITLES = {"mem_exact": "Mem-Exact", "mem_freq": "Mem-Freq", "mem_uniform": "Mem-Uniform"}

#: What each heuristic solves in each `--mode`.
MODE_TEXT = {
    "eptest": "Mode `eptest` (EPtest's code, the paper's Table 2): Mem-Exact solves a test item whose "
    "span text(s) together with its exact label set occur in train; Mem-Freq draws a train label "
    "of the span weighted by its train counts (only when the counts are not uniform); Mem-Uniform "
    "draws one of the span's distinct train label sets uniformly; an item is solved when the draw "
    "equals its label.",
    "strict": "Mode `strict` (the paper's prose): Mem-Exact solves a test item whose span occurs in "
    "train with exactly one label, equal to the test label; Mem-Freq answers the span's most "
    "frequent train label; Mem-Uniform draws one of its train labels uniformly.",
}


def rebuild_command(stats: Mapping[str, Any], out: str) -> str:
    """The `entbench filter mem` command line that writes this run's files again."""
    args = [
        "entbench",
        "filter",
        "mem",
        "--train",
        str(stats["train"]["path"]),
        "--test",
        str(stats["test"]["path"]),
        "--input-format",
        str(stats["input_format"]),
        "--mode",
        str(stats["mode"]),
        "--seed",
        str(stats["seed"]),
        "--negative-seed",
        str(stats["negative_seed"]),
    ]
    dev = stats.get("dev_from_train")
    if dev:
        args += ["--dev-from-train", str(dev["fraction"]), "--dev-seed", str(dev["seed"])]
    if stats.get("paper_row"):
        args += ["--paper-row", str(stats["paper_row"])]
    return shlex.join([*args, "--out", out])


def _signed(value: float, digits: int) -> str:
    return f"{value:+,.{digits}f}"


def paper_section(row: PaperRow, report: Mapping[str, Any], stats: Mapping[str, Any]) -> list[str]:
    """The paper's Table 2 row beside this run's figures, and what makes them comparable or not."""
    n_test = int(report["n_test"])
    ours = [float(report[key]) for key in TITLES]
    theirs = list(row.shares().values())
    table = md_table(
        ["", "test items audited", *TITLES.values()],
        [
            (f"this run (mode `{stats['mode']}`)", f"{n_test:,}", *(f"{v:.2f}%" for v in ours)),
            (
                f"paper: {row.dataset} (Table 2, test split)",
                "?" if row.test is None else f"{row.test:,}",
                *(f"{v}%" for v in (row.mem_exact, row.mem_freq, row.mem_uniform)),
            ),
            (
                "this run - paper",
                "?" if row.test is None else _signed(n_test - row.test, 0),
                *(f"{_signed(a - b, 2)} points" for a, b in zip(ours, theirs, strict=True)),
            ),
        ],
        "lrrrr",
    )

    def count(value: int | None) -> str:
        return "illegible in the text" if value is None else f"{value:,}"

    dev = f"dev {count(row.dev)}" if row.has_dev else "no dev split (the paper reserves 10% of train)"
    notes = [
        f"Source: {SOURCE}. {row.dataset} ({row.task}; data of {row.data_of}): Table 1 counts "
        f"train {count(row.train)}, test {count(row.test)}, {dev}.",
        "Table 2's shares are of the test items left after the unseen-label drop, as this run's are: "
        "EPtest's converters drop test items whose label train never has before the heuristics run, "
        f"and Table 1 counts what is left (this run dropped {int(stats['unseen_label_drops']):,}).",
        f"Train: this run audited against {int(stats['train_items_audited']):,} items, the paper's "
        f"code against Table 1's {count(row.train)}.",
    ]
    if stats["input_format"] != row.input_format:
        notes.append(
            f"The paper's public files for this row are read with `--input-format {row.input_format}`; "
            f"this run read `{stats['input_format']}`."
        )
    if stats["mode"] != "eptest":
        notes.append("Table 2 was computed by EPtest's code (`--mode eptest`); this run is `strict`.")
    if not row.has_dev and not stats.get("dev_from_train"):
        notes.append("The source has no dev split: `--dev-from-train 0.1` reserves one as the paper did.")
    if row.note:
        notes.append(row.note + ".")
    return ["## Beside the paper's Table 2", table, "\n".join(f"- {n}" for n in notes)]


def dev_section(dev: Mapping[str, Any]) -> list[str]:
    """What `--dev-from-train` reserved, and what it dropped."""
    return [
        "## Dev split reserved from train",
        f"Where the source has no dev split, the paper reserves 10% of train for validation (§2.2). "
        f"This run drew {int(dev['dev_sentences']):,} of the {int(dev['train_sentences']):,} train "
        f"sentences (fraction {dev['fraction']}, `random.Random({dev['seed']}).sample`): "
        f"{int(dev['dev_items']):,} items, of which {int(dev['dev_items_written']):,} are in "
        f"`dev.jsonl` ({int(dev['dev_unseen_label_drops']):,} dropped for a label the train left "
        f"never has). The {int(dev['train_items_left']):,} train items left are in `train.jsonl`; "
        "the audit ran against them.",
    ]


def filter_mem_card(report: Mapping[str, Any], stats: Mapping[str, Any], out: str) -> str:
    """The Markdown card of one `filter mem` run (`report`/`stats` as written to their JSON files)."""
    n_test = int(report["n_test"])
    audit = md_table(
        ["heuristic", "test items solved", "of audited", "share"],
        [
            (title, int(stats["removed"][key]), n_test, f"{float(report[key]):.2f}%")
            for key, title in TITLES.items()
        ],
        "lrrr",
    )
    inputs = md_table(
        ["split", "path (as given)", "bytes", "sha256", "items"],
        [
            (
                split,
                f"`{stats[split]['path']}`",
                int(stats[split]["bytes"]),
                f"`{stats[split]['sha256']}`",
                int(stats[split]["items"]),
            )
            for split in ("train", "test")
        ],
        "llrlr",
    )
    dev = stats.get("dev_from_train")
    params = md_table(
        ["parameter", "value"],
        [
            *((name, f"`{stats[name]}`") for name in ("input_format", "mode", "seed", "negative_seed")),
            *((("dev_from_train", f"`{dev['fraction']}`"), ("dev_seed", f"`{dev['seed']}`")) if dev else ()),
            *((("paper_row", f"`{stats['paper_row']}`"),) if stats.get("paper_row") else ()),
        ],
    )
    files = md_table(
        ["file", "content"],
        [
            ("`report.json`", "`n_test` and the three shares in %, as the paper's Table 2 (`mode` too)"),
            ("`stats.json`", "counts behind the shares, inputs with their sha256, parameters"),
            ("`test.parquet`", f"the {n_test:,} audited test items"),
            (
                "`unseen_label.parquet`",
                f"the {int(stats['unseen_label_drops']):,} test items dropped first, with reason",
            ),
            *(
                (
                    f"`{key}/filtered.parquet`, `{key}/filtered.jsonl`, `{key}/removed.parquet`",
                    f"the test set without what {title} solves ({int(stats['kept'][key]):,} items; "
                    "jiant JSON lines too), and the removed items with their reason",
                )
                for key, title in TITLES.items()
            ),
            *(
                (
                    ("`dev.jsonl`", f"the {int(dev['dev_items_written']):,} dev items reserved from train"),
                    ("`train.jsonl`", f"the {int(dev['train_items_left']):,} train items left"),
                )
                if dev
                else ()
            ),
        ],
    )
    parts = [
        "# Edge-probing memorisation audit",
        f"Written by `entbench filter mem` (`{section_link('mem_audit')}`): the share of the test "
        "split that a baseline "
        "memorising the train split solves, as in Ray Choudhury & Kalra (2023), §3 and Table 2. "
        "Every number here is read from `report.json` and `stats.json` next to this file.",
        "## Leakage audit",
        f"**Mem-Exact** is the train/test overlap. {MODE_TEXT.get(str(stats['mode']), '')} Draws are "
        f"seeded (`random.seed({stats['seed']})` before each heuristic, in test order). As in the "
        f"paper, the {int(stats['unseen_label_drops']):,} test items whose label never occurs in "
        f"train are dropped first, so the shares are of the {n_test:,} remaining items." + _iob2_text(stats),
        audit,
        *([] if not stats.get("paper_row") else paper_section(PAPER_ROWS[stats["paper_row"]], report, stats)),
        *([] if not dev else dev_section(dev)),
        "## Inputs",
        inputs,
        "## Parameters",
        params,
        "## Files",
        files,
        "## How to rebuild",
        "The run is deterministic: the same inputs and parameters write the same bytes.",
        f"```sh\n{rebuild_command(stats, out)}\n```",
        "## Licence",
        "The filtered sets are items of the test file and keep its licence (UD English EWT, for "
        "example, is CC BY-SA 4.0); entbench itself is Apache-2.0.",
    ]
    return "\n\n".join(parts) + "\n"


def _iob2_text(stats: Mapping[str, Any]) -> str:
    converted = stats.get("iob2_converted")
    if not converted:
        return ""
    train, test = int(converted["train"]), int(converted["test"])
    if train == test == 0:
        return " Labels are the files' tags, already in IOB2 (no tag converted)."
    return (
        f" Labels are tags in IOB2: {train:,} train and {test:,} test tags were IOB1 and are "
        "converted (each such item keeps the file's tag in its target `info`)."
    )
