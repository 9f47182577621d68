"""EFP on FEVER lines the project has never seen (plus the five real ones of `fixtures/enteval/`):
no NOT ENOUGH INFO claim is written, every span is the text of one of the claim's evidence pages on
token boundaries, splits do not overlap, every drop is counted; and FEVER's page ids as text."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from entbench.builders.enteval import efp
from entbench.builders.enteval.tokens import Tokenizer
from tests.builders.enteval import loader_formats as loaders
from tests.builds import build
from tests.conftest import FIXTURES, SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[[list[str]], Result]
REAL = FIXTURES / "enteval" / "fever-sample.jsonl"


def claim(ident: int, label: str, text: str, *pages: str | None) -> dict[str, Any]:
    """A FEVER line: one evidence set holding each page (NOT ENOUGH INFO: one null item)."""
    if label == "NOT ENOUGH INFO":
        evidence: list[Any] = [[[ident, None, None, None]]]
    else:
        evidence = [[[ident, ident + 1, page, 0] for page in pages]]
    verifiable = "NOT VERIFIABLE" if label == "NOT ENOUGH INFO" else "VERIFIABLE"
    return {"id": ident, "verifiable": verifiable, "label": label, "claim": text, "evidence": evidence}


#: Claim -> the texts its mention may have (written by hand from the rules, not by the code).
UNSEEN = [
    (
        claim(1, "SUPPORTS", "Savages is a 2012 crime thriller film.", "Savages_-LRB-2012_film-RRB-"),
        {"Savages"},
    ),
    (
        claim(2, "REFUTES", "Star Wars: Episode IV was released in 1990.", "Star_Wars-COLON-_Episode_IV"),
        {"Star Wars: Episode IV"},
    ),
    (claim(3, "NOT ENOUGH INFO", "Barack Obama likes green tea."), None),
    (
        claim(4, "SUPPORTS", "Obamacare was signed by Barack Obama.", "Barack_Obama", "Affordable_Care_Act"),
        {"Barack Obama"},
    ),
    # "Paris" inside "Parisians" is not on token boundaries; the second one is.
    (claim(5, "SUPPORTS", "Parisians love Paris Hilton.", "Paris"), {"Paris"}),
    (claim(6, "REFUTES", "Beyoncé was born in Texas.", "Beyonce\u0301", "Houston"), {"Beyoncé"}),
    (claim(7, "SUPPORTS", "Songs by the Beatles sold well.", "The_Beatles"), None),  # case differs
    (
        claim(
            8,
            "REFUTES",
            "Tom Hanks starred in Cast Away and Big.",
            "Cast_Away",
            "Big_-LRB-film-RRB-",
            "Tom_Hanks",
        ),
        {"Tom Hanks", "Cast Away", "Big"},
    ),
    (claim(9, "SUPPORTS", "Nirvana was a band.", "Nirvana_-LRB-band-RRB-"), {"Nirvana"}),
    (claim(10, "SUPPORTS", "Nirvana was a band.", "Nirvana_-LRB-band-RRB-"), {"Nirvana"}),  # a repeat
    (claim(11, "SUPPORTS", "Oasis was a band.", "Oasis_-LRB-band-RRB-"), None),  # both labels:
    (claim(12, "REFUTES", "Oasis was a band.", "Oasis_-LRB-band-RRB-"), None),  # conflicting
    (claim(13, "SUPPORTS", "Nothing is evidenced here.", None), None),
    (
        claim(
            14,
            "SUPPORTS",
            "(I Can't Get No) Satisfaction is a song.",
            "-LRB-I_Can't_Get_No-RRB-_Satisfaction",
        ),
        {"(I Can't Get No) Satisfaction"},
    ),
]
REAL_MENTIONS = {
    "Nikolaj Coster-Waldau worked with the Fox Broadcasting Company.": {
        "Nikolaj Coster-Waldau",
        "Fox Broadcasting Company",
    },
    "Peggy Sue Got Married is a Egyptian film released in 1986.": {"Peggy Sue Got Married"},
    "Liverpool F.C. was valued at $1.55 billion at one point.": {"Liverpool F.C."},
    "Beyoncé was given a music award.": {"Beyoncé"},
}


def quiet(_message: str) -> None:
    """Swallow the builder's log lines."""


def squash(text: str) -> str:
    """Text as compared with written words: NFC, lower case, no spaces."""
    return unicodedata.normalize("NFC", text).lower().replace(" ", "")


@pytest.fixture(scope="module")
def fever(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fever") / "train.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c, _ in UNSEEN), encoding="utf-8")
    return path


def build_efp(
    samples: SamplesBuilds, out: Path, fever: Path, *params: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The EFP files (as the loader reads them) and stats of a build on the unseen and real lines,
    in `out` seeded with the run's shared build (only the stages the lines reach are built)."""
    samples.seed(out, "enteval-tasks")
    source = f"enteval_efp.source={fever},{REAL}"
    dirs = build("enteval-tasks", out=out, params=[source, *params], progress=False, log=quiet, card=False)
    stats = json.loads((dirs["enteval_efp"] / "_MANIFEST.json").read_text(encoding="utf-8"))["stats"]
    return loaders.read_efp(dirs["enteval_tasks"] / "_enteval" / "EFP"), stats


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, fever: Path, samples_builds: SamplesBuilds
) -> tuple[dict[str, Any], dict[str, Any]]:
    return build_efp(samples_builds, tmp_path_factory.mktemp("efp"), fever)


def test_every_span_is_an_evidence_page_of_its_claim(built: tuple[dict[str, Any], dict[str, Any]]) -> None:
    splits, _ = built
    expected = {squash(c["claim"]): m for c, m in UNSEEN if m} | {
        squash(k): v for k, v in REAL_MENTIONS.items()
    }
    seen = []
    for rows in splits.values():
        for label, words, s, e in rows:
            key = "".join(words)
            assert key in expected, f"a claim that must not be written: {' '.join(words)}"
            assert "".join(words[s:e]) in {squash(m) for m in expected[key]}
            assert label in ("SUPPORTS", "REFUTES")
            seen.append(key)
    assert sorted(seen) == sorted(expected)  # each kept claim once, in one split only


def test_drops_are_counted(built: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, stats = built
    assert stats["claims_read"] == len(UNSEEN) + 5
    assert stats["dropped_not_enough_info"] == 2  # one unseen, one real
    assert stats["dropped_no_page_in_claim"] == 1  # "the Beatles" vs The_Beatles
    assert stats["dropped_no_evidence_page"] == 1
    assert stats["dropped_duplicate_claim"] == 1 and stats["dropped_conflicting_label"] == 2
    assert stats["claims_several_pages"] == 2  # Tom Hanks; Coster-Waldau (real)
    written = sum(stats[f"instances_written_{s}"] for s in efp.SPLITS)
    assert written == len(REAL_MENTIONS) + sum(1 for _, m in UNSEEN if m) - 1  # the repeat once
    assert stats["instances_beyond_splits"] == 0 and stats["labels"] == 2


def test_sizes_cut_the_seeded_order(
    tmp_path: Path, fever: Path, built: tuple[dict[str, Any], Any], samples_builds: SamplesBuilds
) -> None:
    splits, stats = build_efp(samples_builds, tmp_path / "out", fever, "enteval_efp.sizes=3,2,2")
    assert [len(splits[s]) for s in efp.SPLITS] == [3, 2, 2]
    assert stats["instances_beyond_splits"] == 12 - 7
    lines = [" ".join(r[1]) for rows in splits.values() for r in rows]
    everything = {" ".join(r[1]) for rows in built[0].values() for r in rows}
    assert len(set(lines)) == 7 and set(lines) <= everything


def test_ignore_case_finds_a_page_in_other_case(
    tmp_path: Path, fever: Path, samples_builds: SamplesBuilds
) -> None:
    splits, stats = build_efp(
        samples_builds, tmp_path / "out", fever, "enteval_efp.ignore_case=true", "enteval_efp.lowercase=false"
    )
    rows = [r for rows in splits.values() for r in rows]
    beatles = [r for r in rows if r[1][0] == "Songs"]
    assert [r[1][r[2] : r[3]] for r in beatles] == [["the", "Beatles"]]
    assert "dropped_no_page_in_claim" not in stats


def test_page_ids_as_text() -> None:
    assert efp.page_text("Savages_-LRB-2012_film-RRB-") == "Savages"
    assert efp.page_text("Star_Wars-COLON-_Episode_IV") == "Star Wars: Episode IV"
    assert efp.page_text("Beyonce\u0301") == "Beyonc\u00e9"
    assert efp.page_text("-LRB-I_Can't_Get_No-RRB-_Satisfaction") == "(I Can't Get No) Satisfaction"
    assert efp.page_text("-LSB-Sic-RSB-_-LCB-x-RCB-") == "[Sic] {x}"
    assert efp.page_text("-LRB-Untitled-RRB-") == "(Untitled)"  # nothing left without the brackets


def test_token_boundaries_and_the_seeded_pick() -> None:
    text = "Parisians love Paris Hilton."
    tokens = Tokenizer.shared().tokens(text)
    assert efp.find_on_token_boundaries(text, tokens, "Paris", ignore_case=False) == (2, 3)
    assert efp.find_on_token_boundaries(text, tokens, "Hilt", ignore_case=False) is None
    fever_claim = efp.Claim("8", "REFUTES", "Tom Hanks starred in Cast Away and Big.", (), 1)
    text = fever_claim.claim
    found = efp.mentions(
        text, Tokenizer.shared().tokens(text), ["Cast_Away", "Big_-LRB-film-RRB-", "Tom_Hanks"], False
    )
    assert [(m.start, m.end) for m in found] == [(0, 2), (4, 6), (7, 8)]
    picks = {efp.pick(fever_claim, found, seed) for seed in range(20)}
    assert len(picks) == 3  # the seed decides; every page can be picked
    assert efp.pick(fever_claim, found, 5) == efp.pick(fever_claim, found, 5)


def test_damaged_fever_lines_are_errors(tmp_path: Path, run_cli: RunCli) -> None:
    def run(lines: str) -> Result:
        path = tmp_path / "bad.jsonl"
        path.write_text(lines, encoding="utf-8")
        command = ["build", "enteval-tasks", "--out", str(tmp_path / "out"), "--no-progress"]
        return run_cli([*command, "--config", str(SAMPLES_CONFIG), "--param", f"enteval_efp.source={path}"])

    good = json.dumps(UNSEEN[0][0]) + "\n"
    unlabeled = json.dumps({"id": 5, "claim": "A test claim."}) + "\n"
    result = run(good + unlabeled)
    assert result.exit_code == 1
    assert f"bad.jsonl at byte offset {len(good.encode())}: line 2: no label" in result.output
    result = run(good + '{"id": 1, "label": "SUPPORTS", "claim": "x", "evidence": [[["a"]]]}\n')
    assert result.exit_code == 1 and "line 2: an evidence item must be" in result.output
    result = run(good + "{not json\n")
    assert result.exit_code == 1 and "line 2: not JSON" in result.output


def test_a_list_of_sources_is_resolved_like_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a config, each path of the list is relative to the config file; on the command line,
    `a,b` is the list and relative to the current directory; the fingerprint names files by content."""
    from entbench.engine import registry
    from entbench.engine.config import load_config

    own = tmp_path / "conf"
    own.mkdir()
    for name in ("train.jsonl", "dev.jsonl"):
        (own / name).write_bytes(REAL.read_bytes())
    config_file = own / "entbench.toml"
    config_file.write_text('[params.enteval_efp]\nsource = ["train.jsonl", "dev.jsonl"]\n', encoding="utf-8")
    params_type = registry.get_stage("enteval_efp").params_type
    params = load_config(config_file).params_for(params_type, "enteval_efp")
    assert params.source == (str(own / "train.jsonl"), str(own / "dev.jsonl"))  # type: ignore[attr-defined]
    monkeypatch.chdir(own)
    cli = load_config(None, (), ("enteval_efp.source=train.jsonl,dev.jsonl",)).params_for(
        params_type, "enteval_efp"
    )
    for key in ("source", "source_files"):  # (the other parameters: the demo world's, with no --config)
        assert cli.to_json()[key] == params.to_json()[key]
    assert params.to_json()["source"] == ["train.jsonl", "dev.jsonl"]
    assert [f["sha256"] for f in params.to_json()["source_files"]["source"]] == [
        hashlib.sha256(REAL.read_bytes()).hexdigest()
    ] * 2
    single = load_config(None, (), (f"enteval_efp.source={own / 'dev.jsonl'}",)).params_for(
        params_type, "enteval_efp"
    )
    assert single.source == (str(own / "dev.jsonl"),)  # type: ignore[attr-defined]
