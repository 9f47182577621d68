"""The shared sentencizer (`readers.tokenizer`): which spaCy pipeline splits a wiki language's
sentences (the language's own rules where spaCy has them without extra packages, the
multi-language pipeline otherwise), and, in English, no cut after an abbreviation's full stop before
a number or a lower-case word (issue 32: "No. 1" cut WikiEnt sentences, and links across the cut
were lost)."""

from __future__ import annotations

from entbench.readers.tokenizer import english_pipeline, sentence_pipeline, sentence_starts, spacy_language


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


def test_languages_map_to_spacy_pipelines_by_code_alone() -> None:
    assert [spacy_language(code) for code in ("en", "de", "nn", "zh-hant", "EN")] == [
        "en",
        "de",
        "nn",
        "zh",
        "en",
    ]
    # spaCy's Japanese, Korean, Vietnamese and Thai need packages entbench does not install
    assert [spacy_language(code) for code in ("ja", "ko", "vi", "th")] == ["xx"] * 4
    assert [spacy_language(code) for code in ("simple", "zz", "")] == ["xx"] * 3
    assert english_pipeline() is sentence_pipeline("en")


def test_english_sentences_keep_abbreviations_whole() -> None:
    # real text: enwiki's Anarchism (2017), as fixtures/hansel-en renders it
    text = (
        "In 1872, the conflict climaxed with a final split between the two groups at the Hague "
        "Congress. In response, the federalist sections formed their own International at the "
        "St. Imier Congress, adopting a revolutionary anarchist program."
    )
    assert sentence_starts(text, "en") == [0, text.index("In response")]
