"""ET task stage (EntEval §3.1; spec §8): `enteval_et`, the ultra-fine entity typing crowd data in
its standard splits (`enteval.et`).

Counts: examples read and lines written per split (`examples_read_<split>`,
`instances_written_<split>`), examples left out (`dropped_empty_mention`, `dropped_no_type`),
`tokens_with_whitespace` (tokens cut where they held whitespace, such as U+00A0),
`duplicate_types` (a type listed twice for one example, written once) and `labels` (the types).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from msgspec import Meta

from entbench.builders.enteval import et
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.stages.common import TaskOutput, TaskStage, parse
from entbench.builders.enteval.stages.sources import SourceLines, TaskParams
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class EtParams(TaskParams):
    """`source`: the release's `crowd/` directory (`train.json`, `dev.json`, `test.json`); `types`:
    its `ontology/types.txt`; `lowercase` the sentences (types are kept as given)."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source", "types")
    DIRECTORY_FILES: ClassVar[dict[str, tuple[str, ...]]] = {"source": tuple(et.SPLITS.values())}

    source: Annotated[
        str,
        Meta(description="the `crowd/` directory"),
    ] = ""
    types: Annotated[
        str,
        Meta(description="the types file (`ontology/types.txt`)"),
    ] = ""
    lowercase: Annotated[
        bool,
        Meta(description="lowercase sentences (types are kept as given)"),
    ] = True


class EtStage(TaskStage[EtParams]):
    """Entity typing: every crowd example with its types (`enteval.et`)."""

    name = "enteval_et"
    version = 1
    description = "EntEval ET: ultra-fine entity typing crowd data, standard splits, labels.txt"
    task = "et"
    files = (*et.FILES.values(), et.LABELS_FILE)

    def build(self, ctx: StageContext[EtParams], p: EtParams, stats: Stats) -> TaskOutput:
        """Read the types, then each split, checking every type is listed."""
        types: list[str] = parse(self.read(p, "types"), et.parse_types)
        known = set(types)
        stats.add("labels", len(types))
        output = TaskOutput()
        output.lines[et.LABELS_FILE] = types
        directory = p.source_path("source")
        for split, name in et.SPLITS.items():
            source = SourceLines(directory / name)
            examples: list[et.TypedMention] = parse(source, et.parse_crowd)
            try:
                et.check_types(examples, known)
            except SourceError as exc:
                raise source.error(exc) from exc
            stats.add(f"examples_read_{split}", len(examples))
            lines: list[str] = []
            for example in examples:
                reason = et.drop_reason(example)
                if reason is not None:
                    stats.add(f"dropped_{reason}")
                    continue
                line = et.et_line(example, p.lowercase)
                lines.append(line.text)
                stats.add("tokens_with_whitespace", line.tokens_with_whitespace)
                stats.add("duplicate_types", line.duplicate_types)
            output.lines[et.FILES[split]] = lines
            stats.add(f"instances_written_{split}", len(lines))
        return output
