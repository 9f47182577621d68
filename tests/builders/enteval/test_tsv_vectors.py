"""Loader-safe fields, and the vectors file reader with its deterministic averages and cosines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from entbench.builders.enteval.tsv import FieldError, check_field, clean, tsv
from entbench.builders.enteval.vectors import VectorsError, average, cosine, parse_vectors

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


@pytest.mark.parametrize(
    "value", ["", " a", "a ", "a  b", "a\tb", "a\nb", "a\x1cb", "a\u2028b", "a\x85b", "a\rb", "a\x0bb"]
)
def test_fields_that_would_not_survive_the_loaders_are_refused(value: str) -> None:
    with pytest.raises(FieldError):
        check_field(value)
    # Each of these breaks a line or a field in codecs.open(...) iteration or .split("\t").
    assert clean(value) == " ".join(value.split())


def test_a_line_reads_back_field_for_field_under_codecs_line_splitting() -> None:
    line = tsv("1", "the old dog", "Apple Inc.", "naïve – ok")
    assert line.splitlines() == [line]
    assert line.strip().split("\t") == ["1", "the old dog", "Apple Inc.", "naïve – ok"]


def test_vectors_file_words_with_spaces_and_selection() -> None:
    lines = ["the 0.5 0.25", ". . . 1.0 2.0", "dog 0.125 -0.5", "the 9 9"]
    vectors = parse_vectors(lines, {"the", ". . .", "cat"})
    assert set(vectors) == {"the", ". . ."}
    assert vectors["the"].tolist() == [0.5, 0.25]  # the first occurrence wins
    assert vectors[". . ."].tolist() == [1.0, 2.0]


def test_vectors_file_errors_name_the_line() -> None:
    with pytest.raises(VectorsError) as err:
        parse_vectors(["a 1 2", "b 1"])
    assert err.value.line == 2
    with pytest.raises(VectorsError) as err:
        parse_vectors(["a 1 2", "b 1 x"])
    assert err.value.line == 2


def test_averages_and_cosines_on_the_fixture_vectors() -> None:
    lines = (FIXTURES / "vectors.4d.txt").read_text(encoding="utf-8").splitlines()
    vectors = parse_vectors(lines)
    # Upper-case words fall back to their lower-case vector; words without one are skipped.
    mean = average(["The", "old", "dog", "zzz"], vectors)
    assert mean is not None
    assert mean.tolist() == [(0.125 + 0 + 1) / 3, (0.125 + 0.25 + 0.5) / 3, 0.0, 0.125 / 3]
    assert average(["zzz"], vectors) is None
    cat = vectors["cat"]
    dog = vectors["dog"]
    expected = float(np.dot(cat, dog) / (np.linalg.norm(cat) * np.linalg.norm(dog)))
    assert cosine(cat, dog) == pytest.approx(expected, abs=1e-15)
    assert cosine(cat, cat) == 1.0
    assert cosine(cat, np.zeros(4)) is None
