"""The card parts of a published folder (`entbench publish`): the `configs` of its YAML front matter
and how to load it, by its configs and splits, with paths relative to the card.

A Hugging Face dataset folder maps each config to Parquet files per split in the card's front
matter; `datasets.load_dataset(FOLDER)` then reads the default config, and
`datasets.load_dataset(FOLDER, CONFIG)` any other, with no code (Hugging Face's "manual
configuration" of a dataset card).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from entbench.cards.build_view import BuildView
from entbench.cards.model import Block, PublishedTable

#: The name `datasets.load_dataset(FOLDER)` reads without a config name.
DEFAULT_CONFIG = "default"


def configs(view: BuildView) -> dict[str, list[PublishedTable]]:
    """The published tables by config, in the order publish placed them."""
    found: dict[str, list[PublishedTable]] = {}
    for table in view.published.values():
        found.setdefault(table.config, []).append(table)
    return found


def configs_yaml(view: BuildView) -> list[str]:
    """The `configs:` lines of the front matter (none for a card that was not published): every
    config's splits and files; the first config is the default when none is named `default`."""
    grouped = configs(view)
    if not grouped:
        return []
    default = DEFAULT_CONFIG if DEFAULT_CONFIG in grouped else next(iter(grouped))
    lines = ["configs:"]
    for config, tables in grouped.items():
        lines.append(f"- config_name: {json.dumps(config)}")
        lines.append("  data_files:")
        for table in tables:
            lines += [f"  - split: {json.dumps(table.split)}", f"    path: {json.dumps(table.glob)}"]
        if config == default:
            lines.append("  default: true")
    return lines


def published_load_blocks(view: BuildView, tables: Sequence[tuple[str, str]]) -> list[Block]:
    """How to load this folder (or the Hub repository it is uploaded to): `datasets` by config,
    pyarrow and Polars by glob."""
    grouped = configs(view)
    default = DEFAULT_CONFIG if DEFAULT_CONFIG in grouped else next(iter(grouped), "")
    lines = ["import glob", "import datasets, polars as pl, pyarrow.dataset as ds", ""]
    lines.append('where = "."  # this folder, or "USER/NAME" once it is uploaded to the Hub')
    for config, members in grouped.items():
        call = (
            "datasets.load_dataset(where)"
            if config == default
            else f"datasets.load_dataset(where, {config!r})"
        )
        splits = ", ".join(t.split for t in members)
        lines.append(f"{_variable(config)} = {call}  # splits: {splits}")
    published = [view.published[t] for t in tables if t in view.published]
    if published:
        first = published[0].glob
        lines += [
            f'arrow = ds.dataset(sorted(glob.glob("{first}"))).to_table()',
            f'frame = pl.read_parquet("{first}")',
        ]
    blocks: list[Block] = [
        "Load it with no code of its own (the configs of the front matter):",
        "```python\n" + "\n".join(lines) + "\n```",
    ]
    empty = [table for stage, table in tables if (stage, table) not in view.published]
    if empty:
        blocks.append(
            f"Not published, having no rows in this build: {', '.join(f'`{t}`' for t in empty)} "
            "(Hugging Face `datasets` refuses a split without examples)."
        )
    return blocks


def _variable(config: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in config)
    return name if name.isidentifier() else f"config_{name}"
