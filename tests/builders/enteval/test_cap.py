"""CAP: PreCo pairs ("same"/"next"), the pronoun filter, binned balancing, loader blocks."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from entbench.builders.enteval import cap
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.vectors import average, cosine, parse_vectors
from tests.builders.enteval.loader_formats import read_cap

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "enteval"


def docs(split: str) -> list[cap.PrecoDoc]:
    return cap.parse_preco((FIXTURES / f"preco-{split}.jsonl").read_text(encoding="utf-8").splitlines())


def mention_text(pair: cap.MentionPair) -> tuple[str, str]:
    first, second = cap.mention_words(pair)
    return " ".join(first), " ".join(second)


def test_pairs_labels_and_pronoun_filter() -> None:
    stats = cap.PairStats()
    pairs = [p for d in docs("train") for p in cap.make_pairs(d, stats)]
    by_text = {(p.kind, *mention_text(p)): p.label for p in pairs}
    assert by_text[("next", "The old dog", "It")] == 1  # same cluster across consecutive sentences
    assert by_text[("next", "the cat", "The cat")] == 1
    assert by_text[("same", "The old dog", "the fire")] == 0  # non-coreferent: a negative
    assert by_text[("same", "The boy", "his")] == 1
    # "his"/"He" and "He"/"him" are both pronouns: filtered out, counted.
    assert ("next", "his", "He") not in by_text and ("same", "He", "him") not in by_text
    assert stats.both_pronouns == 3  # (He, him) in one sentence; (his, He), (his, him) across two
    # Only mentions of the same or of consecutive sentences are paired.
    for pair in pairs:
        assert pair.second[0] - pair.first[0] == (0 if pair.kind == "same" else 1)


def test_next_pairs_use_both_sentences_as_context() -> None:
    pair = next(p for d in docs("train") for p in cap.make_pairs(d, cap.PairStats()) if p.kind == "next")
    doc = docs("train")[0]
    assert list(pair.words) == [*doc.sentences[pair.first[0]], *doc.sentences[pair.second[0]]]
    assert pair.second_span[0] == len(doc.sentences[pair.first[0]]) + pair.second[1]


def test_preco_errors() -> None:
    good = '{"id": "a", "sentences": [["x", "y"]], "mention_clusters": [[[0, 0, 1]]]}'
    with pytest.raises(SourceError) as err:
        cap.parse_preco([good, '{"id": "b", "sentences": [["x"]], "mention_clusters": [[[0, 0, 2]]]}'])
    assert err.value.line == 2
    with pytest.raises(SourceError):
        cap.parse_preco(['{"id": "c", "sentences": [["x"]]}'])


def test_balance_equalises_every_bin_and_is_seeded() -> None:
    pairs = [
        p for d in docs("train") + docs("dev") + docs("test") for p in cap.make_pairs(d, cap.PairStats())
    ]
    vectors = parse_vectors((FIXTURES / "vectors.4d.txt").read_text(encoding="utf-8").splitlines())

    def similarity(a: list[str], b: list[str]) -> float | None:
        x, y = average(a, vectors), average(b, vectors)
        return None if x is None or y is None else cosine(x, y)

    scored = [(p, c) for p in pairs if (c := cap.cosine_of(p, similarity)) is not None]
    assert len(scored) == len(pairs)  # every fixture mention word has a vector
    for bins in (2, 4, 10):
        balanced = cap.balance(scored, bins, seed=1111)
        cosines = {p.key(): c for p, c in scored}
        kept = Counter((cap.bin_of(cosines[p.key()], bins), p.label) for p in balanced.pairs)
        for b in range(bins):
            assert (
                kept[(b, 1)]
                == kept[(b, 0)]
                == min(balanced.positives_per_bin[b], balanced.negatives_per_bin[b])
            )
        shuffled = list(scored)
        random.Random(5).shuffle(shuffled)
        assert cap.balance(shuffled, bins, seed=1111).pairs == balanced.pairs
    capped = cap.balance(scored, 2, seed=1111, max_pairs=4)
    assert len(capped.pairs) == 4 and sum(p.label for p in capped.pairs) == 2


def test_bin_edges() -> None:
    assert [cap.bin_of(c, 4) for c in (-1.0, -0.5, -0.01, 0.0, 0.49, 0.5, 1.0)] == [0, 1, 1, 2, 2, 3, 3]


def test_blocks_read_back_by_the_loader(tmp_path: Path) -> None:
    pairs = [p for d in docs("dev") for p in cap.make_pairs(d, cap.PairStats())][:5]
    path = tmp_path / "dev.txt"
    path.write_text("".join(line + "\n" for p in pairs for line in cap.cap_block(p, True)), encoding="utf-8")
    items = read_cap(path)
    assert len(items) == len(pairs)  # the last block is kept: it ends with an empty line too
    for item, pair in zip(items, pairs, strict=True):
        (words1, s1, e1), (words2, s2, e2), label = item
        assert words1 == words2 == [w.lower() for w in pair.words]
        first, second = cap.mention_words(pair)
        assert words1[s1:e1] == [w.lower() for w in first] and words2[s2:e2] == [w.lower() for w in second]
        assert label == pair.label
