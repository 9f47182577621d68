"""CERP task stage (EntEval §3.4; spec §8): `enteval_cerp`, ConceptNet statements with the paper's
three rules for negatives and extra positives, sampled per class and split in thirds.

The paper's entity filters (`enteval.cerp_entities`) run when `ner_model` names a spaCy pipeline
with an entity recogniser, else they are skipped (the card says so beside the paper's 13,374).

Counts: assertions left out by the filters (`dropped_<reason>`, the entity filters'
`dropped_numeric_entity` and `dropped_not_entity_mention` among them), statements, instances made by
each rule (`rule1_negatives`, `rule2_negatives`, `rule3_positives`) and where a rule did not apply
(`rule1_no_replacement`, `rule2_not_negatable`, ...), sentences produced with both labels
(`dropped_conflicting_label`), and the instances written per split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np
from msgspec import Meta

from entbench.builders.enteval import cerp, cerp_entities
from entbench.builders.enteval.cerp_entities import ConceptRule
from entbench.builders.enteval.sampling import stable_hash
from entbench.builders.enteval.stages.cap import read_vectors
from entbench.builders.enteval.stages.common import TaskOutput, TaskStage, parse
from entbench.builders.enteval.stages.sources import TaskParams, directory_identity
from entbench.builders.enteval.tokens import Tokenizer
from entbench.builders.enteval.vectors import average
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class CerpParams(TaskParams):
    """`source`: ConceptNet assertions (5-column CSV); `vectors`: word vectors (GloVe text format);
    `exclude_relations`, `exclude_phrases`: the paper's filters; `ner_model`: a spaCy pipeline
    (directory or package name) for its entity filters, none to skip them, with `ner_excluded_types`
    and `ner_concepts` (`enteval.cerp_entities`); `neighbours`: how many of the most similar
    surfaces rule 1 chooses from; `per_class` (§3.4: 6000); `seed`; `lowercase`."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source", "vectors")
    EXTRA_PATH_FIELDS: ClassVar[tuple[str, ...]] = ("ner_model",)

    source: Annotated[
        str,
        Meta(description="ConceptNet assertions (5-column CSV)"),
    ] = ""
    vectors: Annotated[
        str,
        Meta(description="word vectors (GloVe text format)"),
    ] = ""
    exclude_relations: Annotated[
        tuple[str, ...],
        Meta(description="relations left out"),
    ] = ("/r/RelatedTo", "/r/Synonym", "/r/TranslationOf")
    exclude_phrases: Annotated[
        tuple[str, ...],
        Meta(description="surface phrases left out"),
    ] = ("likely to find",)
    ner_model: Annotated[
        str | None,
        Meta(
            description=(
                "a spaCy pipeline with an entity recogniser (a pipeline directory, or an installed "
                "package name such as `en_core_web_sm`) for the paper's entity filters; none skips "
                "them"
            )
        ),
    ] = None
    ner_excluded_types: Annotated[
        tuple[str, ...],
        Meta(description="entity types that drop a statement"),
    ] = cerp_entities.NUMERIC_TYPES
    ner_concepts: Annotated[
        ConceptRule,
        Meta(description="how many concepts must be entity mentions: `any` (one) or `both`"),
    ] = "any"
    neighbours: Annotated[
        int,
        Meta(ge=1, description="most similar surfaces rule 1 chooses from"),
    ] = 5
    per_class: Annotated[
        int,
        Meta(ge=1, description="instances per class"),
    ] = 6000
    seed: Annotated[
        int,
        Meta(description="sampling seed"),
    ] = 1111
    lowercase: Annotated[
        bool,
        Meta(description="lowercase text"),
    ] = True

    def to_json(self) -> dict[str, Any]:
        """The task files' identities, and the NER pipeline's by its files (not by where it is)."""
        data = super().to_json()
        if self.ner_model:
            path, package = cerp_entities.locate_pipeline(self.ner_model)
            data["ner_model"] = package or path.name
            data["ner_model_files"] = directory_identity(path)
        return data


class CerpStage(TaskStage[CerpParams]):
    """Contextualized entity relationship prediction (`enteval.cerp`)."""

    name = "enteval_cerp"
    version = 2  # 2: the entity filters (ner_model)
    description = "EntEval CERP: ConceptNet statements, negatives by the paper's three rules"
    task = "cerp"
    files = tuple(cerp.FILES.values())

    def build(self, ctx: StageContext[CerpParams], p: CerpParams, stats: Stats) -> TaskOutput:
        """Statements -> rule 1/2/3 instances -> per-class sample -> thirds."""
        parse_stats = cerp.ParseStats()
        statements: list[cerp.Statement] = parse(
            self.read(p, "source"), cerp.parse_assertions, p.exclude_relations, p.exclude_phrases, parse_stats
        )
        for reason, n in parse_stats.counts.items():
            stats.add(f"dropped_{reason}", n)
        statements = sorted(set(statements), key=cerp.Statement.key)
        if p.ner_model:
            nlp = cerp_entities.load_pipeline(p.ner_model)
            reasons = cerp_entities.filter_reasons(nlp, statements, p.ner_excluded_types, p.ner_concepts)
            kept: list[cerp.Statement] = []
            for statement, verdict in zip(statements, reasons, strict=True):
                if verdict is None:
                    kept.append(statement)
                else:
                    stats.add(f"dropped_{verdict}")
            statements = kept
        stats.add("statements", len(statements))
        tokenizer = Tokenizer.shared()
        surface_words = {s.slot(k): tokenizer.words(s.slot(k)) for s in statements for k in (0, 1)}
        vectors = read_vectors(self.read(p, "vectors"), {w for ws in surface_words.values() for w in ws})
        means = {surface: average(words, vectors) for surface, words in surface_words.items()}
        known = cerp.known_index(statements)
        pools: dict[tuple[str, int], cerp.Pool] = {}
        for relation in sorted({s.relation for s in statements}):
            for k in (0, 1):
                members = {s.slot(k) for s in statements if s.relation == relation}
                pools[(relation, k)] = cerp.Pool(
                    [(m, v) for m in sorted(members) if (v := means[m]) is not None]
                )
        positives: list[cerp.Instance] = []
        negatives: list[cerp.Instance] = []

        def add(statement: cerp.Statement | None, label: int, counter: str) -> None:
            if statement is None:
                return
            item = cerp.instance(statement, label, tokenizer.words, p.lowercase)
            if item is None:
                stats.add("dropped_concept_without_words")
                return
            stats.add(counter)
            (positives if label else negatives).append(item)

        for statement in statements:
            add(statement, 1, "original_positives")
            negated = cerp.negate(statement)
            if negated is None:
                stats.add("rule2_not_negatable")
            add(negated, 0, "rule2_negatives")
            slot = stable_hash(p.seed, "slot", *statement.key()) % 2
            vector: np.ndarray | None = means.get(statement.slot(slot))
            surface = (
                None
                if vector is None
                else cerp.replacement(
                    statement, slot, pools[(statement.relation, slot)], vector, known, p.neighbours, p.seed
                )
            )
            if surface is None:
                stats.add("rule1_no_replacement")
                continue
            replaced = statement.replace(slot, surface)
            add(replaced, 0, "rule1_negatives")
            replaced_negated = cerp.negate(replaced)
            if replaced_negated is None:
                stats.add("rule3_not_negatable")
            add(replaced_negated, 1, "rule3_positives")
        positive_keys = {i.key() for i in positives}
        negative_keys = {i.key() for i in negatives}
        conflicts = positive_keys & negative_keys
        stats.add("dropped_conflicting_label", len(conflicts))
        unique_pos = {i.key(): i for i in positives if i.key() not in conflicts}
        unique_neg = {i.key(): i for i in negatives if i.key() not in conflicts}
        stats.add("positives", len(unique_pos))
        stats.add("negatives", len(unique_neg))
        splits = cerp.sample(list(unique_pos.values()), list(unique_neg.values()), p.per_class, p.seed)
        output = TaskOutput()
        for split, file in cerp.FILES.items():
            output.lines[file] = [cerp.cerp_line(item) for item in splits[split]]
            stats.add(f"instances_written_{split}", len(splits[split]))
        return output
