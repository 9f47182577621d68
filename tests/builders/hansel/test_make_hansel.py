"""`make hansel` itself, as a user (and CI) runs it: the four Hansel targets on the bundled demo
world (its zhwiki dump and Wikidata pair), then `export hansel-train --format jsonl` (issue 5),
`export hansel-kb` and `export hansel-test` of the demo's annotations (issue 29).

The Makefile is run for real in a subprocess (with this interpreter's venv and its install step
marked done, so nothing is installed); the checks read what it wrote: the exported jsonl and the
stage tables the target files point at.

Its `--out` starts with the stage directories of the session's shared build of the demo world
(`world_out`, built by `api.build` from the same code, and checked file for file against the golden
shards by tests/test_golden.py): stage directories are named by fingerprint, so the four builds of
`make hansel` find what they would have written and only list the targets, write their cards and
export. Building those stages again here would prove nothing the shared build does not. The shared
build's cards of the four targets are there too (not their target listings, which the builds here
write): each card is written again for this `--out`, and its charts, drawn from the same tables,
are copied from the card before instead of drawn again (`cards.writer`'s `plot_keys`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import opencc
import pytest

from tests.builders.hansel.build_support import FIXTURES, rows
from tests.world_support import copy_stages

pytestmark = pytest.mark.slow  # reads the shared build of the demo world

REPO = FIXTURES.parent
OFFICIAL = FIXTURES / "zh-text" / "hansel.readme-example.jsonl"
TARGETS = ("hansel-train", "hansel-fewshot", "hansel-zeroshot", "hansel-kb")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, world_out: Path) -> Path:
    """The `--out` of one `make hansel` run (its stages those of the shared world build)."""
    venv = Path(sys.prefix)
    out = tmp_path_factory.mktemp("make-hansel") / "out"
    copy_stages(world_out, out, TARGETS)
    for target in TARGETS:
        shutil.copytree(world_out / "cards" / target, out / "cards" / target)
    result = subprocess.run(
        ["make", "-C", str(REPO), "-o", f"{venv}/.installed", "hansel", f"OUT={out}", f"VENV={venv}"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def stage_dirs(out: Path, target: str) -> dict[str, Path]:
    spec = json.loads((out / "targets" / f"{target}.json").read_text())
    return {stage: out / rel for stage, rel in spec["stages"].items()}


def keys_in_order(line: str) -> list[str]:
    pairs: list[tuple[str, Any]] = json.loads(line, object_pairs_hook=list)
    return [k for k, _ in pairs]


def test_every_hansel_target_is_built(made: Path) -> None:
    assert sorted(p.stem for p in (made / "targets").glob("*.json")) == sorted(TARGETS)
    for target in TARGETS:
        for stage, directory in stage_dirs(made, target).items():
            assert (directory / "_MANIFEST.json").is_file(), (target, stage)


def test_export_is_the_official_format_of_the_built_tables(made: Path) -> None:
    dirs = stage_dirs(made, "hansel-train")
    official = keys_in_order(OFFICIAL.read_text(encoding="utf-8").splitlines()[0])
    kb = {r["qid"]: r for r in rows(dirs["entity_diff"], "kb_entities")}
    to_simplified = opencc.OpenCC("t2s")  # OpenCC itself, not entbench's length-keeping wrapper
    pages: dict[str, set[int]] = {}
    for split in ("train", "validation"):
        lines = (made / "export" / "hansel" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        table = sorted(rows(dirs["hansel"], split), key=lambda r: r["example_index"])
        assert len(lines) == len(table) > 100
        pages[split] = {r["page_id"] for r in table}
        for n, line in enumerate(lines):
            assert keys_in_order(line) == official
            record = json.loads(line)
            assert record["id"] == f"hansel-{split}-{n}"
            assert record["text"][record["start"] : record["end"]] == record["mention"]
            # Simplified Chinese: OpenCC t2s leaves every output text unchanged.
            assert to_simplified.convert(record["text"]) == record["text"]
            assert to_simplified.convert(record["mention"]) == record["mention"]
            gold = kb[record["gold_id"]]
            assert gold["in_known"] and not gold["in_new"]
    assert not pages["train"] & pages["validation"]


def test_fewshot_and_zeroshot_outputs_are_real(made: Path) -> None:
    to_simplified = opencc.OpenCC("t2s")
    fewshot = rows(stage_dirs(made, "hansel-fewshot")["hansel_fewshot"], "fewshot_candidates")
    assert fewshot
    for r in fewshot:
        assert r["text"][r["start"] : r["end"]] == r["mention"]
        assert to_simplified.convert(r["text"]) == r["text"]
        assert to_simplified.convert(r["mention"]) == r["mention"]
    dirs = stage_dirs(made, "hansel-zeroshot")
    pool = rows(dirs["hansel_zeroshot"], "zeroshot_pool")
    new = {r["qid"] for r in rows(dirs["entity_diff"], "kb_entities") if r["in_new"]}
    assert len(pool) == 50 and {r["qid"] for r in pool} <= new  # hansel_zeroshot.size = 50 in the demo world


def test_kb_and_test_sets_are_exported(made: Path) -> None:
    export = made / "export" / "hansel"
    kb = [json.loads(line) for line in (export / "kb.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(kb) == len(rows(stage_dirs(made, "hansel-kb")["hansel_kb"], "kb")) > 1000
    ids = {r["id"] for r in kb}
    for name, n in (("hansel-few-shot.jsonl", 2), ("hansel-zero-shot.jsonl", 6)):
        records = [json.loads(line) for line in (export / name).read_text(encoding="utf-8").splitlines()]
        assert len(records) == n
        assert all(r["gold_id"].startswith("NIL_") or r["gold_id"] in ids for r in records)
    assert json.loads((export / "table1.json").read_text())["dropped"] == {"fs_at1_correct": 5}
