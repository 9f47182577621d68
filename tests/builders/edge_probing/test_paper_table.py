"""The paper's Table 1 and Table 2, carried as data (`builders.edge_probing.paper_table`)."""

from __future__ import annotations

import pytest

from entbench.builders.edge_probing.paper_table import PAPER_ROWS, find_row
from entbench.readers.edge_probing.formats import INPUT_FORMATS

#: Table 2's dataset column, in its order (Ray Choudhury & Kalra 2023).
TABLE_2 = (
    "EWT-PoS",
    "PTB-PoS",
    "OntoNotes-PoS",
    "CoNLL-2003-NER",
    "OntoNotes-NER",
    "DPR",
    "OntoNotes-Coref",
    "EWT-Syn-Dep-Cls",
    "PTB-Syn-Dep-Cls",
    "EWT-Syn-Dep-Pred",
    "PTB-Syn-Dep-Pred",
    "SPR-1",
    "SPR-2",
    "CoNLL-Chunking",
    "OntoNotes-Const",
    "OntoNotes-SRL",
    "Semeval-Rel-Cls",
)


def test_all_17_rows_in_table_2s_order_each_with_a_format_entbench_reads() -> None:
    assert tuple(PAPER_ROWS) == TABLE_2
    for row in PAPER_ROWS.values():
        assert row.input_format in INPUT_FORMATS
        assert all(0.0 <= share <= 100.0 for share in row.shares().values())
        assert row.train is not None and row.train > 0
        assert row.has_dev or row.dev is None
        # A cell the text garbles is None, and the row's note says what is printed there.
        unreadable = row.test is None or (row.has_dev and row.dev is None)
        assert not unreadable or "garbled" in row.note or "prints" in row.note


@pytest.mark.parametrize(
    ("name", "shares", "counts", "input_format"),
    [
        ("EWT-PoS", (89.73, 42.85, 48.03), (204_607, 25_097, 25_150), "conllu-upos"),
        ("PTB-PoS", (97.11, 42.03, 52.62), (950_028, 56_684, 40_117), "conllu-xpos"),
        ("CoNLL-2003-NER", (86.87, 28.15, 67.93), (203_621, 46_435, 51_362), "conll2003-ner"),
        ("CoNLL-Chunking", (89.89, 57.72, 33.88), (211_727, 47_377, None), "conll2000-chunk"),
        ("SPR-1", (5.2, 0.47, 4.55), (7_611, 1_055, 1_071), "jiant"),
    ],
)
def test_rows_as_printed(
    name: str, shares: tuple[float, float, float], counts: tuple[int, int, int | None], input_format: str
) -> None:
    row = find_row(name.upper())
    assert row.dataset == name
    assert tuple(row.shares().values()) == shares
    assert (row.train, row.test, row.dev) == counts
    assert row.input_format == input_format


def test_only_the_datasets_without_a_source_dev_split_lack_one() -> None:
    assert [name for name, row in PAPER_ROWS.items() if not row.has_dev] == [
        "CoNLL-Chunking",
        "Semeval-Rel-Cls",
    ]
    with pytest.raises(KeyError):
        find_row("CoNLL-2002-NER")
