"""CAP task stage (EntEval §3.2; spec §8): `enteval_cap`, PreCo mention pairs balanced by binned
name similarity.

The vectors file (GloVe text format) is read for the words of the mentions only. Counts: pairs per
kind and label before balancing, `dropped_both_pronouns`, `dropped_no_vector`, and the pairs kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from msgspec import Meta

from entbench.builders.enteval import cap
from entbench.builders.enteval.stages.common import TaskOutput, TaskStage, parse
from entbench.builders.enteval.stages.sources import SourceLines, TaskParams
from entbench.builders.enteval.vectors import VectorsError, average, cosine, parse_vectors
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class CapParams(TaskParams):
    """`train`, `dev`, `test`: PreCo JSON-lines files; `vectors`: word vectors (GloVe text format);
    `bins`: cosine bins over [-1, 1]; `max_per_split`: pairs kept per split and kind (0 = all
    balanced pairs; the paper has about 4,000); `seed`; `lowercase`."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("train", "dev", "test", "vectors")

    train: Annotated[
        str,
        Meta(description="PreCo JSON-lines files"),
    ] = ""
    dev: Annotated[
        str,
        Meta(description="PreCo JSON-lines files"),
    ] = ""
    test: Annotated[
        str,
        Meta(description="PreCo JSON-lines files"),
    ] = ""
    vectors: Annotated[
        str,
        Meta(description="word vectors (GloVe text format)"),
    ] = ""
    bins: Annotated[
        int,
        Meta(ge=1, description="cosine bins over [-1, 1]"),
    ] = 10
    max_per_split: Annotated[
        int,
        Meta(ge=0, description="pairs kept per split and kind (0 = every balanced pair)"),
    ] = 4000
    seed: Annotated[
        int,
        Meta(description="sampling seed"),
    ] = 1111
    lowercase: Annotated[
        bool,
        Meta(description="lowercase text"),
    ] = True


def read_vectors(source: SourceLines, wanted: set[str]) -> dict[str, np.ndarray]:
    """The vectors of the wanted words (and their lowercase forms), as a `DataError` on bad lines."""
    try:
        return parse_vectors(iter(source), wanted | {w.lower() for w in wanted})
    except VectorsError as exc:
        raise source.error(exc) from exc


class CapStage(TaskStage[CapParams]):
    """Coreference arc prediction, "same" and "next" (`enteval.cap`)."""

    name = "enteval_cap"
    version = 1
    description = "EntEval CAP: PreCo same/next-sentence arcs balanced by GloVe name cosine"
    task = "cap"
    files = tuple(cap.FILES.values())

    def build(self, ctx: StageContext[CapParams], p: CapParams, stats: Stats) -> TaskOutput:
        """Pairs per split, their cosines, balanced per bin and kind, written as blocks."""
        pair_stats = cap.PairStats()
        pairs: dict[str, list[cap.MentionPair]] = {}
        for split in cap.SPLITS:
            docs: list[cap.PrecoDoc] = parse(self.read(p, split), cap.parse_preco)
            stats.add(f"documents_{split}", len(docs))
            pairs[split] = [pair for doc in docs for pair in cap.make_pairs(doc, pair_stats)]
        stats.add("dropped_both_pronouns", pair_stats.both_pronouns)
        stats.add("duplicate_mention_spans", pair_stats.duplicate_spans)
        wanted = {
            w for split in pairs for pair in pairs[split] for side in cap.mention_words(pair) for w in side
        }
        vectors = read_vectors(self.read(p, "vectors"), wanted)

        means: dict[tuple[str, ...], np.ndarray | None] = {}  # a mention's words recur in many pairs

        def mean(words: list[str]) -> np.ndarray | None:
            key = tuple(words)
            if key not in means:
                means[key] = average(words, vectors)
            return means[key]

        def similarity(first: list[str], second: list[str]) -> float | None:
            a, b = mean(first), mean(second)
            return None if a is None or b is None else cosine(a, b)

        output = TaskOutput()
        for split in cap.SPLITS:
            for kind in cap.KINDS:
                scored: list[tuple[cap.MentionPair, float]] = []
                for pair in pairs[split]:
                    if pair.kind != kind:
                        continue
                    stats.add(f"pairs_{kind}_{'positive' if pair.label else 'negative'}")
                    value = cap.cosine_of(pair, similarity)
                    if value is None:
                        stats.add("dropped_no_vector")
                        continue
                    scored.append((pair, value))
                balanced = cap.balance(scored, p.bins, p.seed, p.max_per_split)
                stats.add(f"pairs_written_{kind}_{split}", len(balanced.pairs))
                output.lines[cap.FILES[(kind, split)]] = [
                    line for pair in balanced.pairs for line in cap.cap_block(pair, p.lowercase)
                ]
        return output
