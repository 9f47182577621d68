"""CoNLL-2003 NER and CoNLL-2000 chunking column files -> token items with IOB2 tags.

The inputs are hand-written in each layout (fixtures/edge-probing-layouts/PROVENANCE.md): the
real corpora are licensed and not shipped.
"""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest

from entbench.errors import DataError, UserError
from entbench.readers.edge_probing.conll import converted_tags, iob2, read_conll_tags
from entbench.readers.edge_probing.formats import INPUT_FORMATS, read_edge_probing
from entbench.readers.edge_probing.items import read_jiant, write_jiant

LAYOUTS = Path(__file__).resolve().parents[2] / "fixtures" / "edge-probing-layouts"
NER_TRAIN = LAYOUTS / "conll2003" / "train.txt"
NER_TEST = LAYOUTS / "conll2003" / "test.txt"
CHUNK_TRAIN = LAYOUTS / "conll2000" / "train.txt"


def token_lines(path: Path) -> list[list[str]]:
    """The fields of every token line: not blank, not `-DOCSTART-`."""
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row and row[0] != "-DOCSTART-"]


def test_every_token_line_is_one_item_and_docstart_and_blank_lines_are_boundaries() -> None:
    items = read_conll_tags(NER_TEST, "conll2003-ner")
    assert [it.span1_text for it in items] == [row[0] for row in token_lines(NER_TEST)]
    assert len(items) == 19
    # Three sentences: the `-DOCSTART-` lines start none and end the one before them.
    assert [it.text for it in items if it.target_index == 0] == [
        "Oslo Bergen flights were cancelled .",
        "Marla Quint won the Nordic Cup .",
        "Bergen signed Quint on Monday .",
    ]
    assert all(it.span1 == (it.target_index, it.target_index + 1) and it.span2 is None for it in items)
    assert all(it.text.split(" ")[it.span1[0]] == it.span1_text for it in items)


def test_iob1_tags_become_iob2_and_a_b_tag_between_same_type_entities_starts_a_new_one() -> None:
    items = read_conll_tags(NER_TEST, "conll2003-ner")
    first = [(it.span1_text, it.labels[0]) for it in items if it.sentence_index == 0]
    # IOB1 "Oslo I-LOC / Bergen B-LOC": two adjacent LOC entities; IOB2 starts each with B-LOC.
    assert first[:3] == [("Oslo", "B-LOC"), ("Bergen", "B-LOC"), ("flights", "O")]
    second = [(it.span1_text, it.labels[0]) for it in items if it.sentence_index == 1]
    assert second == [
        ("Marla", "B-PER"),
        ("Quint", "I-PER"),
        ("won", "O"),
        ("the", "O"),
        ("Nordic", "B-MISC"),
        ("Cup", "I-MISC"),
        (".", "O"),
    ]
    # A converted tag keeps the file's tag in the target info; an unchanged one has none.
    assert [json.loads(it.target_info) for it in items if it.target_info is not None] == [
        {"tag": "I-LOC"},
        {"tag": "I-PER"},
        {"tag": "I-MISC"},
        {"tag": "I-ORG"},
        {"tag": "I-PER"},
    ]
    assert converted_tags(items) == 5
    train = read_conll_tags(NER_TRAIN, "conll2003-ner")
    berlin_paris = [(it.span1_text, it.labels[0]) for it in train if it.text.startswith("Berlin Paris")]
    assert berlin_paris[:2] == [("Berlin", "B-LOC"), ("Paris", "B-LOC")]


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["I-PER", "I-PER", "B-PER", "I-PER", "O"], ["B-PER", "I-PER", "B-PER", "I-PER", "O"]),
        (["I-PER", "I-LOC", "O", "I-LOC"], ["B-PER", "B-LOC", "O", "B-LOC"]),
        (["B-NP", "I-NP", "O", "B-VP", "I-VP"], ["B-NP", "I-NP", "O", "B-VP", "I-VP"]),  # IOB2 stays
        (["O", "I-NP", "B-NP", "I-NP"], ["O", "B-NP", "B-NP", "I-NP"]),
    ],
)
def test_iob2_conversion(tags: list[str], expected: list[str]) -> None:
    assert iob2(tags) == expected
    assert iob2(expected) == expected  # converting IOB2 again changes nothing


def test_conll2000_layout_is_already_iob2_and_read_as_it_is() -> None:
    items = read_conll_tags(CHUNK_TRAIN, "conll2000-chunk")
    assert [(it.span1_text, it.labels[0]) for it in items] == [
        (row[0], row[2]) for row in token_lines(CHUNK_TRAIN)
    ]
    assert converted_tags(items) == 0
    assert len({it.sentence_index for it in items}) == 10


def test_compressed_input_reads_the_same_and_jiant_output_round_trips(tmp_path: Path) -> None:
    items = read_conll_tags(NER_TEST, "conll2003-ner")
    packed = tmp_path / "test.txt.gz"
    packed.write_bytes(gzip.compress(NER_TEST.read_bytes(), mtime=0))
    squeezed = tmp_path / "test.txt.bz2"
    squeezed.write_bytes(bz2.compress(NER_TEST.read_bytes()))
    assert read_conll_tags(packed, "conll2003-ner") == items == read_conll_tags(squeezed, "conll2003-ner")
    write_jiant(items, tmp_path / "test.jsonl")
    assert read_jiant(tmp_path / "test.jsonl") == items


def test_the_format_table_reads_each_layout() -> None:
    assert INPUT_FORMATS["conll2003-ner"] == ("conll", "conll2003-ner")
    assert read_edge_probing(NER_TEST, "conll2003-ner") == read_conll_tags(NER_TEST, "conll2003-ner")
    assert read_edge_probing(CHUNK_TRAIN, "conll2000-chunk") == read_conll_tags(
        CHUNK_TRAIN, "conll2000-chunk"
    )
    with pytest.raises(UserError, match="unknown input format 'conll'"):
        read_edge_probing(NER_TEST, "conll")


@pytest.mark.parametrize(
    ("layout", "line", "message"),
    [
        (
            "conll2003-ner",
            "Oslo NNP I-LOC",
            r"expected 4 whitespace-separated fields \(WORD POS CHUNK NER\), found 3",
        ),
        ("conll2000-chunk", "Oslo NNP B-NP I-LOC", r"expected 3 whitespace-separated fields .* found 4"),
        ("conll2003-ner", "Oslo NNP B-NP LOC", "NER tag 'LOC' is not O, B-TYPE or I-TYPE"),
        ("conll2000-chunk", "Oslo NNP E-NP", "CHUNK tag 'E-NP' is not O, B-TYPE or I-TYPE"),
    ],
)
def test_malformed_lines_raise_data_errors_with_offsets(
    tmp_path: Path, layout: str, line: str, message: str
) -> None:
    good = "Prices NNS B-NP B-MISC\n" if layout == "conll2003-ner" else "Prices NNS B-NP\n"
    path = tmp_path / "bad.txt"
    path.write_text(f"{good}{line}\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        read_conll_tags(path, layout)
    assert info.value.path == str(path)
    assert info.value.offset == len(good)


def test_unknown_layout_is_a_user_error() -> None:
    with pytest.raises(UserError, match="expected one of conll2003-ner, conll2000-chunk"):
        read_conll_tags(NER_TEST, "conll2002-ner")
