"""The `enteval-tasks` card's comparison with the EntEval paper (Chen et al. 2019): its Table 1 (train,
valid and test sizes and number of classes of every task) beside this build's, and the two figures
the paper gives about how its data was made: CERP's 13,374 assertions after its spaCy entity filters
(§3.4) and NED's prior-only accuracy of 58.2% (§3.7).

This build's sizes come from the task stages' manifest stats (instances written per split); a task
whose sources were not named is marked "not configured".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from entbench.cards.build_view import BuildView
from entbench.cards.charts import md_table, percent

NOT_CONFIGURED = "not configured"
HEADER = (
    *("loader task", "paper column", "train", "valid", "test", "classes"),
    *("paper train", "paper valid", "paper test", "paper classes"),
)
#: CERP's assertions after the paper's filters (§3.4), and NED's prior-only accuracy (§3.7).
PAPER_CERP_ASSERTIONS = 13374
PAPER_PRIOR_ONLY_ACCURACY = 0.582


@dataclass(frozen=True)
class Column:
    """A column of the paper's Table 1 and where this build's figures are counted.

    `loader`: the task's name in `ZeweiChu/EntEval:enteval/engine.py`; `splits`: the stat keys of
    the train, valid and test sizes (None: the paper has no such split); `classes`: a stat key or a
    fixed number (None: not a classification task)."""

    loader: str
    paper_name: str
    stage: str
    paper: tuple[str, str, str, str]
    splits: tuple[str | None, str | None, str | None]
    classes: str | int | None


def _written(prefix: str, *splits: str) -> tuple[str, str, str]:
    a, b, c = (f"{prefix}{split}" for split in splits)
    return a, b, c


COLUMNS = (
    Column(
        "CAPsame",
        "CAP same",
        "enteval_cap",
        ("3,982", "3,806", "3,938", "2"),
        _written("pairs_written_same_", "train", "dev", "test"),
        2,
    ),
    Column(
        "CAPnext",
        "CAP next",
        "enteval_cap",
        ("3,982", "3,828", "3,850", "2"),
        _written("pairs_written_next_", "train", "dev", "test"),
        2,
    ),
    Column(
        "CERP",
        "CERP",
        "enteval_cerp",
        ("4,000", "4,000", "4,000", "2"),
        _written("instances_written_", "train", "dev", "test"),
        2,
    ),
    Column(
        "EFP",
        "EFP",
        "enteval_efp",
        ("10,000", "2,000", "2,000", "2"),
        _written("instances_written_", "train", "dev", "test"),
        "labels",
    ),
    Column(
        "ET",
        "ET",
        "enteval_et",
        ("1,998", "1,998", "1,998", "10,331"),
        _written("instances_written_", "train", "dev", "test"),
        "labels",
    ),
    Column(
        "KORE", "KORE", "enteval_kore", ("N/A", "N/A", "20 × 20", "N/A"), (None, None, "groups_written"), None
    ),
    Column(
        "WikiSRS",
        "WikiSRS Rel",
        "enteval_wikisrs",
        ("N/A", "N/A", "688", "N/A"),
        (None, None, "lines_wikisrs/WikiSRS_relatedness.csv.pro"),
        None,
    ),
    Column(
        "WikiSRS",
        "WikiSRS Sim",
        "enteval_wikisrs",
        ("N/A", "N/A", "688", "N/A"),
        (None, None, "lines_wikisrs/WikiSRS_similarity.csv.pro"),
        None,
    ),
    Column(
        "ERT",
        "ERT",
        "enteval_ert",
        ("3,130", "6,260", "6,260", "626"),
        _written("lines_ERT/", "train.txt", "dev.txt", "test.txt"),
        "relations_kept",
    ),
    Column(
        "Rare",
        "Rare",
        "enteval_rare",
        ("10,000", "4,000", "4,000", "4"),
        _written("instances_written_", "train", "valid", "test"),
        4,
    ),
    Column(
        "ConllYago",
        "CoNLL",
        "enteval_conll_yago",
        ("18,538", "4,790", "4,481", "up to 80"),
        _written("mentions_written_", "train", "testa", "testb"),
        "max_candidates",
    ),
)


def build_figures(
    column: Column, stats: Mapping[str, Any], params: Mapping[str, Any]
) -> tuple[str, str, str, str]:
    """This build's train, valid, test and classes cells for one column."""
    cells = ["N/A" if key is None else f"{int(stats.get(key, 0)):,}" for key in column.splits]
    if column.stage == "enteval_kore":
        groups = int(stats.get("groups_written", 0))
        lines = int(stats.get("lines_KORE/all.txt", 0))
        cells[2] = f"{groups} × {lines // groups - 1}" if groups else "0"
    if column.classes is None:
        classes = "N/A"
    elif isinstance(column.classes, int):
        classes = str(column.classes)
    elif column.classes == "max_candidates":
        classes = f"up to {params.get('max_candidates')}"
    else:
        classes = f"{int(stats.get(column.classes, 0)):,}"
    return cells[0], cells[1], cells[2], classes


def table1_blocks(view: BuildView, built: Mapping[str, bool]) -> list[str]:
    """The comparison table and the two notes, for the task stages whose status `built` gives."""
    rows = []
    for column in COLUMNS:
        if column.stage not in built:
            continue
        if built[column.stage]:
            manifest = view.manifests[column.stage]
            ours: tuple[str, ...] = build_figures(column, manifest["stats"], manifest["params"])
        else:
            ours = (NOT_CONFIGURED,) * 4
        rows.append((column.loader, column.paper_name, *ours, *column.paper))
    blocks = [
        "The paper's Table 1 beside this build (train / valid / test instances and number of classes; "
        "the loaders read the task named in the first column; `ERT` is the task the upstream loader "
        "once listed as `'ER'`, see `entbench export enteval --help`):",
        md_table(
            HEADER,
            rows,
            "llrrrrrrrr",
        ),
    ]
    if built.get("enteval_cerp"):
        blocks.append(_cerp_note(view))
    if built.get("enteval_conll_yago"):
        blocks.append(_ned_note(view))
    return blocks


def _cerp_note(view: BuildView) -> str:
    manifest = view.manifests["enteval_cerp"]
    stats, params = manifest["stats"], manifest["params"]
    kept = int(stats.get("statements", 0))
    if not params.get("ner_model"):
        return (
            f"CERP: {kept:,} assertions kept, beside the paper's {PAPER_CERP_ASSERTIONS:,}. The paper's "
            "entity filters (spaCy entity types DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL, CARDINAL "
            "and non-entity mentions dropped) were **skipped**: no `ner_model` was given "
            "(`--param enteval_cerp.ner_model=PIPELINE`, a spaCy pipeline with an entity recogniser)."
        )
    numeric = int(stats.get("dropped_numeric_entity", 0))
    non_entity = int(stats.get("dropped_not_entity_mention", 0))
    return (
        f"CERP: {kept:,} assertions kept after the entity filters of `{params['ner_model']}` "
        f"({numeric:,} dropped for a numeric or time entity, {non_entity:,} for no entity mention; "
        f"concepts required: {params.get('ner_concepts')}), beside the paper's {PAPER_CERP_ASSERTIONS:,}."
    )


def _ned_note(view: BuildView) -> str:
    manifest = view.manifests["enteval_conll_yago"]
    stats, params = manifest["stats"], manifest["params"]
    source = (
        f"the dictionary `{params['candidate_dictionary']}`"
        if params.get("candidate_dictionary")
        else "the build's alias table"
    )
    parts = []
    for split in ("train", "testa", "testb"):
        share = stats.get(f"prior_only_accuracy_{split}")
        written = int(stats.get(f"mentions_written_{split}", 0))
        parts.append(f"{split} {percent(share) if share is not None else '–'} of {written:,}")
    overall = stats.get("prior_only_accuracy")
    return (
        f"NED: the prior-only accuracy (the highest-prior candidate is the gold; candidates from {source}) "
        f"is {percent(overall) if overall is not None else '–'} ({', '.join(parts)}), beside the paper's "
        f"{percent(PAPER_PRIOR_ONLY_ACCURACY)} with CrossWikis candidates."
    )
