"""The release's record fields and the Recycled lines on the real enwiki *Berlin* article.

Answers are rendered from real statements of the fixture dump: Q64's own earliest written
records (P1249: 1237, 1244) and twin town (P190: London), and the multi-word "United Kingdom"
(Scotland's country, Q22 P17), which the Berlin text also mentions.
"""

from __future__ import annotations

from typing import Any

import pytest

from entbench.builders.wikireading.answers import consolidate
from entbench.builders.wikireading.recycled import document_field, expected_line, in_line
from entbench.builders.wikireading.release import (
    RELEASE_FIELDS,
    TokenizedDocument,
    Tokenizer,
    Vocabulary,
    VocabularyCounts,
    release_record,
    text_record,
)
from tests.builders.wikireading.support import (
    REAL_TYPE_VOCAB,
    berlin_text,
    claims_by_key,
    labels_of,
    real_scan_dirs,
)


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    dirs = real_scan_dirs()
    claims = claims_by_key(dirs["wikidata"])
    labels = labels_of(dirs["wikidata"])
    return {
        "text": berlin_text(dirs["wikipedia"]),
        "records": consolidate(claims[("Q64", "P1249")], labels).answers,
        "twins": consolidate(claims[("Q64", "P190")], labels).answers,
        "uk": consolidate(claims[("Q22", "P17")], labels).answers,
    }


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.fixture(scope="module")
def berlin(real: dict[str, Any], tokenizer: Tokenizer) -> TokenizedDocument:
    return tokenizer.document(real["text"])


def record(
    real: dict[str, Any], tokenizer: Tokenizer, doc: TokenizedDocument, answers: Any
) -> dict[str, Any]:
    text = text_record("Q64-P1249", doc, "time of earliest written record", list(answers), tokenizer)
    counts = VocabularyCounts.empty()
    counts.add(text, new_document=True)
    return release_record(
        text, Vocabulary(counts.document), Vocabulary(counts.answer), Vocabulary(counts.raw_answer)
    )


def test_exactly_the_release_fields(
    real: dict[str, Any], tokenizer: Tokenizer, berlin: TokenizedDocument
) -> None:
    rec = record(real, tokenizer, berlin, real["records"])
    assert tuple(rec) == RELEASE_FIELDS
    assert (
        tuple(
            sorted(
                [
                    "answer_breaks",
                    "answer_ids",
                    "answer_location",
                    "answer_sequence",
                    "answer_string_sequence",
                    "break_levels",
                    "document_sequence",
                    "full_match_answer_location",
                    "key",
                    "paragraph_breaks",
                    "question_sequence",
                    "question_string_sequence",
                    "raw_answer_ids",
                    "raw_answers",
                    "sentence_breaks",
                    "string_sequence",
                    "type_sequence",
                ]
            )
        )
        == RELEASE_FIELDS
    )
    n = len(rec["string_sequence"])
    assert len(rec["break_levels"]) == len(rec["document_sequence"]) == len(rec["type_sequence"]) == n


def test_tokens_and_breaks_follow_the_real_text(real: dict[str, Any], berlin: TokenizedDocument) -> None:
    text = real["text"]
    position = 0
    for token in berlin.tokens:  # every word, in order, nothing invented
        position = text.index(token, position) + len(token)
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    assert berlin.break_levels[0] == 4
    assert len(berlin.paragraph_breaks) == len(paragraphs)
    assert berlin.sentence_breaks and all(berlin.break_levels[i] == 3 for i in berlin.sentence_breaks)
    assert set(berlin.break_levels) <= {0, 1, 2, 3, 4}
    # "Berlin (/bɜːrˈlɪn/ bur-LIN, German pronunciation: …) is the capital …" (the pronunciation
    # templates IPAc-en, respell, IPA-de show their words), "the European Union's".
    assert berlin.tokens[:6] == ("Berlin", "(", "/bɜːrˈlɪn/", "bur", "-", "LIN")
    assert berlin.break_levels[:6] == (4, 1, 0, 1, 0, 0)
    possessive = berlin.tokens.index("'s")
    assert berlin.tokens[possessive - 1] == "Union" and berlin.break_levels[possessive] == 0


def test_answer_locations_on_berlin(
    real: dict[str, Any], tokenizer: Tokenizer, berlin: TokenizedDocument
) -> None:
    assert real["records"] == ("1237", "1244")
    rec = record(real, tokenizer, berlin, real["records"])
    words = rec["string_sequence"]
    assert rec["raw_answers"] == ["1237", "1244"]
    assert rec["answer_string_sequence"] == ["1237", "1244"]
    assert rec["answer_breaks"] == [1]
    expected = [i for i, w in enumerate(words) if w in ("1237", "1244")]
    assert len(expected) == real["text"].count("1237") + real["text"].count("1244") == 3
    assert rec["answer_location"] == expected
    assert rec["full_match_answer_location"] == expected  # one-word answers: the same indices


def test_multi_word_answer_full_and_partial_matches(
    real: dict[str, Any], tokenizer: Tokenizer, berlin: TokenizedDocument
) -> None:
    assert real["uk"] == ("United Kingdom",)
    rec = record(real, tokenizer, berlin, real["uk"])
    words = rec["string_sequence"]
    assert rec["answer_string_sequence"] == ["United", "Kingdom"]
    starts = [i for i in range(len(words) - 1) if words[i : i + 2] == ["United", "Kingdom"]]
    assert len(starts) == real["text"].count("United Kingdom") == 3
    assert rec["full_match_answer_location"] == sorted({j for i in starts for j in (i, i + 1)})
    # Any one token: also "United" of "United States" and every other "Kingdom".
    assert set(rec["full_match_answer_location"]) < set(rec["answer_location"])
    assert all(words[i] in ("United", "Kingdom") for i in rec["answer_location"])
    assert rec["answer_location"] == [i for i, w in enumerate(words) if w in ("United", "Kingdom")]


def test_vocabulary_ids_and_released_layout(
    real: dict[str, Any], tokenizer: Tokenizer, berlin: TokenizedDocument
) -> None:
    text = text_record("Q64-P190", berlin, "twinned administrative body", list(real["twins"]), tokenizer)
    counts = VocabularyCounts.empty()
    counts.add(text, new_document=True)
    document_vocab = Vocabulary(counts.document)
    rec = release_record(text, document_vocab, Vocabulary(counts.answer), Vocabulary(counts.raw_answer))
    lines = document_vocab.lines()
    token_of = {int(line.split("\t")[0]): line.split("\t")[1] for line in lines[2:]}
    assert [token_of[i] for i in rec["document_sequence"]] == rec["string_sequence"]
    assert token_of[rec["answer_sequence"][0]] == "London"
    # Question words map through the document vocabulary; words it lacks are <UNK> (2).
    assert rec["question_sequence"] == [
        document_vocab.ids[w] if w in counts.document else 2 for w in rec["question_string_sequence"]
    ]
    assert document_vocab.id("not-a-word-of-Berlin") == 2
    assert rec["raw_answer_ids"] == [4] and rec["answer_ids"] == [4]
    assert set(rec["type_sequence"]) == {3}  # <NONE>: no tagger without a model
    # The layout of the real release's vocabularies: header lines, then the four special ids.
    real_lines = REAL_TYPE_VOCAB.read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[:2] for line in lines[:6]] == [line.split("\t")[:2] for line in real_lines[:6]]
    assert lines[1:6] == real_lines[1:6]
    assert lines[6].split("\t")[0] == real_lines[6].split("\t")[0] == "4"
    assert int(lines[0].split("\t")[2]) == sum(counts.document.values())
    counts_in_file = [int(line.split("\t")[2]) for line in lines[6:]]
    assert counts_in_file == sorted(counts_in_file, reverse=True)


def test_recycled_lines_on_berlin(real: dict[str, Any], tokenizer: Tokenizer) -> None:
    line = in_line(
        ["time of earliest written record", "twinned administrative body"], real["text"], tokenizer
    )
    names, document = line.split("\t")
    assert names == "time_of_earliest_written_record twinned_administrative_body"
    assert "\n" not in document and "\t" not in document
    paragraphs = [p for p in real["text"].split("\n\n") if p.strip()]
    assert document.count(" <EOP> ") == len(paragraphs) - 1
    assert " <EOS> " in document
    # The loader's own normalisation gives back the words of the text.
    restored = document.replace(" <EOL> ", " ").replace(" <EOS> ", " ").replace(" <EOP> ", " ")
    assert restored.split() == real["text"].split()
    assert document_field("One. Two.\n\nThree", tokenizer) == "One. <EOS> Two. <EOP> Three"
    assert expected_line(
        [("time of earliest written record", real["records"]), ("country", ["United Kingdom"])]
    ) == ("time_of_earliest_written_record=1237 time_of_earliest_written_record=1244 country=United_Kingdom")
