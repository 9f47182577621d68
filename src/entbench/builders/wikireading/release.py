"""The released WikiReading JSON-lines records (google-research-datasets/wiki-reading README).

Field set (spec §6): `answer_breaks, answer_ids, answer_location, answer_sequence,
answer_string_sequence, break_levels, document_sequence, full_match_answer_location, key,
paragraph_breaks, question_sequence, question_string_sequence, raw_answer_ids, raw_answers,
sentence_breaks, string_sequence, type_sequence`. The README's definitions, and what entbench
makes of them:

* `string_sequence`: the document's words — spaCy's blank English tokenizer (no model download),
  whitespace tokens dropped; sentences from spaCy's rule-based `sentencizer`; paragraphs are the
  "\\n\\n"-separated blocks of the Wikipedia text.
* `break_levels`: "one integer [0,4] ... for each word": 0 no separation from the previous word,
  1 space, 2 line break, 3 sentence break, 4 paragraph break. The first word of the document
  opens a paragraph, so it gets 4.
* `sentence_breaks` / `paragraph_breaks`: the word indices whose break level is 3 / 4 (so a
  sentence starting a paragraph is a paragraph break only).
* `answer_location`: "word indices into the document where any one token in the answer was
  found"; `full_match_answer_location`: "where all contiguous tokens in answer were found" — every
  index covered by a full match of one answer value's tokens. Both sorted, without repeats.
* `answer_string_sequence`: the tokens of all answer values, concatenated; `answer_breaks` the
  index in it where each value after the first starts; `raw_answers` the values as strings.
* `*_sequence` / `*_ids`: ids in `document.vocab` (document, question and answer words),
  `answer.vocab` (answer words), `raw_answer.vocab` (whole values); unknown -> `<UNK>`.
* `type_sequence`: POS/type tags need a trained model, which entbench does not download: every
  word gets `<NONE>`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from entbench.readers.tokenizer import english_pipeline

#: Exactly the release's keys (README "Features", plus `key`).
RELEASE_FIELDS: tuple[str, ...] = (
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
)

#: The first ids of every released vocabulary (`answer.vocab`, `type.vocab`: "0 <S>", "1 </S>",
#: "2 <UNK>", "3 <NONE>", after the "!!!TOTAL" and "!!!FLAGS" header lines).
SPECIAL_TOKENS: tuple[str, ...] = ("<S>", "</S>", "<UNK>", "<NONE>")
UNK_ID = 2
NONE_ID = 3

NO_BREAK, SPACE, LINE_BREAK, SENTENCE_BREAK, PARAGRAPH_BREAK = range(5)


@dataclass(frozen=True)
class TokenizedDocument:
    """A document's words and the break level before each."""

    tokens: tuple[str, ...]
    break_levels: tuple[int, ...]

    @property
    def sentence_breaks(self) -> list[int]:
        """Word indices with break level 3."""
        return [i for i, b in enumerate(self.break_levels) if b == SENTENCE_BREAK]

    @property
    def paragraph_breaks(self) -> list[int]:
        """Word indices with break level 4."""
        return [i for i, b in enumerate(self.break_levels) if b == PARAGRAPH_BREAK]


class Tokenizer:
    """Words and break levels with the shared English pipeline (`readers.tokenizer`)."""

    def __init__(self) -> None:
        self._nlp = english_pipeline()
        # Questions are property labels and answers often recur (years, countries): each distinct
        # string is tokenized once (spaCy's tokenizer gives the same words for the same text).
        self._words = functools.lru_cache(maxsize=1 << 16)(self._tokenize_words)

    def words(self, text: str) -> list[str]:
        """The words of a short string (question or answer value)."""
        return list(self._words(text))

    def _tokenize_words(self, text: str) -> tuple[str, ...]:
        return tuple(t.text for t in self._nlp.tokenizer(text) if not t.is_space)

    def sentences(self, paragraph: str) -> list[tuple[int, int]]:
        """(start, end) character spans of the sentencizer's sentences of one paragraph."""
        doc = self._nlp(paragraph)
        return [(s.start_char, s.end_char) for s in doc.sents]

    def document(self, text: str) -> TokenizedDocument:
        """Words and break levels of a "\\n\\n"-paragraphed text."""
        tokens: list[str] = []
        levels: list[int] = []
        for paragraph in text.split("\n\n"):
            if not paragraph.strip():
                continue
            first = True
            prev_end = 0
            pending_sentence = False
            for token in self._nlp(paragraph):
                if token.is_space:
                    pending_sentence = pending_sentence or bool(token.is_sent_start)
                    continue
                gap = paragraph[prev_end : token.idx]
                if first:
                    level = PARAGRAPH_BREAK
                elif token.is_sent_start or pending_sentence:
                    level = SENTENCE_BREAK
                elif "\n" in gap:
                    level = LINE_BREAK
                elif gap:
                    level = SPACE
                else:
                    level = NO_BREAK
                tokens.append(token.text)
                levels.append(level)
                first = False
                pending_sentence = False
                prev_end = token.idx + len(token.text)
        return TokenizedDocument(tuple(tokens), tuple(levels))


def answer_location(document: Sequence[str], answer_tokens: Iterable[str]) -> list[int]:
    """Indices of document words equal to any answer token."""
    wanted = set(answer_tokens)
    return [i for i, token in enumerate(document) if token in wanted]


def full_match_answer_location(document: Sequence[str], answers: Iterable[Sequence[str]]) -> list[int]:
    """Every index covered by a contiguous match of all tokens of one answer value."""
    covered: set[int] = set()
    n = len(document)
    for value in answers:
        m = len(value)
        if m == 0:
            continue
        first = value[0]
        for i in range(n - m + 1):
            if document[i] == first and tuple(document[i : i + m]) == tuple(value):
                covered.update(range(i, i + m))
    return sorted(covered)


class Vocabulary:
    """A released-style vocabulary: the four special ids, then tokens by count (ties by text)."""

    def __init__(self, counts: Mapping[str, int], max_size: int = 0) -> None:
        ranked = sorted(
            ((t, c) for t, c in counts.items() if t not in SPECIAL_TOKENS), key=lambda tc: (-tc[1], tc[0])
        )
        if max_size > 0:
            ranked = ranked[:max_size]
        self.entries: list[tuple[str, int]] = [(t, 0) for t in SPECIAL_TOKENS] + ranked
        self.ids = {t: i for i, (t, _) in enumerate(self.entries)}

    def id(self, token: str) -> int:
        """The token's id, or `<UNK>`'s."""
        return self.ids.get(token, UNK_ID)

    def ids_of(self, tokens: Iterable[str]) -> list[int]:
        """Each token's id, or `<UNK>`'s: `id` over a whole sequence, without a Python call per
        token (a release record maps its whole document, ~1,000 tokens, and each document again
        for every question on it)."""
        get = self.ids.get
        return [get(token, UNK_ID) for token in tokens]

    def lines(self) -> list[str]:
        """The file's lines: `0\\t!!!TOTAL\\tN`, `0\\t!!!FLAGS\\t0`, then `id\\ttoken\\tcount`."""
        total = sum(c for _, c in self.entries)
        out = [f"0\t!!!TOTAL\t{total}", "0\t!!!FLAGS\t0"]
        # A raw answer may hold a tab or a newline; the line format cannot, so they show as spaces.
        out += [f"{i}\t{' '.join(t.split())}\t{c}" for i, (t, c) in enumerate(self.entries)]
        return out


@dataclass(frozen=True)
class TextRecord:
    """The vocabulary-free part of one release record (token strings, breaks, locations)."""

    key: str
    document: TokenizedDocument
    question: tuple[str, ...]
    raw_answers: tuple[str, ...]
    answer_tokens: tuple[tuple[str, ...], ...]  # per answer value

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form, to spill between the tokenizing and the id-mapping passes."""
        return {
            "key": self.key,
            "tokens": list(self.document.tokens),
            "break_levels": list(self.document.break_levels),
            "question": list(self.question),
            "raw_answers": list(self.raw_answers),
            "answer_tokens": [list(a) for a in self.answer_tokens],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TextRecord:
        """Inverse of `to_json`."""
        return cls(
            key=str(data["key"]),
            document=TokenizedDocument(tuple(data["tokens"]), tuple(data["break_levels"])),
            question=tuple(data["question"]),
            raw_answers=tuple(data["raw_answers"]),
            answer_tokens=tuple(tuple(a) for a in data["answer_tokens"]),
        )


def text_record(
    key: str, document: TokenizedDocument, question: str, answers: Sequence[str], tokenizer: Tokenizer
) -> TextRecord:
    """Tokenize the question and answers of one instance whose document is already tokenized."""
    return TextRecord(
        key=key,
        document=document,
        question=tuple(tokenizer.words(question)),
        raw_answers=tuple(answers),
        answer_tokens=tuple(tuple(tokenizer.words(a)) for a in answers),
    )


@dataclass
class VocabularyCounts:
    """Token counts gathered on the train split (each document counted once)."""

    document: Counter[str]
    answer: Counter[str]
    raw_answer: Counter[str]

    @classmethod
    def empty(cls) -> VocabularyCounts:
        """No counts yet."""
        return cls(Counter(), Counter(), Counter())

    def add(self, record: TextRecord, new_document: bool) -> None:
        """Count one train instance (its document only if not counted before)."""
        if new_document:
            self.document.update(record.document.tokens)
        for tokens in record.answer_tokens:
            self.answer.update(tokens)
        self.raw_answer.update(record.raw_answers)


def release_record(
    record: TextRecord, document_vocab: Vocabulary, answer_vocab: Vocabulary, raw_answer_vocab: Vocabulary
) -> dict[str, Any]:
    """The release's JSON object for one instance (keys in sorted order)."""
    answer_string_sequence = [t for tokens in record.answer_tokens for t in tokens]
    breaks: list[int] = []
    position = 0
    for i, tokens in enumerate(record.answer_tokens):
        if i:
            breaks.append(position)
        position += len(tokens)
    doc = _document_fields(record.document, document_vocab)
    out = {
        "answer_breaks": breaks,
        "answer_ids": answer_vocab.ids_of(answer_string_sequence),
        "answer_location": doc.answer_location(answer_string_sequence),
        "answer_sequence": document_vocab.ids_of(answer_string_sequence),
        "answer_string_sequence": answer_string_sequence,
        "break_levels": list(doc.break_levels),
        "document_sequence": list(doc.document_sequence),
        "full_match_answer_location": doc.full_match_answer_location(record.answer_tokens),
        "key": record.key,
        "paragraph_breaks": list(doc.paragraph_breaks),
        "question_sequence": document_vocab.ids_of(record.question),
        "question_string_sequence": list(record.question),
        "raw_answer_ids": raw_answer_vocab.ids_of(record.raw_answers),
        "raw_answers": list(record.raw_answers),
        "sentence_breaks": list(doc.sentence_breaks),
        "string_sequence": list(doc.tokens),
        "type_sequence": [NONE_ID] * len(doc.tokens),
    }
    assert tuple(out) == RELEASE_FIELDS
    return out


class _DocumentFields:
    """What a release record takes from its document alone, computed once per document (a
    document has ~1,000 words and a record for each of its questions, which come one after the
    other), and where each word occurs, so that locating an answer reads only its words' places."""

    def __init__(self, document: TokenizedDocument, document_vocab: Vocabulary) -> None:
        self.tokens = document.tokens
        self.break_levels = document.break_levels
        self.document_sequence = document_vocab.ids_of(document.tokens)
        self.paragraph_breaks = document.paragraph_breaks
        self.sentence_breaks = document.sentence_breaks
        self.places: dict[str, list[int]] = {}
        for i, token in enumerate(document.tokens):
            self.places.setdefault(token, []).append(i)

    def answer_location(self, answer_tokens: Iterable[str]) -> list[int]:
        """`answer_location(tokens, answer_tokens)`: the places of every answer word, in order."""
        return sorted(i for token in set(answer_tokens) for i in self.places.get(token, ()))

    def full_match_answer_location(self, answers: Iterable[Sequence[str]]) -> list[int]:
        """`full_match_answer_location(tokens, answers)`, trying only the places of each value's
        first word."""
        covered: set[int] = set()
        n = len(self.tokens)
        for value in answers:
            m = len(value)
            if m == 0:
                continue
            for i in self.places.get(value[0], ()):
                if i <= n - m and tuple(self.tokens[i : i + m]) == tuple(value):
                    covered.update(range(i, i + m))
        return sorted(covered)


@functools.lru_cache(maxsize=1)
def _document_fields(document: TokenizedDocument, document_vocab: Vocabulary) -> _DocumentFields:
    """The last document's fields again for the next record on it (equal documents: one cached)."""
    return _DocumentFields(document, document_vocab)
