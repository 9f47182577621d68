"""The paper's 17 datasets, as data: Table 1's item counts and Table 2's heuristic accuracies.

Source: Ray Choudhury & Kalra (2023), "Implications of Annotation Artifacts in Edge Probing Test
Datasets" (CoNLL 2023), Table 1 ("#Points in the EP test data": Train, Test, Dev) and Table 2
("Accuracy (in %) of the heuristic algorithms": Mem-Exact, Mem-Freq, Mem-Uniform, on the test
split). Table 2's figures are kept as printed (``"5.2"``, ``"45"``); Table 1's cells as printed
where they are legible, ``None`` where the text has them garbled (each such cell is named in the
row's note), and ``dev=None`` with ``has_dev=False`` where the paper prints ``-`` (no dev split from
the source: the paper reserves 10% of train, `filter mem --dev-from-train 0.1`).

Table 1 counts the items left after the unseen-label drop (EPtest's converters drop test items
whose label train never has before anything is counted; EWT-PoS dev: 25,150 = every token line),
so Table 2's shares are of those items too.

`input_format` is the `filter mem --input-format` that reads the dataset's public files: CoNLL-U
(or CoNLL-X) for EWT and PTB converted to dependencies, CoNLL column files for CoNLL-2003 and
CoNLL-2000, and jiant edge-probing JSON (Tenney et al. 2019's scripts) for the rest. OntoNotes,
PTB and CoNLL-2003 are licensed: entbench ships none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SOURCE = (
    "Ray Choudhury & Kalra (2023), Implications of Annotation Artifacts in Edge Probing Test "
    "Datasets, Table 1 (items) and Table 2 (Mem-Exact, Mem-Freq, Mem-Uniform in % of the test split)"
)
TENNEY = "Tenney et al. (2019)"
LIU = "Liu et al. (2019)"


@dataclass(frozen=True)
class PaperRow:
    """One dataset of the paper: Table 1's items per split, Table 2's shares as printed."""

    dataset: str
    task: str
    data_of: str  # Table 1's superscript: whose EP data the paper used
    input_format: str
    train: int | None
    test: int | None
    dev: int | None
    mem_exact: str
    mem_freq: str
    mem_uniform: str
    has_dev: bool = True
    note: str = ""

    def shares(self) -> dict[str, float]:
        """Table 2's three figures as numbers, keyed as `report.json` keys them."""
        return {
            "mem_exact": float(self.mem_exact),
            "mem_freq": float(self.mem_freq),
            "mem_uniform": float(self.mem_uniform),
        }


def _row(
    dataset: str,
    task: str,
    data_of: str,
    input_format: str,
    counts: tuple[int | None, int | None, int | None],
    shares: tuple[str, str, str],
    *,
    has_dev: bool = True,
    note: str = "",
) -> PaperRow:
    return PaperRow(dataset, task, data_of, input_format, *counts, *shares, has_dev=has_dev, note=note)


_POS, _NER, _COREF = "Part of Speech Tagging", "Named Entity Recognition", "Coreference Resolution"
_DEP_CLS, _DEP_PRED = "Syntactic Dependency Classification", "Syntactic Dependency Prediction"
_SPR, _ONE = "Semantic Proto-Role Labeling", "One Task Datasets"

#: Table 2's rows in its order, keyed by the dataset's name as printed there.
PAPER_ROWS: Mapping[str, PaperRow] = {
    row.dataset: row
    for row in (
        _row("EWT-PoS", _POS, LIU, "conllu-upos", (204_607, 25_097, 25_150), ("89.73", "42.85", "48.03")),
        _row("PTB-PoS", _POS, LIU, "conllu-xpos", (950_028, 56_684, 40_117), ("97.11", "42.03", "52.62")),
        _row(
            "OntoNotes-PoS",
            _POS,
            TENNEY,
            "jiant",
            (2_070_382, 212_121, 290_013),
            ("98.06", "65.40", "35.26"),
            note="Table 1 prints the test count without separator (212121)",
        ),
        _row(
            "CoNLL-2003-NER",
            _NER,
            LIU,
            "conll2003-ner",
            (203_621, 46_435, 51_362),
            ("86.87", "28.15", "67.93"),
            note="EPtest's converter labels tokens with the files' tags as they are (IOB1); "
            "`conll2003-ner` labels them in IOB2, so an entity's first token is always B-",
        ),
        _row(
            "OntoNotes-NER",
            _NER,
            TENNEY,
            "jiant",
            (128_738, 12_586, None),
            ("70.53", "23.40", "55.58"),
            note="Table 1's dev count is garbled in the text ('255, 133')",
        ),
        _row("DPR", _COREF, TENNEY, "jiant", (1_787, 949, 379), ("28.98", "0.21", "15.81")),
        _row(
            "OntoNotes-Coref", _COREF, TENNEY, "jiant", (207_830, 27_800, 26_333), ("36.55", "16.64", "26.51")
        ),
        _row(
            "EWT-Syn-Dep-Cls",
            _DEP_CLS,
            LIU,
            "conllu-deprel",
            (203_919, 25_049, 25_110),
            ("37.98", "4.56", "34.30"),
            note="Liu et al.'s items (dev 25,110) are not those of a CoNLL-U conversion, which has one "
            "item per non-root arc (UD EWT v2.2 dev: 23,146)",
        ),
        _row(
            "PTB-Syn-Dep-Cls",
            _DEP_CLS,
            LIU,
            "conllu-deprel",
            (910_196, 54_268, 38_417),
            ("62.17", "12.50", "51.81"),
        ),
        _row(
            "EWT-Syn-Dep-Pred",
            _DEP_PRED,
            f"{TENNEY}, {LIU}",
            "conllu-dep-pred",
            (383_462, 45_901, 46_155),
            ("42.44", "13.38", "31.99"),
        ),
        _row(
            "PTB-Syn-Dep-Pred",
            _DEP_PRED,
            LIU,
            "conllu-dep-pred",
            (1_820_225, 108_529, None),
            ("68.04", "17.37", "47.75"),
            note="Table 1 prints dev as 976,820, more than half of train; twice PTB-Syn-Dep-Cls's dev "
            "(38,417) suggests 76,820",
        ),
        _row("SPR-1", _SPR, TENNEY, "jiant", (7_611, 1_055, 1_071), ("5.2", "0.47", "4.55")),
        _row("SPR-2", _SPR, TENNEY, "jiant", (4_925, 582, 630), ("7.2", "0.42", "1.37")),
        _row(
            "CoNLL-Chunking",
            _ONE,
            LIU,
            "conll2000-chunk",
            (211_727, 47_377, None),
            ("89.89", "57.72", "33.88"),
            has_dev=False,
        ),
        _row(
            "OntoNotes-Const",
            _ONE,
            TENNEY,
            "jiant",
            (1_851_590, None, None),
            ("45", "17.79", "33.57"),
            note="Table 1's test and dev counts are garbled in the text ('190, 53', '5255, 133')",
        ),
        _row("OntoNotes-SRL", _ONE, TENNEY, "jiant", (598_983, 61_716, 83_362), ("32.07", "6.98", "26.76")),
        _row(
            "Semeval-Rel-Cls",
            _ONE,
            TENNEY,
            "jiant",
            (8_000, 2_717, None),
            ("3.35", "0.11", "3.3"),
            has_dev=False,
        ),
    )
}


def find_row(name: str) -> PaperRow:
    """The row named `name` (Table 2's spelling, any case); `KeyError` if the paper has none."""
    for dataset, row in PAPER_ROWS.items():
        if dataset.lower() == name.lower():
            return row
    raise KeyError(name)
