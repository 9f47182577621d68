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
        "--out",
        out,
    ]
    return shlex.join(args)


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
    params = md_table(
        ["parameter", "value"],
        [(name, f"`{stats[name]}`") for name in ("input_format", "mode", "seed", "negative_seed")],
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
        f"train are dropped first, so the shares are of the {n_test:,} remaining items.",
        audit,
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
