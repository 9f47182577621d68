"""`entbench build hansel-train` on the real zhwiki fixture pages (spec §5; Hansel §3.2)."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hanziconv import HanziConv

from entbench.builders.hansel.splits import document_hash
from entbench.cards.build_view import BuildView
from entbench.cards.targets.hansel import conversion_section
from entbench.engine.manifest import load_manifest
from entbench.filters.mentions import t2s, t2s_hanziconv
from entbench.schemas.hansel import LINK_STATUSES
from tests.builders.hansel.build_support import build, out_dir, rows, zhwiki_sitelinks
from tests.builders.kb.support import shard_hashes

E_NEW_PAGE = 39  # 民族: its item is only in the new dump (fixtures/hansel/PROVENANCE.md)


@pytest.fixture(scope="module")
def dirs() -> dict[str, Path]:
    return build()


@pytest.fixture(scope="module")
def records(dirs: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    return {split: rows(dirs["hansel"], split) for split in ("train", "validation")}


@pytest.fixture(scope="module")
def kb(dirs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return {r["qid"]: r for r in rows(dirs["entity_diff"], "kb_entities")}


def stats(directory: Path) -> dict[str, Any]:
    result: dict[str, Any] = load_manifest(directory)["stats"]
    return result


def test_every_record_spells_its_mention(records: dict[str, list[dict[str, Any]]]) -> None:
    assert len(records["train"]) > 500 and len(records["validation"]) > 100
    for split_rows in records.values():
        for r in split_rows:
            assert r["text"][r["start"] : r["end"]] == r["mention"] != ""


def test_gold_is_known_and_never_new(records: dict[str, list[dict[str, Any]]], kb: dict[str, Any]) -> None:
    golds = {r["gold_id"] for split_rows in records.values() for r in split_rows}
    assert golds and all(kb[q]["in_known"] and not kb[q]["in_new"] for q in golds)
    new = {q for q, r in kb.items() if r["in_new"]}
    assert len(new) > 200 and not golds & new


def test_documents_are_whole_and_in_one_split(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]
) -> None:
    train = {r["page_id"] for r in records["train"]}
    validation = {r["page_id"] for r in records["validation"]}
    assert not train & validation
    assert len(validation) == 2  # fixtures/entbench.toml: hansel.validation_docs = 2
    with_mentions = {d["page_id"] for d in rows(dirs["hansel_links"], "documents") if d["mentions"]}
    assert train | validation == with_mentions
    by_hash = sorted(with_mentions, key=lambda p: (document_hash(p, 0), p))
    assert validation == set(by_hash[:2])


def test_the_e_new_page_is_held_out(records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]) -> None:
    documents = {d["page_id"]: d for d in rows(dirs["hansel_links"], "documents")}
    assert documents[E_NEW_PAGE]["title"] == "民族" and documents[E_NEW_PAGE]["status"] == "e_new_page"
    assert all(r["page_id"] != E_NEW_PAGE for split_rows in records.values() for r in split_rows)
    scan_links = [link for link in rows(dirs["wiki"], "links") if link["page_id"] == E_NEW_PAGE]
    assert stats(dirs["hansel_links"])["links_in_dropped_documents"] == len(scan_links) > 100
    assert {d["status"] for p, d in documents.items() if p != E_NEW_PAGE} == {"kept"}


def test_mentions_are_exactly_the_links_to_known_entities(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path], kb: dict[str, Any]
) -> None:
    # Independently: the scan's links, titles -> QIDs from the raw dump (no redirects in the fixture).
    sitelinks = zhwiki_sitelinks()
    expected = {
        (link["page_id"], link["ordinal"], sitelinks[link["target_normalized"]])
        for link in rows(dirs["wiki"], "links")
        if link["page_id"] != E_NEW_PAGE
        and link["target_normalized"] in sitelinks
        and kb.get(sitelinks[link["target_normalized"]], {}).get("in_known")
        and link["anchor"].strip()
    }
    got = {(r["page_id"], r["ordinal"], r["gold_id"]) for split_rows in records.values() for r in split_rows}
    assert got == expected


def test_every_dropped_link_is_counted(dirs: dict[str, Path]) -> None:
    links = rows(dirs["hansel_links"], "links")
    counted = {
        k.removeprefix("links_"): v for k, v in stats(dirs["hansel_links"]).items() if k.startswith("links_")
    }
    dropped = counted.pop("in_dropped_documents")
    assert counted == dict(Counter(link["status"] for link in links))
    assert set(counted) <= set(LINK_STATUSES)
    for reason in ("e_new", "unresolved_red_link", "not_in_kb", "known"):
        assert counted[reason] > 0, reason
    scan_total = len(rows(dirs["wiki"], "links"))
    assert sum(counted.values()) + dropped == scan_total
    train = stats(dirs["hansel"])
    assert train["train_mentions"] + train["validation_mentions"] == counted["known"]


def test_texts_are_simplified_fixed_points(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]
) -> None:
    anchors = {(link["page_id"], link["ordinal"]): link["anchor"] for link in rows(dirs["wiki"], "links")}
    changed = 0
    for split_rows in records.values():
        for r in split_rows:
            assert t2s(r["text"]) == r["text"]
            anchor = anchors[(r["page_id"], r["ordinal"])]
            assert len(anchor) == len(r["mention"])
            changed += anchor != r["mention"]
    assert changed == stats(dirs["hansel"])["mentions_changed_by_t2s"] > 50
    assert stats(dirs["hansel"])["contexts_not_converged"] == 0


def test_ids_count_up_in_page_then_link_order(records: dict[str, list[dict[str, Any]]]) -> None:
    for split, split_rows in records.items():
        ordered = sorted(split_rows, key=lambda r: r["example_index"])
        assert [r["id"] for r in ordered] == [f"hansel-{split}-{i}" for i in range(len(ordered))]
        keys = [(r["page_id"], r["ordinal"]) for r in ordered]
        assert keys == sorted(keys)


def test_paragraph_context_is_the_scan_paragraph(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]
) -> None:
    pages = {p["page_id"]: p for p in rows(dirs["wiki"], "pages")}
    links = {(link["page_id"], link["ordinal"]): link for link in rows(dirs["wiki"], "links")}
    for r in records["train"][:300]:
        page, link = pages[r["page_id"]], links[(r["page_id"], r["ordinal"])]
        starts = page["paragraph_starts"]
        index = link["paragraph"]
        end = starts[index + 1] - 2 if index + 1 < len(starts) else len(page["text"])
        paragraph = page["text"][starts[index] : end].strip()
        assert r["text"] == t2s(paragraph)
        assert r["context_start"] + r["start"] == link["start"]


def test_sentence_and_window_contexts(records: dict[str, list[dict[str, Any]]]) -> None:
    by_key = {(r["page_id"], r["ordinal"]): r for r in records["train"]}
    sentences = build(("hansel-train",), params=("hansel.context=sentence",))
    for r in rows(sentences["hansel"], "train"):
        paragraph = by_key[(r["page_id"], r["ordinal"])]
        assert r["mention"] == paragraph["mention"] and r["text"] in paragraph["text"]
        assert r["text"][r["start"] : r["end"]] == r["mention"]
        inner = r["text"][: r["start"]]  # no sentence ends before the mention inside the context
        assert not any(mark in inner for mark in "。！？")
    windows = build(("hansel-train",), params=("hansel.context=window", "hansel.window=12"))
    for r in rows(windows["hansel"], "train"):
        assert r["start"] <= 12 and len(r["text"]) - r["end"] <= 12
        assert r["text"][r["start"] : r["end"]] == r["mention"]


def test_validation_size_is_a_parameter() -> None:
    three = build(("hansel-train",), params=("hansel.validation_docs=3",))
    assert len({r["page_id"] for r in rows(three["hansel"], "validation")}) == 3
    none = build(("hansel-train",), params=("hansel.validation_docs=0",))
    assert rows(none["hansel"], "validation") == []
    assert stats(none["hansel_mem_audit"])["leakage_pair_share_pct"] == 0.0


def test_leakage_share_of_validation_pairs_in_train(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]
) -> None:
    train_pairs = {(r["mention"], r["gold_id"]) for r in records["train"]}
    leaked = sum((r["mention"], r["gold_id"]) in train_pairs for r in records["validation"])
    audit = stats(dirs["hansel_mem_audit"])
    assert audit["leakage_rows"] == len(records["validation"])
    assert audit["leakage_pairs_in_train"] == leaked > 0
    assert audit["leakage_pair_share_pct"] == round(100 * leaked / len(records["validation"]), 4)


def test_the_audit_decides_every_validation_row_as_its_definitions_say(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path]
) -> None:
    """Strict mode (the default in builds; issue 21 item 5): Mem-Exact = the mention's only train
    entity is the gold; Mem-Freq = its most frequent train entity is (ties: a seeded draw), so
    Mem-Freq solves at least what Mem-Exact solves; every decision has a reason."""
    train: dict[str, Counter[str]] = {}
    for r in records["train"]:
        train.setdefault(r["mention"], Counter())[r["gold_id"]] += 1
    decisions = rows(dirs["hansel_mem_audit"], "decisions")
    assert [d["id"] for d in decisions] == [r["id"] for r in records["validation"]]
    audited = [d for d in decisions if d["in_test"]]
    assert audited and all(d["mem_exact_reason"] and d["mem_freq_reason"] for d in decisions)
    for d in audited:
        (mention,), (gold,) = d["spans"], d["labels"]
        counts = train.get(mention, Counter())
        assert d["mem_exact"] == (set(counts) == {gold})
        if not counts:
            assert d["mem_freq_reason"] == d["mem_exact_reason"] == "span_unseen_in_train"
        elif len([n for n in counts.values() if n == max(counts.values())]) == 1:
            assert d["mem_freq"] == (counts.most_common(1)[0][0] == gold)
            assert d["mem_freq_reason"] == ("train_argmax" if d["mem_freq"] else "train_argmax_differs")
        if d["mem_exact"]:
            assert d["mem_freq"]
    audit = stats(dirs["hansel_mem_audit"])
    assert audit["mem_freq_pct"] >= audit["mem_exact_pct"] > 0
    assert load_manifest(dirs["hansel_mem_audit"])["params"]["mode"] == "strict"


def test_shards_are_byte_identical_for_two_workers(dirs: dict[str, Path], tmp_path: Path) -> None:
    # The upstream (scan and kb) stages come from the one-worker build; every Hansel stage is
    # rebuilt with two workers.
    hansel_stages = sorted(s for s in dirs if s.startswith("hansel") or s == "wiki")
    assert len(hansel_stages) == 13  # hansel_kb among them (the few-shot and zero-shot texts)
    out = tmp_path / "w2"
    shutil.copytree(dirs["hansel"].parents[2], out)
    for stage in hansel_stages:
        shutil.rmtree(out / dirs[stage].relative_to(dirs["hansel"].parents[2]).parent)
    two = build(workers=2, out=out)
    for stage in hansel_stages:
        assert shard_hashes(dirs[stage]) == shard_hashes(two[stage]), stage
        assert load_manifest(dirs[stage])["fingerprint"] == load_manifest(two[stage])["fingerprint"]


def test_records_cut_in_pieces_are_the_records_cut_whole(
    dirs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reduce gives each split's records a few documents at a time (`train.PIECE_RECORDS`, a
    # memory bound, not part of what the stage computes): pieces of 2 records, a document each
    # here, write the bytes of the default's one piece per split and shard.
    from entbench.builders.hansel.stages import train

    pieces: list[int] = []
    records = train._records
    monkeypatch.setattr(train, "PIECE_RECORDS", 2)
    monkeypatch.setattr(train, "_records", lambda rows: pieces.append(len(rows)) or records(rows))
    out = tmp_path / "pieces"
    shutil.copytree(dirs["hansel"].parents[2], out)
    for stage in ("hansel", "hansel_mem_audit"):
        shutil.rmtree(out / dirs[stage].relative_to(dirs["hansel"].parents[2]).parent)
    again = build(out=out)
    # every document of the fixture has 2 records or more: one piece each
    documents = Counter(
        r["page_id"] for split in ("train", "validation") for r in rows(dirs["hansel"], split)
    )
    assert len(documents) > 3 and sorted(pieces) == sorted(documents.values())
    assert shard_hashes(again["hansel"]) == shard_hashes(dirs["hansel"])
    assert load_manifest(again["hansel"])["stats"] == load_manifest(dirs["hansel"])["stats"]


def test_hanziconv_gives_hansel_as_published(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path], tmp_path: Path
) -> None:
    """`hansel.converter=hanziconv`: the contexts converted as the Hansel paper did (footnote 3),
    the same records and offsets otherwise, and the card says which converter built them."""
    root = dirs["hansel"].parents[2]
    out = tmp_path / "hanziconv"
    shutil.copytree(root, out)
    converted = build(("hansel-train",), params=("hansel.converter=hanziconv",), out=out)
    manifest = load_manifest(converted["hansel"])
    assert manifest["params"]["converter"] == "hanziconv"  # a parameter: it enters the fingerprint
    assert manifest["fingerprint"] != load_manifest(dirs["hansel"])["fingerprint"]
    pages = {p["page_id"]: p["text"] for p in rows(dirs["wiki"], "pages")}
    changed = 0
    for split, opencc_rows in records.items():
        hanziconv_rows = rows(converted["hansel"], split)
        key = ("id", "start", "end", "gold_id", "page_id", "ordinal", "context_start")
        assert [tuple(r[k] for k in key) for r in hanziconv_rows] == [
            tuple(r[k] for k in key) for r in opencc_rows
        ]
        for r, o in zip(hanziconv_rows, opencc_rows, strict=True):
            assert r["text"][r["start"] : r["end"]] == r["mention"]
            original = pages[r["page_id"]][r["context_start"] : r["context_start"] + len(r["text"])]
            assert r["text"] == t2s_hanziconv(original) == HanziConv.toSimplified(original)
            changed += r["text"] != o["text"]
    assert changed > 0  # e.g. OpenCC keeps 乾 in 乾隆, HanziConv writes 干
    view = BuildView(out, "hansel-train")
    try:
        section = conversion_section(view)
    finally:
        view.close()
    assert section is not None
    text = "\n".join(str(block) for block in section.blocks)
    assert (
        "| `hansel` | HanziConv" in text and "Hansel as published: every converter here is HanziConv" in text
    )


def test_converter_none_keeps_the_traditional_text(
    records: dict[str, list[dict[str, Any]]], dirs: dict[str, Path], tmp_path: Path
) -> None:
    """`hansel.converter=none` on zhwiki: every context is the scan's text as it is (Traditional
    characters kept where the default converts them), the same records otherwise; the card says so."""
    out = tmp_path / "none"
    shutil.copytree(dirs["hansel"].parents[2], out)
    kept = build(("hansel-train",), params=("hansel.converter=none",), out=out)
    assert load_manifest(kept["hansel"])["stats"]["mentions_changed_by_t2s"] == 0
    pages = {p["page_id"]: p["text"] for p in rows(dirs["wiki"], "pages")}
    traditional = 0
    for split, converted_rows in records.items():
        for r, c in zip(rows(kept["hansel"], split), converted_rows, strict=True):
            key = ("id", "start", "end", "gold_id")
            assert [r[k] for k in key] == [c[k] for k in key]
            assert r["text"] == pages[r["page_id"]][r["context_start"] : r["context_start"] + len(r["text"])]
            assert t2s(r["text"]) == c["text"]
            traditional += r["text"] != c["text"]
    assert traditional > 50
    view = BuildView(out, "hansel-train")
    try:
        section = conversion_section(view)
    finally:
        view.close()
    assert section is not None and "| `hansel` | none: Traditional characters kept" in str(section.blocks)


def test_cli_build_on_the_bundled_config(run_cli: Callable[..., Any]) -> None:
    # The bundled config alone (the kb's real Wikidata pair; `make hansel` passes the zhwiki
    # fixture world's pair instead, see test_make_hansel.py).
    result = run_cli(["build", "hansel-train", "--out", str(out_dir(sources=()))])
    assert result.exit_code == 0, result.output
    built = build(("hansel-train",), sources=())
    records = rows(built["hansel"], "train") + rows(built["hansel"], "validation")
    known = {r["qid"] for r in rows(built["entity_diff"], "kb_entities") if r["in_known"]}
    assert {r["gold_id"] for r in records} <= known
    assert records and all(r["text"][r["start"] : r["end"]] == r["mention"] for r in records)


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("hansel.context=document", "hansel.context: expected one of 'paragraph', 'sentence', 'window'"),
        ("hansel.validation_docs=-1", "hansel.validation_docs: expected an integer >= 0, got '-1'"),
        ("hansel.converter=hanzi", "hansel.converter: expected one of 'opencc', 'hanziconv', 'none'"),
        ("hansel_fewshot.min_known_candidates=0", "min_known_candidates: expected an integer >= 1"),
        ("hansel_fewshot.max_p_unlinked=1.5", "max_p_unlinked: expected a number <= 1.0, got '1.5'"),
        ("hansel_zeroshot.size=-3", "hansel_zeroshot.size: expected an integer >= 0"),
    ],
)
def test_bad_parameters_are_user_errors(
    param: str, message: str, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    stage = param.partition(".")[0]
    target = {
        "hansel": "hansel-train",
        "hansel_fewshot": "hansel-fewshot",
        "hansel_zeroshot": "hansel-zeroshot",
    }[stage]
    result = run_cli(["build", target, "--param", param, "--out", str(tmp_path)])
    assert result.exit_code == 2 and message in result.output
