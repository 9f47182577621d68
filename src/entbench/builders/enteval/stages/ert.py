"""ERT task stage (EntEval §3.6; spec §8): `enteval_ert`, Freebase relation tuples sampled 5/10/10.

Names get Wikipedia descriptions by title matching (`Describer`; every match in `matches`); a tuple
with an unmatched name is left out before sampling (`dropped_tuple_unmatched_name`), and relations
with too few tuples left are listed in the stats (`relations_too_small`). Sampling is seeded
(`seed`, default 1111 as the EntEval loaders' own seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from msgspec import Meta

from entbench.builders.enteval import ert
from entbench.builders.enteval.stages.common import (
    Describer,
    TaskOutput,
    TaskStage,
    TitleMatchParams,
    parse,
)
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class ErtParams(TitleMatchParams):
    """`source`: the tuples file; `per_split`: tuples per relation for train, dev, test (§3.6: 5,
    10, 10); `seed`; matching (`min_score`, `scorer`, `unmatched`) and `lowercase` as for ESR."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)

    source: Annotated[
        str,
        Meta(description="the tuples file"),
    ] = ""
    per_split: Annotated[
        tuple[int, ...],
        Meta(description="tuples per relation in train, dev, test"),
    ] = (5, 10, 10)
    seed: Annotated[
        int,
        Meta(description="sampling seed (the EntEval loaders' own)"),
    ] = 1111

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.per_split) != 3 or min(self.per_split) < 1:
            raise ValueError("per_split must be three positive counts (train, dev, test)")


class ErtStage(TaskStage[ErtParams]):
    """Entity relationship typing (`enteval.ert`)."""

    name = "enteval_ert"
    version = 1
    inputs = ("wikient_descriptions", "title_qid")
    description = "EntEval ERT: relation tuples sampled 5/10/10 per relation, with descriptions"
    task = "ert"
    files = tuple(ert.FILES.values())
    writes_matches = True

    def build(self, ctx: StageContext[ErtParams], p: ErtParams, stats: Stats) -> TaskOutput:
        """Match names, keep described tuples, sample per relation, write the three splits."""
        tuples: list[ert.RelationTuple] = parse(self.read(p, "source"), ert.parse_tuples)
        describer = Describer(
            ctx,
            [n for t in tuples for n in (t.first, t.second)],
            min_score=p.min_score,
            scorer=p.scorer,
            lowercase=p.lowercase,
            unmatched=p.unmatched,
        )
        described = [
            t
            for t in tuples
            if describer.describe(t.first) is not None and describer.describe(t.second) is not None
        ]
        stats.add("tuples_read", len(tuples))
        stats.add("dropped_tuple_unmatched_name", len(tuples) - len(described))
        sample = ert.sample(described, p.per_split, p.seed)
        stats.add("relations_kept", len({t.relation for t in sample.splits["train"]}))
        stats.add("relations_too_small", len(sample.too_small))
        for relation in sample.too_small:  # listed by name: a reviewer needs to know which
            stats.add(
                f"dropped_relation_too_small:{relation}",
                len({t for t in described if t.relation == relation}),
            )
        output = TaskOutput(matches=list(describer.matches.values()))
        for split, file in ert.FILES.items():
            output.lines[file] = [ert.ert_line(t, describer.describe) for t in sample.splits[split]]
        return output
