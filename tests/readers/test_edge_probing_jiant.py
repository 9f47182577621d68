"""jiant edge-probing JSON lines: reading, writing back, `.gz` input, and loud failures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from entbench.errors import DataError
from entbench.readers.edge_probing.items import jiant_lines, read_conllu, read_jiant, write_jiant

EWT_DEV = Path(__file__).resolve().parents[2] / "fixtures" / "ud-ewt" / "v2.2" / "en_ewt-ud-dev.conllu.gz"


def test_real_items_round_trip_through_jiant_json(tmp_path: Path) -> None:
    items = read_conllu(EWT_DEV, "dep-cls")
    path = tmp_path / "dev.jsonl"
    lines = write_jiant(items, path)
    assert lines == len({it.sentence_index for it in items})
    first = json.loads(path.read_text(encoding="utf-8").split("\n")[0])
    assert set(first) == {"text", "targets", "info"}
    assert first["targets"][0] == {"span1": [0, 1], "span2": [2, 3], "label": "case"}  # From -> AP
    back = read_jiant(path)
    # Sentence numbering is per file: a sentence without targets (a one-word root) has no line.
    renumbered = {s: i for i, s in enumerate(sorted({it.sentence_index for it in items}))}
    assert back == [it._replace(sentence_index=renumbered[it.sentence_index]) for it in items]


def test_gzipped_jiant_input_reads_the_same(tmp_path: Path) -> None:
    items = read_conllu(EWT_DEV, "pos")[:500]
    plain = tmp_path / "a.jsonl"
    write_jiant(items, plain)
    packed = tmp_path / "a.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    assert read_jiant(packed) == read_jiant(plain)


def test_span_texts_labels_and_info_as_jiant_defines_them(tmp_path: Path) -> None:
    record = {
        "text": "The  cat sat on the mat",  # two spaces: an empty token, as text.split(" ") gives
        "targets": [
            {"span1": [3, 6], "label": "PP", "info": {"head": 3}},
            {"span1": [0, 3], "span2": [3, 4], "label": ["volition", "awareness"]},
        ],
        "info": {"doc": "x"},
    }
    path = tmp_path / "spr.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    first, second = read_jiant(path)
    assert (first.span1_text, first.labels, first.label_is_list) == ("sat on the", ("PP",), False)
    assert (second.span1_text, second.span2_text) == ("The  cat", "sat")
    assert second.labels == ("volition", "awareness") and second.label_is_list
    assert json.loads(next(jiant_lines([first, second]))) == record


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("# sent_id = x", "not a JSON object .CoNLL-U input needs --input-format"),
        ('{"targets": []}', 'expected an object with a string "text"'),
        ('{"text": "a b", "targets": [{"span1": [1, 3], "label": "X"}]}', r"\[1, 3\] is not a nonempty span"),
        ('{"text": "a b", "targets": [{"span1": [1, 1], "label": "X"}]}', r"\[1, 1\] is not a nonempty span"),
        ('{"text": "a b", "targets": [{"span1": [0, 1]}]}', '"label" must be a string or a list'),
    ],
)
def test_malformed_records_raise_data_errors_with_offsets(tmp_path: Path, line: str, message: str) -> None:
    good = '{"text": "a b", "targets": [{"span1": [0, 1], "label": "X"}]}\n'
    path = tmp_path / "bad.jsonl"
    path.write_text(good + line + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        read_jiant(path)
    assert (info.value.path, info.value.offset) == (str(path), len(good))
