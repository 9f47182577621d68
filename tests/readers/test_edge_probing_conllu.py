"""CoNLL-U -> edge-probing items: real UD EWT counts, EPtest's token-line quirks (C2-C5), strict CoNLL-U."""

from __future__ import annotations

import gzip
import random
from collections import defaultdict
from pathlib import Path

import pytest

from entbench.errors import DataError
from entbench.readers.edge_probing.items import EPItem, read_conllu

EWT = Path(__file__).resolve().parents[2] / "fixtures" / "ud-ewt"
V22_TRAIN = EWT / "v2.2" / "en_ewt-ud-train.conllu.gz"
V22_DEV = EWT / "v2.2" / "en_ewt-ud-dev.conllu.gz"
V216_DEV = EWT / "v2.16" / "en_ewt-ud-dev.conllu.gz"

# A sentence of EWT v2.16 dev with a multi-word token: `29-30 didn't` = `29 did` + `30 n't`.
DIDNT_SENT_ID = "weblog-blogspot.com_gettingpolitical_20030906235000_ENG_20030906_235000-0002"


def sentence(items: list[EPItem], sent_id: str) -> list[EPItem]:
    return [it for it in items if it.info == f'{{"sent_id": "{sent_id}"}}']


@pytest.mark.slow  # reads EWT train twice
def test_eptest_counts_match_the_papers_table_1() -> None:
    """Table 1: EWT-PoS train 204,607 and dev 25,150; EWT-Syn-Dep-Pred train 383,462, dev 46,155.

    UD v2.2 has 204,585 words in train and 25,148 in dev: the extra 22 and 2 are its empty nodes,
    which EPtest's converter turns into items (C2); the dep-pred counts need EPtest's negatives (C4).
    """
    assert len(read_conllu(V22_TRAIN, "pos")) == 204_607
    assert len(read_conllu(V22_DEV, "pos")) == 25_150
    assert len(read_conllu(V22_TRAIN, "dep-pred")) == 383_462
    assert len(read_conllu(V22_DEV, "dep-pred")) == 46_155
    assert len(read_conllu(V22_DEV, "pos", policy="strict")) == 25_148


def test_c2_eptest_turns_range_lines_and_empty_nodes_into_items() -> None:
    eptest = read_conllu(V216_DEV, "pos")
    strict = read_conllu(V216_DEV, "pos", policy="strict")
    # v2.16 dev: 25,147 words, 359 multi-word-token range lines, 4 empty nodes.
    assert (len(strict), len(eptest)) == (25_147, 25_147 + 359 + 4)
    words = [(it.span1_text, it.labels) for it in sentence(strict, DIDNT_SENT_ID)]
    lines = [(it.span1_text, it.labels) for it in sentence(eptest, DIDNT_SENT_ID)]
    assert words[27:30] == [("they", ("PRON",)), ("did", ("AUX",)), ("n't", ("PART",))]
    assert lines[27:31] == [("they", ("PRON",)), ("didn't", ("_",)), ("did", ("AUX",)), ("n't", ("PART",))]
    assert ("_",) not in {it.labels for it in strict}


def test_c3_eptest_head_index_is_head_minus_one_whatever_the_lines_before() -> None:
    eptest = sentence(read_conllu(V216_DEV, "dep-cls"), DIDNT_SENT_ID)
    strict = sentence(read_conllu(V216_DEV, "dep-cls", policy="strict"), DIDNT_SENT_ID)
    # "n't" (HEAD 29 = "did"): strict pairs it with "did"; EPtest takes line 28 (0-based), which
    # is the range line "didn't", because the range line shifted every later token by one.
    assert [(it.span1_text, it.span2_text, it.labels) for it in strict if it.span1_text == "n't"] == [
        ("n't", "did", ("advmod",))
    ]
    assert [(it.span1_text, it.span2_text, it.labels) for it in eptest if it.span1_text == "n't"] == [
        ("n't", "didn't", ("advmod",))
    ]


def test_c4_eptest_negatives_come_from_a_fresh_random0_per_arc() -> None:
    items = read_conllu(V22_DEV, "dep-pred")
    by_sentence: dict[int, list[EPItem]] = defaultdict(list)
    for item in items:
        by_sentence[item.sentence_index].append(item)
    checked = 0
    for members in by_sentence.values():
        n_tokens = len(members[0].text.split(" "))
        heads = {it.span1[0]: it.span2[0] for it in members if it.labels == ("1",) and it.span2}
        for it in members:
            if it.labels != ("0",) or it.span2 is None:
                continue
            dependent = it.span1[0]
            candidates = sorted(set(range(n_tokens)) - {heads[dependent], dependent})
            assert it.span2[0] == random.Random(0).sample(candidates, 1)[0]
            checked += 1
    assert checked == 46_155 - 23_146  # every negative: 23,146 arcs, 137 of them without one


def test_strict_negatives_use_one_generator_and_never_pick_the_head_or_the_dependent() -> None:
    eptest = read_conllu(V22_DEV, "dep-pred")
    strict = read_conllu(V22_DEV, "dep-pred", policy="strict")
    negatives = [it for it in strict if it.labels == ("0",)]
    positives = {(it.sentence_index, it.span1): it.span2 for it in strict if it.labels == ("1",)}
    assert all(it.span2 not in (it.span1, positives[it.sentence_index, it.span1]) for it in negatives)
    eptest_negatives = [(it.sentence_index, it.span1, it.span2) for it in eptest if it.labels == ("0",)]
    strict_negatives = [(it.sentence_index, it.span1, it.span2) for it in negatives]
    assert eptest_negatives != strict_negatives  # a real draw, not EPtest's fixed pick
    assert read_conllu(V22_DEV, "dep-pred", policy="strict", negative_seed=0) == strict  # seeded


SAMPLE = """# sent_id = s1
# text = New  York rocks
1\tNew  York\tNew York\tPROPN\tNNP\t_\t2\tnsubj\t2:nsubj\t_
2\trocks\trock\tVERB\tVBZ\t_\t0\troot\t0:root\t_

"""


def test_c5_eptest_splits_fields_on_two_spaces_too(tmp_path: Path) -> None:
    path = tmp_path / "s.conllu"
    path.write_text(SAMPLE, encoding="utf-8")
    # conllu's parse_line splits "New  York" into two fields: the lemma "New York" lands in UPOS.
    assert [(it.span1_text, it.labels) for it in read_conllu(path, "pos")] == [
        ("New", ("New York",)),
        ("rocks", ("VERB",)),
    ]
    assert [(it.span1_text, it.labels) for it in read_conllu(path, "pos", policy="strict")] == [
        ("New  York", ("PROPN",)),
        ("rocks", ("VERB",)),
    ]


def test_gzip_and_plain_input_give_the_same_items(tmp_path: Path) -> None:
    plain = tmp_path / "dev.conllu"
    plain.write_bytes(gzip.decompress(V22_DEV.read_bytes()))
    assert read_conllu(plain, "dep-cls") == read_conllu(V22_DEV, "dep-cls")


@pytest.mark.parametrize(
    ("line", "policy", "message"),
    [
        ("1\tNew\tnew\tPROPN", "eptest", "expected 10 CoNLL-U fields"),
        ("x\tNew\tnew\tPROPN\tNNP\t_\t0\troot\t_\t_", "eptest", "invalid ID 'x'"),
        ("1\tNew\tnew\tPROPN\tNNP\t_\tnine\troot\t_\t_", "strict", "invalid HEAD 'nine'"),
        ("1\tNew\tnew\tPROPN\tNNP\t_\t7\troot\t_\t_", "strict", "HEAD 7 is outside the sentence"),
        ("2\tNew\tnew\tPROPN\tNNP\t_\t0\troot\t_\t_", "strict", "word ID '2' out of sequence"),
    ],
)
def test_malformed_lines_raise_data_errors_with_offsets(
    tmp_path: Path, line: str, policy: str, message: str
) -> None:
    path = tmp_path / "bad.conllu"
    path.write_text(f"# sent_id = a\n{line}\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        read_conllu(path, "dep-cls", policy=policy)  # type: ignore[arg-type]
    assert info.value.path == str(path)
    assert info.value.offset == len("# sent_id = a\n")


def test_xpos_items_are_the_pos_items_with_the_xpos_label() -> None:
    """EWT's XPOS column holds Penn Treebank tags: same tokens, finer labels (PTB-PoS's layout)."""
    for policy in ("eptest", "strict"):
        upos = read_conllu(V216_DEV, "pos", policy=policy)  # type: ignore[arg-type]
        xpos = read_conllu(V216_DEV, "xpos", policy=policy)  # type: ignore[arg-type]
        assert [it._replace(labels=()) for it in xpos] == [it._replace(labels=()) for it in upos]
        assert upos[:7] != xpos[:7]
    words = sentence(read_conllu(V216_DEV, "xpos", policy="strict"), DIDNT_SENT_ID)
    assert [(it.span1_text, it.labels) for it in words[27:30]] == [
        ("they", ("PRP",)),
        ("did", ("VBD",)),
        ("n't", ("RB",)),
    ]
    lines = sentence(read_conllu(V216_DEV, "xpos"), DIDNT_SENT_ID)
    assert lines[28].span1_text == "didn't" and lines[28].labels == ("_",)  # C2: the range line
    tags = {it.labels[0] for it in read_conllu(V22_DEV, "xpos", policy="strict")}
    assert {"NN", "NNP", "VBZ", "VBD", "JJ", "IN", "DT", "PRP"} <= tags and "NOUN" not in tags


PTB_CONLLX = Path(__file__).resolve().parents[2] / "fixtures" / "edge-probing-layouts" / "ptb-conllx"


def test_xpos_reads_the_fifth_column_of_a_ptb_conllx_file() -> None:
    """PTB converted to dependencies (CoNLL-X, ten columns: EPtest's `PosPenn` input) reads as CoNLL-U."""
    items = read_conllu(PTB_CONLLX / "test.conllx", "xpos", policy="strict")
    assert [(it.span1_text, it.labels[0]) for it in items] == [
        ("Bonds", "NNS"),
        ("fell", "VBD"),
        (".", "."),
        ("The", "DT"),
        ("index", "NN"),
        ("fell", "VBD"),
        ("sharply", "RB"),
        (".", "."),
    ]
    arcs = read_conllu(PTB_CONLLX / "test.conllx", "dep-cls", policy="strict")
    assert [(it.span1_text, it.span2_text, it.labels[0]) for it in arcs][:2] == [
        ("Bonds", "fell", "nsubj"),
        (".", "fell", "punct"),
    ]


def test_a_word_without_xpos_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "no-xpos.conllu"
    first = "1\tNew\tnew\tPROPN\tNNP\t_\t2\tnsubj\t_\t_\n"
    path.write_text(f"{first}2\trocks\trock\tVERB\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    for policy in ("eptest", "strict"):
        with pytest.raises(DataError, match="a word without XPOS") as info:
            read_conllu(path, "xpos", policy=policy)  # type: ignore[arg-type]
        assert info.value.offset == len(first)
    assert [it.labels for it in read_conllu(path, "pos")] == [("PROPN",), ("VERB",)]
