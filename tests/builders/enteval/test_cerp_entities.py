"""CERP's entity filters (EntEval §3.4) with a spaCy pipeline the test builds itself: an
`EntityRuler` on a blank English pipeline, saved to disk and named by `ner_model` (no trained model
can be downloaded here). Statements whose concepts hold a numeric or time entity, or no entity at
all, are dropped and counted; the others go on to the paper's rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from entbench.builders.enteval import cerp, cerp_entities
from tests.builders.enteval.loader_formats import read_cerp
from tests.builds import build
from tests.conftest import SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[[list[str]], Result]
PATTERNS = [
    {"label": "GPE", "pattern": "Connecticut"},
    {"label": "GPE", "pattern": "Paris"},
    {"label": "GPE", "pattern": "France"},
    {"label": "PRODUCT", "pattern": "Gin"},
    {"label": "DATE", "pattern": "Monday"},
    {"label": "CARDINAL", "pattern": "three"},
]
#: surfaceText -> what the filters do with it (`any`: one entity mention is enough).
SURFACES = {
    "[[Connecticut]] is [[a state]]": None,
    "[[Paris]] is in [[France]]": None,
    "[[Gin and vermouth]] can [[make a martini]]": None,  # an entity inside the concept
    "[[Monday]] is [[a day of the week]]": "numeric_entity",
    "[[a triangle]] has [[three sides]]": "numeric_entity",  # the numeric entity is in one concept
    "[[a cat]] can [[climb a tree]]": "not_entity_mention",
}


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def assertions(path: Path) -> Path:
    """A ConceptNet assertions file of `SURFACES`."""
    lines = []
    for n, surface in enumerate(SURFACES):
        info = json.dumps({"dataset": "/d/test", "surfaceText": surface})
        lines.append(f"/a/{n}\t/r/Test{n % 2}\t/c/en/x{n}\t/c/en/y{n}\t{info}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def ruler_pipeline(path: Path, patterns: list[dict[str, str]]) -> Path:
    """An EntityRuler on a blank English pipeline, saved as a pipeline directory."""
    import spacy  # here, not at collection: ~1.3 CPU s in every xdist worker, one of which runs these tests

    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns(patterns)
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cerp-ner")
    # Both build directories start from the run's shared build: only CERP's stages are built.
    for out in ("out", "plain"):
        samples_builds.seed(root / out, "enteval-tasks")
    return {
        "root": root,
        "source": assertions(root / "assertions.csv"),
        "model": ruler_pipeline(root / "ruler", PATTERNS),
    }


def build_cerp(
    out: Path, inputs: dict[str, Path], *params: str, card: bool = True
) -> tuple[dict[str, Any], list[Any], Path]:
    """Stats, CERP rows (all splits) and the card (unless `card` is false) of a build with the
    test's assertions."""
    given = [f"enteval_cerp.source={inputs['source']}", *params]
    dirs = build("enteval-tasks", out=out, params=given, progress=False, log=quiet, card=card)
    manifest = json.loads((dirs["enteval_cerp"] / "_MANIFEST.json").read_text(encoding="utf-8"))
    rows = [
        r for s in cerp.SPLITS for r in read_cerp(dirs["enteval_tasks"] / "_enteval" / "CERP" / f"{s}.txt")
    ]
    return manifest, rows, out / "cards" / "enteval-tasks" / "README.md"


def test_the_filters_drop_what_the_rules_say(inputs: dict[str, Path]) -> None:
    manifest, rows, card = build_cerp(
        inputs["root"] / "out", inputs, f"enteval_cerp.ner_model={inputs['model']}"
    )
    stats = manifest["stats"]
    assert stats["dropped_numeric_entity"] == 2 and stats["dropped_not_entity_mention"] == 1
    assert stats["statements"] == 3 and stats["original_positives"] == 3
    sentences = {" ".join(r[1][0]) for r in rows}
    words = {w for s in sentences for w in s.split()}
    assert {"monday", "triangle", "cat"}.isdisjoint(words)
    assert {"connecticut", "paris", "gin"} <= words
    assert manifest["params"]["ner_model"] == "ruler"  # named, not located
    text = card.read_text(encoding="utf-8")
    assert "CERP: 3 assertions kept after the entity filters of `ruler`" in text
    assert "2 dropped for a numeric or time entity, 1 for no entity mention" in text


def test_without_a_pipeline_the_filters_are_skipped_and_said_so(inputs: dict[str, Path]) -> None:
    manifest, _, card = build_cerp(inputs["root"] / "plain", inputs)
    assert manifest["params"]["ner_model"] is None
    assert manifest["stats"]["statements"] == len(SURFACES)
    assert "dropped_numeric_entity" not in manifest["stats"]
    text = card.read_text(encoding="utf-8")
    assert f"CERP: {len(SURFACES)} assertions kept, beside the paper's 13,374" in text
    assert "were **skipped**: no `ner_model` was given" in text


def test_both_concepts_and_a_changed_pipeline(inputs: dict[str, Path], tmp_path: Path) -> None:
    model = f"enteval_cerp.ner_model={inputs['model']}"
    out = inputs["root"] / "out"
    both, _, _ = build_cerp(out, inputs, model, "enteval_cerp.ner_concepts=both", card=False)
    assert both["stats"]["statements"] == 1  # Paris / France alone
    assert both["stats"]["dropped_not_entity_mention"] == 3
    # The pipeline's content is in the fingerprint: another pattern, another build.
    other = ruler_pipeline(tmp_path / "ruler", [*PATTERNS, {"label": "ORG", "pattern": "a cat"}])
    changed, _, _ = build_cerp(out, inputs, f"enteval_cerp.ner_model={other}", card=False)
    first, _, _ = build_cerp(out, inputs, model, card=False)
    assert changed["fingerprint"] != first["fingerprint"]
    assert changed["stats"]["statements"] == 4


def test_verdicts() -> None:
    statement = cerp.Statement("/r/IsA", "", "Connecticut", " is ", "a state", "")
    text, first, second = cerp_entities.sentence(statement)
    assert (text, text[slice(*first)], text[slice(*second)]) == (
        "Connecticut is a state",
        "Connecticut",
        "a state",
    )
    types = cerp_entities.NUMERIC_TYPES
    assert cerp_entities.verdict([(0, 11, "GPE")], (first, second), types, "any") is None
    assert cerp_entities.verdict([(0, 11, "GPE")], (first, second), types, "both") == "not_entity_mention"
    assert cerp_entities.verdict([(0, 14, "GPE")], (first, second), types, "any") == "not_entity_mention"
    assert cerp_entities.verdict([(17, 22, "ORDINAL")], (first, second), types, "any") == "numeric_entity"


def test_a_pipeline_without_a_recogniser_is_a_user_error(tmp_path: Path, run_cli: RunCli) -> None:
    import spacy

    spacy.blank("en").to_disk(tmp_path / "blank")
    command = ["build", "enteval-tasks", "--out", str(tmp_path / "out"), "--no-progress"]
    command += ["--config", str(SAMPLES_CONFIG)]
    result = run_cli([*command, "--param", f"enteval_cerp.ner_model={tmp_path / 'blank'}"])
    assert result.exit_code == 2 and "has no entity recogniser" in result.output
    result = run_cli([*command, "--param", f"enteval_cerp.ner_model={tmp_path / 'nowhere'}"])
    assert result.exit_code == 2 and "no spaCy pipeline directory at" in result.output
