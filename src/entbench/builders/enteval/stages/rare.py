"""Rare-entity task stage (EntEval §3.7; spec §8): `enteval_rare`.

Instances with exactly four candidates are kept (`dropped_not_four_candidates` counts the others),
put in a seeded order and cut into train/valid/test of `splits` sizes (10k/4k/4k as the paper;
proportionally smaller when the source has fewer). Contexts are tokenised (spaCy blank English),
lowercased when asked, and cut to the loader's window around the blank (`enteval.rare`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from msgspec import Meta

from entbench.builders.enteval import rare
from entbench.builders.enteval.sampling import proportional, seeded_order
from entbench.builders.enteval.stages.common import TaskOutput, TaskStage, parse
from entbench.builders.enteval.stages.sources import TaskParams
from entbench.builders.enteval.tokens import Tokenizer
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class RareParams(TaskParams):
    """`source`: the JSON-lines instances; `splits`: train, valid, test sizes; `window`: words kept
    before the blank (the loader's 150); `seed`; `lowercase`."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)

    source: Annotated[
        str,
        Meta(description="the instances"),
    ] = ""
    splits: Annotated[
        tuple[int, ...],
        Meta(description="train, valid, test sizes"),
    ] = (10000, 4000, 4000)
    window: Annotated[
        int,
        Meta(ge=1, description="words kept before the blank"),
    ] = rare.WINDOW
    seed: Annotated[
        int,
        Meta(description="order seed"),
    ] = 1111
    lowercase: Annotated[
        bool,
        Meta(description="lowercase text"),
    ] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.splits) != 3 or min(self.splits) < 0:
            raise ValueError("splits must be three sizes (train, valid, test)")


class RareStage(TaskStage[RareParams]):
    """Rare entity prediction: four candidates, a 150-word window (`enteval.rare`)."""

    name = "enteval_rare"
    version = 1
    description = "EntEval Rare: four-candidate rare-entity blanks, 10k/4k/4k"
    task = "rare"
    files = tuple(rare.FILES.values())

    def build(self, ctx: StageContext[RareParams], p: RareParams, stats: Stats) -> TaskOutput:
        """Keep four-candidate instances, split them (seeded), write the blocks."""
        instances: list[rare.RareInstance] = parse(self.read(p, "source"), rare.parse_rare)
        stats.add("instances_read", len(instances))
        four = [i for i in instances if len(i.candidates) == rare.CANDIDATES]
        stats.add("dropped_not_four_candidates", len(instances) - len(four))
        ordered = seeded_order(four, lambda i: (i.id, i.left, i.right), p.seed)
        tokenizer = Tokenizer.shared()
        output = TaskOutput()
        start = 0
        for split, size in zip(rare.SPLITS, proportional(len(ordered), p.splits), strict=True):
            lines: list[str] = []
            for instance in ordered[start : start + size]:
                block = rare.rare_block(instance, tokenizer.words, p.lowercase, p.window)
                if block is None:
                    stats.add("dropped_candidate_without_words")
                    continue
                lines.extend(block)
                stats.add(f"instances_written_{split}")
            output.lines[rare.FILES[split]] = lines
            start += size
        stats.add("instances_beyond_splits", max(0, len(ordered) - start))
        return output
