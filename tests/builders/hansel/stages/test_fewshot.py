"""`entbench build hansel-fewshot`: appendix A's rules and sampling on a real zhwiki text corpus.

Each rule is checked twice: the records never break it, and the fixture holds matched phrases that
break only that rule (so removing the rule would change the records). The facts each rule looks at
are recomputed here from the alias table, its mention statistics, the kb and the matches.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from entbench import api
from entbench.builders.alias.matching import normalize_with_offsets
from entbench.engine.manifest import load_manifest
from entbench.errors import DataError
from entbench.filters.mentions import MentionNormalizer, t2s
from tests.builders.hansel.build_support import HANSEL, PAIR, build, rows
from tests.conftest import SAMPLES_CONFIG

ALL = ("hansel_fewshot.size=1000",)  # every kept phrase is drawn (the uniform half alone covers them)


@pytest.fixture(scope="module")
def dirs() -> dict[str, Path]:
    return build()


@pytest.fixture(scope="module")
def facts(dirs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Per matched key: occurrences, alias-table candidates, E_known candidates, P(unlinked|m)."""
    known = {r["qid"] for r in rows(dirs["entity_diff"], "kb_entities") if r["in_known"]}
    candidates: dict[str, list[str]] = {}
    for r in rows(dirs["hansel_alias_table"], "alias_table"):
        candidates.setdefault(r["mention"], []).append(r["qid"])
    p = {r["mention"]: r["p_unlinked"] for r in rows(dirs["hansel_mention_stats"], "mention_stats")}
    counts = Counter(m["key"] for m in rows(dirs["hansel_corpus"], "matches"))
    return {
        key: {
            "n": n,
            "candidates": len(candidates.get(key, [])),
            "known": sum(q in known for q in candidates.get(key, [])),
            "p": p.get(key),
        }
        for key, n in counts.items()
    }


def passes(
    f: dict[str, Any], key: str, *, min_chars: int = 2, max_p: float = 0.98, min_known: int = 2
) -> bool:
    return len(key) >= min_chars and (f["p"] is None or f["p"] <= max_p) and f["known"] >= min_known


def keys_of(stage_dir: Path) -> list[str]:
    return [r["key"] for r in rows(stage_dir, "fewshot_candidates")]


def test_records_are_the_phrases_passing_every_rule(facts: dict[str, dict[str, Any]]) -> None:
    built = build(("hansel-fewshot",), params=ALL)
    expected = {k for k, f in facts.items() if passes(f, k)}
    assert len(expected) >= 5 and sorted(keys_of(built["hansel_fewshot"])) == sorted(expected)


@pytest.mark.parametrize(
    ("rule", "relaxed", "breaks_only"),
    [
        ("single_character", "hansel_fewshot.min_chars=1", {"min_chars": 1}),
        ("p_unlinked", "hansel_fewshot.max_p_unlinked=1.0", {"max_p": 1.0}),
        ("few_known_candidates", "hansel_fewshot.min_known_candidates=1", {"min_known": 1}),
    ],
)
def test_each_rule_removes_real_phrases(
    facts: dict[str, dict[str, Any]], rule: str, relaxed: str, breaks_only: dict[str, Any]
) -> None:
    # Matched phrases that break this rule and no other: the rule is what keeps them out.
    only = {k for k, f in facts.items() if passes(f, k, **breaks_only) and not passes(f, k)}
    assert only, f"the fixture exercises {rule}"
    default = set(keys_of(build(("hansel-fewshot",), params=ALL)["hansel_fewshot"]))
    assert not only & default
    manifest = load_manifest(build(("hansel-fewshot",), params=ALL)["hansel_fewshot"])
    assert manifest["stats"][f"phrases_dropped_{rule}"] >= len(only)
    relaxed_keys = set(keys_of(build(("hansel-fewshot",), params=(*ALL, relaxed))["hansel_fewshot"]))
    assert only <= relaxed_keys


def test_single_characters_p_unlinked_and_ambiguity_examples(facts: dict[str, dict[str, Any]]) -> None:
    # Named examples from the fixture (so a reader sees what each rule does to real text).
    assert facts["神"]["known"] >= 2 and facts["神"]["p"] <= 0.98  # only its length drops it
    assert facts["历史"]["known"] >= 2 and facts["历史"]["p"] > 0.98  # only P(unlinked|m) drops it
    assert facts["逻辑"]["known"] >= 2 and passes(facts["逻辑"], "逻辑")


def test_matches_are_longest_on_overlap(dirs: dict[str, Path]) -> None:
    keys = sorted({r["mention"] for r in rows(dirs["hansel_alias_table"], "alias_table")})
    docs = {d["doc_id"]: d["text"] for d in rows(dirs["hansel_corpus"], "docs")}
    by_doc: dict[str, list[tuple[int, int, str]]] = {}
    for m in rows(dirs["hansel_corpus"], "matches"):
        by_doc.setdefault(m["doc_id"], []).append((m["start"], m["end"], m["key"]))
    normalizer = MentionNormalizer("hansel", chinese=True)
    suppressed = 0
    for doc_id in ("299", "158", "345"):  # 计算语言学, 诺贝尔奖, 数论
        norm, origin = normalize_with_offsets(normalizer, docs[doc_id])
        every = []
        for key in keys:
            pos = norm.find(key)
            while pos >= 0:
                every.append((pos, pos + len(key), key))
                pos = norm.find(key, pos + 1)
        kept: list[tuple[int, int, str]] = []
        for span in sorted(every, key=lambda s: (s[0] - s[1], s[0], s[2])):
            if all(span[1] <= a or span[0] >= b for a, b, _ in kept):
                kept.append(span)
        suppressed += len(every) - len(kept)
        expected = sorted((origin[a], origin[b - 1] + 1, k) for a, b, k in kept)
        assert sorted(by_doc[doc_id]) == expected
    assert suppressed > 100  # overlaps are common: shorter keys inside longer ones


def test_half_uniform_half_ambiguous_one_example_per_phrase(facts: dict[str, dict[str, Any]]) -> None:
    params = ("hansel_fewshot.min_known_candidates=1", "hansel_fewshot.size=20")
    records = rows(build(("hansel-fewshot",), params=params)["hansel_fewshot"], "fewshot_candidates")
    by_criterion = Counter(r["criterion"] for r in records)
    assert by_criterion == {"uniform": 10, "ambiguous": 10}
    assert len({r["key"] for r in records}) == 20  # one example per phrase
    ambiguous = [r for r in records if r["criterion"] == "ambiguous"]
    assert all(r["candidates_in_table"] >= 2 for r in ambiguous)
    kept = [k for k, f in facts.items() if passes(f, k, min_known=1)]
    share = sum(facts[k]["candidates"] >= 2 for k in kept) / len(kept)
    assert share < 0.1  # so ten uniform draws would almost never all be ambiguous
    for r in records:
        assert r["occurrences"] == facts[r["key"]]["n"]
        assert r["candidates_in_table"] == facts[r["key"]]["candidates"]
    other_seed = build(("hansel-fewshot",), params=(*params, "hansel_fewshot.seed=1"))
    assert {r["key"] for r in rows(other_seed["hansel_fewshot"], "fewshot_candidates")} != {
        r["key"] for r in records
    }


def test_records_carry_known_candidates_and_at1(dirs: dict[str, Path]) -> None:
    known = {r["qid"]: r for r in rows(dirs["entity_diff"], "kb_entities") if r["in_known"]}
    table = {(r["mention"], r["qid"]): r for r in rows(dirs["hansel_alias_table"], "alias_table")}
    records = rows(dirs["hansel_fewshot"], "fewshot_candidates")
    assert records
    for i, r in enumerate(sorted(records, key=lambda r: r["example_index"])):
        assert r["id"] == f"hansel-fewshot-{i}"
        assert r["text"][r["start"] : r["end"]] == r["mention"] and t2s(r["text"]) == r["text"]
        cands = r["candidates"]
        assert len(cands) >= 2 and [c["rank"] for c in cands] == sorted(c["rank"] for c in cands)
        for c in cands:
            entry = table[(r["key"], c["qid"])]
            assert (
                c["qid"] in known and c["p_e_given_m"] == entry["p_e_given_m"] and c["rank"] == entry["rank"]
            )
            assert c["label"] == known[c["qid"]]["label_zh"]
        assert (r["at1"], r["at1_p"]) == (cands[0]["qid"], cands[0]["p_e_given_m"])


def test_leakage_share_of_candidates(dirs: dict[str, Path]) -> None:
    train_pairs = {(r["mention"], r["gold_id"]) for r in rows(dirs["hansel"], "train")}
    records = rows(dirs["hansel_fewshot"], "fewshot_candidates")
    leaked = sum((r["mention"], r["at1"]) in train_pairs for r in records)
    audit = load_manifest(dirs["hansel_fewshot_mem_audit"])["stats"]
    assert (audit["leakage_rows"], audit["leakage_pairs_in_train"]) == (len(records), leaked)
    assert audit["leakage_pair_share_pct"] == round(100 * leaked / len(records), 4)


def corpus_lines() -> list[str]:
    with gzip.open(HANSEL / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: [*lines[:2], "{not json", *lines[2:4]], "line 3: not JSON"),
        (lambda lines: [*lines[:2], json.dumps({"id": 1}), *lines[2:4]], 'line 3: expected {"id"'),
        (lambda lines: [lines[0], lines[1], lines[0]], "repeats on lines 1 and 3"),
    ],
)
def test_bad_corpus_lines_are_data_errors(
    tmp_path: Path, edit: Any, message: str, dirs: dict[str, Path]
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(edit(corpus_lines())) + "\n", encoding="utf-8")
    out = dirs["hansel"].parents[2]  # reuse the fixture world's upstream stages
    with pytest.raises(DataError, match=message) as info:
        build(("hansel-fewshot",), sources=(*PAIR, f"corpus={corpus}"), out=out)
    assert str(corpus) in str(info.value)


def build_corpus(out: Path, corpus: Path, max_bad_lines: int) -> Path:
    """`hansel-fewshot` on `corpus` with `--max-bad-lines`, no card; the `hansel_corpus` stage directory."""
    dirs = api.build(
        "hansel-fewshot",
        config=SAMPLES_CONFIG,
        sources=(*PAIR, f"corpus={corpus}"),
        out=out,
        max_bad_lines=max_bad_lines,
        progress=False,
        log=lambda _m: None,
        card=False,
    )
    return dirs["hansel_corpus"]


def test_bad_corpus_lines_within_max_bad_lines_are_counted_and_listed(
    tmp_path: Path, dirs: dict[str, Path]
) -> None:
    lines = corpus_lines()
    damaged = [lines[0], "{not json", lines[1], json.dumps({"id": 1}), *lines[2:]]
    text = "\n".join(damaged) + "\n"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(text, encoding="utf-8")
    out = dirs["hansel"].parents[2]
    with pytest.raises(
        DataError, match=r"2 bad line\(s\), more than --max-bad-lines 1; first: malformed_json"
    ):
        build_corpus(out, corpus, max_bad_lines=1)
    stage = build_corpus(out, corpus, max_bad_lines=2)
    stats = load_manifest(stage)["stats"]
    assert (stats["rejected_total"], stats["rejected_malformed_json"], stats["rejected_bad_fields"]) == (
        2,
        1,
        1,
    )
    assert stats["docs"] == len(lines)
    rejects = [json.loads(line) for line in (stage / "_rejects.jsonl").read_text().splitlines()]
    encoded = text.encode("utf-8")
    assert [r["offset"] for r in rejects] == [encoded.index(b"{not json"), encoded.index(b'{"id": 1}')]
    assert [r["detail"].split(":")[0] for r in rejects] == ["line 2", "line 4"]
    # Every good line is a doc, under its own line number.
    assert sorted(d["line"] for d in rows(stage, "docs")) == [1, 3, *range(5, len(damaged) + 1)]


@pytest.mark.parametrize("kind", ["last line cut", "gzip stream cut"])
def test_a_cut_corpus_is_an_error_whatever_the_limit(
    tmp_path: Path, kind: str, dirs: dict[str, Path]
) -> None:
    text = ("\n".join(corpus_lines()) + "\n").encode("utf-8")
    if kind == "last line cut":
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_bytes(text[:-40])
        match = "ends in the middle of a line"
    else:
        corpus = tmp_path / "corpus.jsonl.gz"
        packed = gzip.compress(text)
        corpus.write_bytes(packed[: len(packed) // 2])
        match = "compressed stream ends early"
    with pytest.raises(DataError, match=match) as info:
        build_corpus(dirs["hansel"].parents[2], corpus, max_bad_lines=1000)
    assert f"{corpus} at byte offset" in str(info.value)


def test_the_example_of_a_phrase_is_a_random_occurrence(dirs: dict[str, Path]) -> None:
    # Appendix A: "randomly select one example per phrase". Each record is one of its phrase's
    # matches; over the phrases matched more than once, the drawn match is not always the first
    # (or always the last) one in corpus order, as it would be without the draw.
    params = ("hansel_fewshot.min_known_candidates=1", "hansel_fewshot.size=40")
    built = build(("hansel-fewshot",), params=params)
    matches: dict[str, list[tuple[str, int]]] = {}
    for m in rows(built["hansel_corpus"], "matches"):
        matches.setdefault(m["key"], []).append((m["doc_id"], m["start"]))
    positions = []
    for r in rows(built["hansel_fewshot"], "fewshot_candidates"):
        spots = sorted(matches[r["key"]])
        assert len(spots) == r["occurrences"]
        picked = (r["doc_id"], r["doc_start"] + r["start"])
        assert picked in spots, r["key"]
        if len(spots) > 1:
            positions.append((spots.index(picked), len(spots)))
    assert len(positions) >= 5
    assert any(i > 0 for i, _ in positions) and any(i < n - 1 for i, n in positions)
