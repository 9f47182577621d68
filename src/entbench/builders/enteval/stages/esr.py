"""ESR task stages (EntEval §3.5; spec §8): `enteval_kore` and `enteval_wikisrs`.

Both attach Wikipedia descriptions to entity names by title matching (`builders.enteval.stages.common.
Describer`): every name's match and score go to the `matches` table, unmatched names are counted
(`names_unmatched`) and, with the default `unmatched = "drop"`, their KORE group or WikiSRS pair is
left out (`unmatched = "name"` writes the name itself as its description instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, cast

from msgspec import Meta

from entbench.builders.enteval import esr
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
class KoreParams(TitleMatchParams):
    """`source`: the KORE file (`enteval.esr` describes its layout); matching: `min_score`,
    `scorer`, `unmatched`; `lowercase` descriptions (names are kept as written, as EntEval's files)."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)

    source: Annotated[
        str,
        Meta(description="the task files"),
    ] = ""


@dataclass(frozen=True)
class WikiSrsParams(TitleMatchParams):
    """`relatedness`, `similarity`: the two WikiSRS files; `columns`: header names of the two entity
    columns and the score; matching and `lowercase` as for KORE."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("relatedness", "similarity")

    relatedness: Annotated[
        str,
        Meta(description="the task files"),
    ] = ""
    similarity: Annotated[
        str,
        Meta(description="the task files"),
    ] = ""
    columns: Annotated[
        tuple[str, ...],
        Meta(description="header names of the two entity columns and the score"),
    ] = ("Term1", "Term2", "Mean")

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.columns) != 3:
            raise ValueError("columns must name the two entity columns and the score column")


class KoreStage(TaskStage[KoreParams]):
    """KORE: ranked relatedness lists, scores n-1..0 (`enteval.esr`)."""

    name = "enteval_kore"
    version = 1
    inputs = ("wikient_descriptions", "title_qid")
    description = "EntEval ESR: KORE with Wikipedia descriptions"
    task = "kore"
    files = (esr.KORE_FILE,)
    writes_matches = True

    def build(self, ctx: StageContext[KoreParams], p: KoreParams, stats: Stats) -> TaskOutput:
        """Match every seed and candidate, then write the groups whose names all have descriptions."""
        groups: list[esr.KoreGroup] = parse(self.read(p, "source"), esr.parse_kore)
        names = [n for g in groups for n in (g.seed, *g.candidates)]
        describer = Describer(
            ctx, names, min_score=p.min_score, scorer=p.scorer, lowercase=p.lowercase, unmatched=p.unmatched
        )
        lines, dropped = esr.kore_lines(groups, describer.describe)
        stats.add("groups_read", len(groups))
        stats.add("groups_written", len(groups) - len(dropped))
        stats.add("dropped_group_unmatched_name", len(dropped))
        return TaskOutput({esr.KORE_FILE: lines}, list(describer.matches.values()))


class WikiSrsStage(TaskStage[WikiSrsParams]):
    """WikiSRS relatedness and similarity pairs (`enteval.esr`)."""

    name = "enteval_wikisrs"
    version = 1
    inputs = ("wikient_descriptions", "title_qid")
    description = "EntEval ESR: WikiSRS relatedness and similarity with Wikipedia descriptions"
    task = "wikisrs"
    files = tuple(esr.WIKISRS_FILES.values())
    writes_matches = True

    def build(self, ctx: StageContext[WikiSrsParams], p: WikiSrsParams, stats: Stats) -> TaskOutput:
        """Match both files' names at once, then write each file's pairs in source order."""
        pairs = {
            kind: cast(list[esr.ScoredPair], parse(self.read(p, kind), esr.parse_wikisrs, p.columns))
            for kind in esr.WIKISRS_FILES
        }
        names = [n for kind in pairs for pair in pairs[kind] for n in (pair.first, pair.second)]
        describer = Describer(
            ctx, names, min_score=p.min_score, scorer=p.scorer, lowercase=p.lowercase, unmatched=p.unmatched
        )
        output = TaskOutput(matches=list(describer.matches.values()))
        for kind, file in esr.WIKISRS_FILES.items():
            lines, dropped = esr.wikisrs_lines(pairs[kind], describer.describe)
            output.lines[file] = lines
            stats.add(f"pairs_read_{kind}", len(pairs[kind]))
            stats.add(f"dropped_pair_unmatched_name_{kind}", dropped)
        return output
