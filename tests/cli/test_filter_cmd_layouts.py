"""`entbench filter mem` on the paper's other public layouts: CoNLL-2003 NER and CoNLL-2000 chunking
(hand-written files in each layout: the corpora are licensed), CoNLL-U XPOS on real UD EWT, the
10% dev rule and the paper's Table 2 row in the card."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench.filters.memorization import percent
from entbench.readers.edge_probing.conll import read_conll_tags
from entbench.readers.edge_probing.items import read_jiant
from tests.cli.test_filter_cmd import SMALL_TEST, SMALL_TRAIN, digests
from tests.filters.test_memorization_ewt import brute_eptest, brute_strict

LAYOUTS = Path(__file__).resolve().parents[2] / "fixtures" / "edge-probing-layouts"
NER = LAYOUTS / "conll2003"
CHUNK = LAYOUTS / "conll2000"
HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")
RunCli = Callable[[list[str]], Result]


def run(run_cli: RunCli, train: Path, test: Path, out: Path, *extra: str) -> Result:
    result = run_cli(["filter", "mem", "--train", str(train), "--test", str(test), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result


def token_lines(path: Path) -> list[list[str]]:
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row and row[0] != "-DOCSTART-"]


@pytest.mark.parametrize(("mode", "exact"), [("eptest", 12), ("strict", 7)])
def test_conll2003_layout_audits_test_tokens_and_reports_percentages(
    tmp_path: Path, run_cli: RunCli, mode: str, exact: int
) -> None:
    out = tmp_path / "ner"
    run(run_cli, NER / "train.txt", NER / "test.txt", out, "--input-format", "conll2003-ner", "--mode", mode)
    report = json.loads((out / "report.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    # 19 test tokens; "Nordic Cup" (MISC) is the one entity type train never has: 2 tokens dropped.
    assert len(token_lines(NER / "test.txt")) == stats["test"]["items"] == 19
    unseen = pq.read_table(out / "unseen_label.parquet").to_pydict()
    assert (unseen["span1_text"], unseen["detail"]) == (["Nordic", "Cup"], ["B-MISC", "I-MISC"])
    assert report["n_test"] == 19 - 2 == stats["n_test"]
    assert stats["train"]["items"] == len(token_lines(NER / "train.txt")) == 33
    # Mem-Exact by hand: eptest, a (token, IOB2 tag) pair seen in train (Oslo/B-LOC, Bergen/B-LOC,
    # flights, Marla/B-PER, Quint/I-PER, Bergen/B-ORG, Quint/B-PER, on, Monday and three "."):
    # 12; strict, a token with that one train tag (flights, Marla, on, Monday, the "."s): 7.
    pairs = [
        [(it.span_texts, it.labels) for it in read_conll_tags(NER / f, "conll2003-ner")]
        for f in ("train.txt", "test.txt")
    ]
    brute = (brute_eptest if mode == "eptest" else brute_strict)(*pairs)
    assert brute[:2] == (17, exact)
    assert tuple(stats["removed"][h] for h in HEURISTICS) == brute[1:]
    for heuristic in HEURISTICS:  # every report value is a percentage of the audited tokens
        solved = stats["removed"][heuristic]
        assert report[heuristic] == percent(solved, 17) == round(100 * solved / 17, 2)
        assert 0.0 <= report[heuristic] <= 100.0
    assert stats["iob2_converted"] == {"train": 10, "test": 5}


def test_iob1_b_tag_gives_a_new_entity_in_the_filtered_jiant_sets(tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "ner"
    run(run_cli, NER / "train.txt", NER / "test.txt", out, "--input-format", "conll2003-ner")
    kept = pq.read_table(out / "test.parquet").to_pydict()
    first = [
        (t, lb[0])
        for t, lb, s in zip(kept["span1_text"], kept["labels"], kept["sentence_index"], strict=True)
        if s == 0
    ]
    assert first[:2] == [("Oslo", "B-LOC"), ("Bergen", "B-LOC")]  # IOB1 "I-LOC B-LOC": two entities
    filtered = read_jiant(out / "mem_freq" / "filtered.jsonl")
    assert ("Bergen", ("B-LOC",)) in {(it.span1_text, it.labels) for it in filtered}
    assert {it.labels[0] for it in filtered} <= {"O", "B-LOC", "B-PER", "I-PER", "B-ORG"}


def test_dev_from_train_reserves_a_tenth_of_the_sentences_and_audits_against_the_rest(
    tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "chunk"
    args = ("--input-format", "conll2000-chunk", "--dev-from-train", "0.1", "--paper-row", "conll-chunking")
    printed = run(run_cli, CHUNK / "train.txt", CHUNK / "test.txt", out, *args).output
    stats = json.loads((out / "stats.json").read_text())
    dev, left = read_jiant(out / "dev.jsonl"), read_jiant(out / "train.jsonl")
    train = read_conll_tags(CHUNK / "train.txt", "conll2000-chunk")
    assert len({it.text for it in dev}) == 1 and len({it.text for it in left}) == 9  # 10% of 10 sentences
    assert sorted((it.text, it.span1, it.labels) for it in dev + left) == sorted(
        (it.text, it.span1, it.labels) for it in train
    )
    assert stats["dev_from_train"] == {
        "fraction": 0.1,
        "seed": 0,
        "train_sentences": 10,
        "dev_sentences": 1,
        "dev_items": len(dev),
        "dev_unseen_label_drops": 0,
        "dev_items_written": len(dev),
        "train_items_left": len(left),
    }
    assert stats["train_items_audited"] == len(left) == len(train) - len(dev)
    assert stats["n_test"] == len(token_lines(CHUNK / "test.txt")) - 1  # "up" B-PRT: no PRT in train
    report = json.loads((out / "report.json").read_text())
    assert f"train 71 items ({len(left)} left after {len(dev)} reserved as dev)" in printed
    exact = [stats["removed"]["mem_exact"], stats["n_test"], f"{report['mem_exact']:.2f}", "89.89"]
    assert ["Mem-Exact", *map(str, exact)] in [line.split() for line in printed.splitlines()]
    assert "paper: CoNLL-Chunking, the paper's Table 2 (test split, 47,377 items in Table 1)" in printed
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| paper: CoNLL-Chunking (Table 2, test split) | 47,377 | 89.89% | 57.72% | 33.88% |" in card
    assert (
        f"drew 1 of the 10 train sentences (fraction 0.1, `random.Random(0).sample`): {len(dev)} items"
        in card
    )
    assert "no dev split (the paper reserves 10% of train)" in card
    assert "| `dev.jsonl` |" in card and "| paper_row | `CoNLL-Chunking` |" in card
    # The card's command writes the same files again; a run without the rule drops the split files.
    [command] = [line for line in card.splitlines() if line.startswith("entbench filter mem ")]
    assert "--dev-from-train 0.1 --dev-seed 0 --paper-row CoNLL-Chunking" in command
    before = digests(out)
    assert run_cli(shlex.split(command)[1:]).exit_code == 0
    assert digests(out) == before
    run(run_cli, CHUNK / "train.txt", CHUNK / "test.txt", out, "--input-format", "conll2000-chunk")
    assert not (out / "dev.jsonl").exists() and not (out / "train.jsonl").exists()
    assert json.loads((out / "stats.json").read_text())["dev_from_train"] is None


def test_the_card_sets_the_papers_row_beside_this_runs_figures(tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "xpos"
    run(run_cli, SMALL_TRAIN, SMALL_TEST, out, "--input-format", "conllu-xpos", "--paper-row", "EWT-PoS")
    report = json.loads((out / "report.json").read_text())
    card = (out / "README.md").read_text(encoding="utf-8")
    ours = " | ".join(f"{report[h]:.2f}%" for h in HEURISTICS)
    assert f"| this run (mode `eptest`) | {report['n_test']:,} | {ours} |" in card
    assert "| paper: EWT-PoS (Table 2, test split) | 25,097 | 89.73% | 42.85% | 48.03% |" in card
    points = " | ".join(
        f"{report[h] - paper:+.2f} points" for h, paper in zip(HEURISTICS, (89.73, 42.85, 48.03), strict=True)
    )
    assert f"| this run - paper | {report['n_test'] - 25_097:+,} | {points} |" in card
    assert "Table 1 counts train 204,607, test 25,097, dev 25,150" in card
    assert "Table 2's shares are of the test items left after the unseen-label drop" in card
    assert "read with `--input-format conllu-upos`; this run read `conllu-xpos`" in card


def test_conllu_xpos_audits_the_upos_tokens_with_other_labels(tmp_path: Path, run_cli: RunCli) -> None:
    """EWT (v2.2 dev as train, v2.16 dev as test): the same test tokens, PTB tags, another Mem-Exact."""
    runs = {}
    for fmt in ("conllu-upos", "conllu-xpos"):
        run(run_cli, SMALL_TRAIN, SMALL_TEST, tmp_path / fmt, "--input-format", fmt)
        runs[fmt] = (
            json.loads((tmp_path / fmt / "report.json").read_text()),
            json.loads((tmp_path / fmt / "stats.json").read_text()),
            pq.read_table(tmp_path / fmt / "test.parquet").to_pylist(),
        )
    (upos, upos_stats, upos_items), (xpos, xpos_stats, xpos_items) = runs["conllu-upos"], runs["conllu-xpos"]
    assert upos_stats["test"]["items"] == xpos_stats["test"]["items"] == 25_147 + 359 + 4
    by_index = {row["source_index"]: row for row in upos_items}
    shared = [(by_index[row["source_index"]], row) for row in xpos_items if row["source_index"] in by_index]
    assert len(shared) > 25_000
    assert all(
        (u["text"], u["span1_start"], u["span1_text"]) == (x["text"], x["span1_start"], x["span1_text"])
        for u, x in shared
    )
    assert sum(u["labels"] != x["labels"] for u, x in shared) > 20_000  # "_" range lines aside
    assert upos["mem_exact"] != xpos["mem_exact"]


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (("--dev-from-train", "1.5"), 2, "--dev-from-train must be a fraction between 0 and 1"),
        (("--paper-row", "CoNLL-2002-NER"), 2, "Invalid value for '--paper-row'"),
        (("--input-format", "conll2003-ner"), 1, "at byte offset 0: expected 4 whitespace-separated fields"),
    ],
)
def test_bad_options_and_layouts_exit_with_one_line(
    run_cli: RunCli, tmp_path: Path, extra: tuple[str, ...], code: int, message: str
) -> None:
    result = run_cli(
        [
            "filter",
            "mem",
            "--train",
            str(SMALL_TRAIN),
            "--test",
            str(SMALL_TEST),
            "--out",
            str(tmp_path),
            *extra,
        ]
    )
    assert result.exit_code == code
    assert message in result.output and "Traceback" not in result.output


def test_the_cli_offers_every_format_the_readers_have() -> None:
    from entbench.cli.filter_cmd import _INPUT_FORMATS
    from entbench.readers.edge_probing.formats import INPUT_FORMATS

    assert tuple(INPUT_FORMATS) == _INPUT_FORMATS
