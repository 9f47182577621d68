"""The shared sentencizer does not cut after an abbreviation's full stop before a number or a
lower-case word (issue 32: "No. 1" cut WikiEnt sentences, and links across the cut were lost)."""

from __future__ import annotations

from entbench.readers.tokenizer import english_pipeline


def sentences(text: str) -> list[str]:
    return [s.text for s in english_pipeline()(text).sents]


def test_abbreviations_before_numbers_do_not_end_a_sentence() -> None:
    # ASCII (gensim 2016 head): "… the shifted values of 23456789- were … (dating to No. 2) …"
    assert sentences("He was ranked No. 1 in the world. Then he left.") == [
        "He was ranked No. 1 in the world.",
        "Then he left.",
    ]
    assert sentences("Built ca. 1900 and rebuilt c. 1950, see Vol. 2, pp. 3-4 and Fig. 4 there.") == [
        "Built ca. 1900 and rebuilt c. 1950, see Vol. 2, pp. 3-4 and Fig. 4 there."
    ]
    assert sentences("It is no. 5 on the list, cf. the other one.") == [
        "It is no. 5 on the list, cf. the other one."
    ]


def test_other_full_stops_still_end_sentences() -> None:
    assert sentences("Louis XIV. He was king.") == ["Louis XIV.", "He was king."]
    assert sentences("The answer was No. The end came.") == ["The answer was No.", "The end came."]
    assert sentences("Gold was found in 1850. 200 people came.") == [
        "Gold was found in 1850.",
        "200 people came.",
    ]
