"""CAP: coreference arc prediction on PreCo (EntEval §3.2; spec §8).

"We only keep two groups of coreference arcs from smaller context. One includes mentions that are
in the same sentence ("same") ... The other includes mentions that are in consecutive sentences
("next") ... We filter out instances in which both mentions are pronouns. All non-coreferent mention
pairs are considered to be negative samples. ... for each instance we compute cosine similarity of
mentions by averaging GloVe word vectors. We group the instances into bins by cosine similarity, and
randomly select the same number of positive and negative instances from each bin." (§3.2)

Source: PreCo JSON lines (Chen et al. 2018), `{"id", "sentences": [[token, ...], ...],
"mention_clusters": [[[sentence, start, end], ...], ...]}` with token offsets, end exclusive;
singletons are clusters of one (PreCo annotates mentions outside chains, which is why it was chosen).

A pair's context: its sentence ("same"), or its two sentences joined ("next", the broader context
the paper means to test), with both mentions' offsets in it. Pairs whose mentions have no word
vector are left out (counted): they cannot be binned. Bins are `bins` equal-width intervals of
[-1, 1]; per bin, min(positives, negatives) of each, chosen in a seeded order, are kept as
(positive, negative) couples; `max_per_split` keeps the seeded first couples, so the cap keeps the
balance in every bin.

Written as `CAP/same/{train,dev,test}.txt` and `CAP/next/...`, blocks that `CAPEval.loadFile` reads:
`sentence<TAB>start<TAB>end` for each mention, the label (1 coreferent, 0 not), an empty line
(also after the last block: the loader keeps a block when it reads the empty line).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.sampling import seeded_order
from entbench.builders.enteval.tokens import safe_words
from entbench.builders.enteval.tsv import tsv, words_field

KINDS = ("same", "next")
SPLITS = ("train", "dev", "test")
FILES = {(kind, split): f"CAP/{kind}/{split}.txt" for kind in KINDS for split in SPLITS}
#: English personal, possessive, reflexive, demonstrative and relative pronouns (case-insensitive).
PRONOUNS = frozenset(
    (
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "this",
        "that",
        "these",
        "those",
        "who",
        "whom",
        "whose",
        "which",
        "what",
        "one",
        "oneself",
    )
)

Span = tuple[int, int, int]  # (sentence, start, end)


@dataclass(frozen=True)
class PrecoDoc:
    """A PreCo document: tokenised sentences and mention clusters."""

    id: str
    sentences: tuple[tuple[str, ...], ...]
    clusters: tuple[tuple[Span, ...], ...]
    line: int


def parse_preco(lines: Iterable[str]) -> list[PrecoDoc]:
    """Documents of a PreCo JSON-lines file."""
    docs: list[PrecoDoc] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            sentences = tuple(tuple(str(t) for t in s) for s in record["sentences"])
            clusters = tuple(
                tuple((int(m[0]), int(m[1]), int(m[2])) for m in c) for c in record["mention_clusters"]
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise SourceError(number, f"not a PreCo record ({exc})") from exc
        for cluster in clusters:
            for s, b, e in cluster:
                if not (0 <= s < len(sentences) and 0 <= b < e <= len(sentences[s])):
                    raise SourceError(number, f"mention {[s, b, e]} is outside its sentence")
        docs.append(PrecoDoc(str(record.get("id", number)), sentences, clusters, number))
    return docs


@dataclass(frozen=True)
class MentionPair:
    """Two mentions, their context words, offsets in it, and whether they corefer."""

    kind: str
    doc: str
    first: Span
    second: Span
    label: int
    words: tuple[str, ...]
    first_span: tuple[int, int]
    second_span: tuple[int, int]

    def key(self) -> tuple[str, ...]:
        """A unique, content-only key (for seeded orders)."""
        return (self.kind, self.doc, *(str(x) for x in (*self.first, *self.second)))


@dataclass
class PairStats:
    """Counts of `make_pairs` (added to the stage's stats)."""

    both_pronouns: int = 0
    duplicate_spans: int = 0


class _Context:
    """A pair context's loader-safe words, shared by all its pairs, and where each token went."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.starts: list[int] = []
        words: list[str] = []
        for token in tokens:
            self.starts.append(len(words))
            words.extend(safe_words([token]))
        self.starts.append(len(words))
        self.words = tuple(words)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Token offsets [start, end) in the safe words (a token holding whitespace became several)."""
        return self.starts[start], self.starts[end]


def make_pairs(doc: PrecoDoc, stats: PairStats) -> list[MentionPair]:
    """Every "same" and "next" mention pair of a document, labelled, both-pronoun pairs left out."""
    cluster_of: dict[Span, int] = {}
    for index, cluster in enumerate(doc.clusters):
        for span in cluster:
            if span in cluster_of:
                stats.duplicate_spans += 1
                continue
            cluster_of[span] = index
    by_sentence: dict[int, list[Span]] = {}
    for span in sorted(cluster_of):
        by_sentence.setdefault(span[0], []).append(span)
    pairs: list[MentionPair] = []
    contexts: dict[tuple[str, int], _Context] = {}

    def text(span: Span) -> str:
        return " ".join(doc.sentences[span[0]][span[1] : span[2]]).lower()

    def add(kind: str, a: Span, b: Span) -> None:
        if text(a) in PRONOUNS and text(b) in PRONOUNS:
            stats.both_pronouns += 1
            return
        key = (kind, a[0])
        if key not in contexts:
            tokens = doc.sentences[a[0]] if kind == "same" else (*doc.sentences[a[0]], *doc.sentences[b[0]])
            contexts[key] = _Context(tokens)
        context = contexts[key]
        offset = 0 if kind == "same" else len(doc.sentences[a[0]])
        label = int(cluster_of[a] == cluster_of[b])
        pairs.append(
            MentionPair(
                kind,
                doc.id,
                a,
                b,
                label,
                context.words,
                context.span(a[1], a[2]),
                context.span(offset + b[1], offset + b[2]),
            )
        )

    for s, spans in sorted(by_sentence.items()):
        for i, a in enumerate(spans):
            for b in spans[i + 1 :]:
                add("same", a, b)
        for a in spans:
            for b in by_sentence.get(s + 1, []):
                add("next", a, b)
    return pairs


def mention_words(pair: MentionPair) -> tuple[list[str], list[str]]:
    """The two mentions' words."""
    w = pair.words
    return list(w[pair.first_span[0] : pair.first_span[1]]), list(
        w[pair.second_span[0] : pair.second_span[1]]
    )


def bin_of(cosine: float, bins: int) -> int:
    """The equal-width bin of a cosine in [-1, 1] (1 falls in the last bin)."""
    return min(bins - 1, max(0, int(np.floor((cosine + 1.0) / 2.0 * bins))))


@dataclass
class Balanced:
    """Kept pairs (seeded order) and the count of pairs per bin before balancing."""

    pairs: list[MentionPair] = field(default_factory=list)
    positives_per_bin: dict[int, int] = field(default_factory=dict)
    negatives_per_bin: dict[int, int] = field(default_factory=dict)


def balance(pairs: Sequence[tuple[MentionPair, float]], bins: int, seed: int, max_pairs: int = 0) -> Balanced:
    """Equal positives and negatives per cosine bin, seeded; at most `max_pairs` (0 = no cap)."""
    result = Balanced()
    grouped: dict[tuple[int, int], list[MentionPair]] = {}
    for pair, cosine in pairs:
        grouped.setdefault((bin_of(cosine, bins), pair.label), []).append(pair)
    couples: list[tuple[MentionPair, MentionPair]] = []
    for b in range(bins):
        positives = seeded_order(grouped.get((b, 1), []), MentionPair.key, seed)
        negatives = seeded_order(grouped.get((b, 0), []), MentionPair.key, seed)
        result.positives_per_bin[b] = len(positives)
        result.negatives_per_bin[b] = len(negatives)
        couples.extend(zip(positives, negatives, strict=False))
    couples = seeded_order(couples, lambda c: c[0].key() + c[1].key(), seed)
    if max_pairs > 0:
        couples = couples[: max_pairs // 2]
    kept = [p for couple in couples for p in couple]
    result.pairs = seeded_order(kept, lambda p: ("order", *p.key()), seed)
    return result


def cap_block(pair: MentionPair, lowercase: bool) -> list[str]:
    """A pair's block: both mention lines, the label, the closing empty line."""
    words = [w.lower() for w in pair.words] if lowercase else list(pair.words)
    sentence = words_field(words)
    return [
        tsv(sentence, str(pair.first_span[0]), str(pair.first_span[1])),
        tsv(sentence, str(pair.second_span[0]), str(pair.second_span[1])),
        str(pair.label),
        "",
    ]


def cosine_of(pair: MentionPair, similarity: Callable[[list[str], list[str]], float | None]) -> float | None:
    """The pair's mention-name cosine (None when a mention has no vector)."""
    first, second = mention_words(pair)
    return similarity(first, second)
