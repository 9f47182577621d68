"""CERP's entity filters (EntEval §3.4): "We further filter out non-entity mentions and entities with
type 'DATE', 'TIME', 'PERCENT', 'MONEY', 'QUANTITY', 'ORDINAL', and 'CARDINAL' according to SpaCy
... After filtering, we have 13374 assertions."

The filters need a spaCy pipeline with an entity recogniser (`ner_model`: a pipeline directory, or
the name of an installed pipeline package such as `en_core_web_sm`); none can be downloaded by a
build, so without one the filters are skipped and the card says so. With one, each statement's
sentence (its surface text without the `[[ ]]` marks) goes through the pipeline, and a concept
*is an entity mention* when an entity the pipeline finds lies inside the concept's characters. A
statement is dropped

* `numeric_entity`: when an entity inside either concept has one of `excluded_types` (the seven
  above);
* `not_entity_mention`: else when fewer concepts are entity mentions than `concepts` asks: `any`
  (the default) keeps a statement with at least one, `both` needs both. The paper's examples (Figure
  3: "[[Gin and vermouth]] can [[make a martini]]", "[[Connecticut]] is not [[a state]]") each have
  one concept that no recogniser tags, so `any` is the reading that keeps them.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from entbench.builders.enteval.cerp import Statement
from entbench.errors import UserError

NUMERIC_TYPES = ("DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL")
ConceptRule = Literal["any", "both"]
CONCEPT_RULES: tuple[ConceptRule, ...] = typing.get_args(ConceptRule)
#: spaCy factories whose components set `Doc.ents`.
NER_FACTORIES = ("ner", "beam_ner", "entity_ruler")


def locate_pipeline(value: str) -> tuple[Path, str | None]:
    """The pipeline's directory, and its package name when it is an installed package."""
    import spacy.util

    path = Path(value)
    if path.is_dir():
        return path, None
    if spacy.util.is_package(path.name):
        return Path(spacy.util.get_package_path(path.name)), path.name
    raise UserError(
        f"ner_model: no spaCy pipeline directory at {value} and no installed spaCy package named "
        f"{path.name!r} (a relative path is taken relative to the config file that names it)"
    )


def load_pipeline(value: str) -> Any:
    """The spaCy pipeline `ner_model` names (a `UserError` if it cannot recognise entities)."""
    import spacy

    path, package = locate_pipeline(value)
    try:
        nlp = spacy.load(package or path)
    except (OSError, ValueError) as exc:
        raise UserError(f"ner_model: {value} is not a loadable spaCy pipeline ({exc})") from exc
    factories = {nlp.get_pipe_meta(name).factory for name in nlp.pipe_names}
    if not factories & set(NER_FACTORIES):
        raise UserError(
            f"ner_model: the pipeline at {value} has no entity recogniser "
            f"(components: {', '.join(nlp.pipe_names) or 'none'}; needs one of {', '.join(NER_FACTORIES)})"
        )
    return nlp


def sentence(statement: Statement) -> tuple[str, tuple[int, int], tuple[int, int]]:
    """The statement's sentence and the character spans of its two concepts in it."""
    first = len(statement.prefix)
    second = first + len(statement.first) + len(statement.middle)
    text = "".join((statement.prefix, statement.first, statement.middle, statement.second, statement.suffix))
    return text, (first, first + len(statement.first)), (second, second + len(statement.second))


def verdict(
    entities: Iterable[tuple[int, int, str]],
    spans: Sequence[tuple[int, int]],
    excluded_types: Sequence[str],
    concepts: str,
) -> str | None:
    """Why a statement is dropped (`numeric_entity`, `not_entity_mention`), or None to keep it.

    `entities` are (start, end, label) character spans found in the sentence; `spans` the concepts'.
    """
    inside = [[label for start, end, label in entities if start >= lo and end <= hi] for lo, hi in spans]
    if any(label in excluded_types for labels in inside for label in labels):
        return "numeric_entity"
    mentions = sum(1 for labels in inside if labels)
    if mentions < (len(spans) if concepts == "both" else 1):
        return "not_entity_mention"
    return None


def filter_reasons(
    nlp: Any, statements: Sequence[Statement], excluded_types: Sequence[str], concepts: str
) -> Iterator[str | None]:
    """`verdict` for each statement, in order (the pipeline runs over the sentences in batches)."""
    made = [sentence(s) for s in statements]
    docs = nlp.pipe((text for text, _, _ in made), batch_size=256)
    for (_, first, second), doc in zip(made, docs, strict=True):
        entities = [(e.start_char, e.end_char, str(e.label_)) for e in doc.ents]
        yield verdict(entities, (first, second), excluded_types, concepts)
