"""Which spaCy pipeline splits a wiki language's sentences (`readers.tokenizer`): the language's own
rules where spaCy has them without extra packages, the multi-language pipeline otherwise: the
packages spaCy would need for Japanese, Korean, Vietnamese and Thai never change a sentence."""

from __future__ import annotations

from entbench.readers.tokenizer import english_pipeline, sentence_pipeline, sentence_starts, spacy_language


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
