"""A test reader for each EntEval task file, following `ZeweiChu/EntEval:enteval/*.py` exactly.

Each function parses a file the way the loader's `loadFile` does (same file-opening call, so the
same line-splitting rules; same `strip`/`split` calls; same block bookkeeping) and returns what the
loader keeps, without the model-side code. It is written from the loaders' source, not copied: a
writer is right when these readers see what the writer meant.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any


def read_cap(path: Path) -> list[list[Any]]:
    """`CAPEval.loadFile`: blocks of two `sentence\\tstart\\tend` lines and a label line, each block
    kept only when the empty line after it is read (the counter starts at 1, then restarts at 0)."""
    data: list[list[Any]] = []
    item: list[Any] = []
    i = 1
    with codecs.open(str(path), "rb", "utf-8") as fin:
        for line in fin:
            if line.strip() == "":
                data.append(item)
                item = []
                i = 0
            elif i < 3:
                sentence, start, end = line.strip().split("\t")
                item.append([sentence.split(), int(start), int(end)])
            else:
                item.append(int(line.strip()))
            i += 1
    return data


def read_cerp(path: Path) -> list[tuple[int, list[Any], list[Any]]]:
    """`CERPEval.loadFile`: `label, s1, e1, s2, e2, sentence = line.strip().split("\\t")`."""
    rows = []
    with codecs.open(str(path), "rb", "utf-8") as f:
        for line in f:
            label, s1, e1, s2, e2, sentence = line.strip().split("\t")
            words = sentence.split()
            rows.append((int(label), [words, int(s1), int(e1)], [words, int(s2), int(e2)]))
    return rows


def read_ert(path: Path) -> list[tuple[str, list[str], list[str], list[str], list[str]]]:
    """`ERTEval.loadFile`: `label, e1, e2, d1, d2 = line.strip().split("\\t")` (names and
    descriptions both returned; the loader keeps one of the pairs)."""
    rows = []
    with codecs.open(str(path), "rb", "utf-8") as f:
        for line in f:
            label, entity1, entity2, desc1, desc2 = line.strip().split("\t")
            rows.append((label, entity1.split(), entity2.split(), desc1.split(), desc2.split()))
    return rows


def read_wikisrs(path: Path) -> list[tuple[float, list[str], list[str], list[str], list[str]]]:
    """`WikiSRSEval.loadFile`: five fields, `float(label)`."""
    rows = []
    with codecs.open(str(path), "rb", "utf-8") as f:
        for line in f:
            label, entity1, entity2, desc1, desc2 = line.strip().split("\t")
            rows.append((float(label), entity1.split(), entity2.split(), desc1.split(), desc2.split()))
    return rows


def read_kore(path: Path) -> tuple[list[list[str]], list[list[list[str]]], list[list[str]]]:
    """`KOREEval.loadFile`: `start, entity, desc = line.split("\\t")`; `@@` opens a group. Returns
    head descriptions, candidate descriptions per group, and (for the tests) the first fields of
    each group's candidate lines, which the loader ignores."""
    heads: list[list[str]] = []
    groups: list[list[list[str]]] = []
    firsts: list[list[str]] = []
    compare: list[list[str]] = []
    first: list[str] = []
    with open(str(path), encoding="utf8") as fin:  # io.open in the loader: the same function
        for line in fin:
            start, _entity, desc = line.split("\t")
            if start == "@@":
                if len(compare) > 0:
                    groups.append(compare)
                    firsts.append(first)
                heads.append(desc.split())
                compare, first = [], []
            else:
                compare.append(desc.split())
                first.append(start)
        if len(compare) > 0:
            groups.append(compare)
            firsts.append(first)
    return heads, groups, firsts


def kore_gold_scores(groups: list[list[list[str]]]) -> list[int]:
    """The gold scores `KOREEval.run` builds: `np.arange(n)[::-1]` per group, flattened (it stacks
    all groups into one array, so every group must have the same n)."""
    sizes = {len(g) for g in groups}
    assert len(sizes) == 1, f"groups of different sizes {sorted(sizes)}: the loader cannot stack them"
    n = sizes.pop()
    return [score for _ in groups for score in range(n - 1, -1, -1)]


def read_rare(path: Path) -> tuple[list[int], list[list[list[Any]]], list[list[list[str]]]]:
    """`RareEval.loadFile` with `process_desc`: a block ends at an empty line; line 0 holds the
    tab-separated context sentences (the one with **blank** is cut to 150 words around it), lines
    1-4 `entity\\tdesc`, line 5 the label."""
    labels: list[int] = []
    contexts: list[list[list[Any]]] = []
    descs: list[list[list[str]]] = []
    data: list[str] = []
    with open(path) as f:
        for line in f:
            if line.strip() == "":
                contexts.append([])
                descs.append([])
                words, index = _process_desc(data[0])
                for context in data[1:5]:
                    entity, desc = context.split("\t")
                    entity_words = entity.split()
                    new_words = words[:index] + entity_words + words[index + 1 :]
                    contexts[-1].append([new_words, index, index + len(entity_words)])
                    descs[-1].append(desc.split())
                labels.append(int(data[5]))
                data = []
            else:
                data.append(line.strip())
    return labels, contexts, descs


def _process_desc(desc: str) -> tuple[list[str], int]:
    words: list[str] = []
    for sent in desc.split("\t"):
        if "**blank**" in sent:
            words = sent.split()
            break
    index = words.index("**blank**")
    words = words[max(0, index - 150) : index + 150]
    return words, words.index("**blank**")


def read_conll_yago(path: Path) -> tuple[list[list[Any]], list[list[list[Any]]]]:
    """`ConllYagoEval.loadFile`: `s, e, sent, _, entities = line.strip().split("\\t", 4)`, each
    entity `prior|||name|||desc` split with `maxsplit=2`; the first candidate is labelled 1."""
    contexts: list[list[Any]] = []
    descs: list[list[list[Any]]] = []
    with open(path) as f:
        for line in f:
            s, e, sent, _, entities = line.strip().split("\t", 4)
            candidates = []
            for entity in entities.split("\t"):
                prior, name, desc = entity.split("|||", 2)
                candidates.append([desc.split(), float(prior), 0, name.split("_")])
            candidates[0][2] = 1
            contexts.append([sent.split(), int(s), int(e)])
            descs.append(candidates)
    return contexts, descs


def read_et(task_path: Path) -> tuple[list[str], dict[str, list[list[Any]]]]:
    """`ETEval.load_labels` and `ETEval.loadFile`: `labels.txt` (one label a line, stripped) gives the
    ids; each split line `line.strip().split("\\t")` is `sentence, s, e, *types`; the loader keeps
    one row with the positive label ids (y = 1) and one with every other label's id (y = 0). Returns
    the labels and, per split file (`train`, `valid`, `test`), the positive rows
    `[words, s, e, label ids]` (every type must be in `labels.txt`: the loader would raise otherwise)."""
    id2label: list[str] = []
    with open(task_path / "labels.txt") as fin:
        for line in fin:
            id2label.append(line.strip())
    label2id = {label: i for i, label in enumerate(id2label)}
    splits: dict[str, list[list[Any]]] = {}
    for split in ("train", "valid", "test"):
        rows: list[list[Any]] = []
        with open(task_path / f"{split}.txt", encoding="utf-8") as fin:
            for line in fin:
                fields = line.strip().split("\t")
                entity = fields[0].split()
                s, e = int(fields[1]), int(fields[2])
                rows.append([entity, s, e, [label2id[label] for label in fields[3:]]])
        splits[split] = rows
    return id2label, splits


def read_efp(task_path: Path) -> dict[str, list[tuple[str, list[str], int, int]]]:
    """`EFPEval.loadFile`: `label, entity, s, e = line.strip().split("\\t")` per line of
    `train.txt`, `dev.txt`, `test.txt`; the loader keeps `entity.split()` with the offsets (context
    use) or alone (description use). Returns (label, words, s, e) per split."""
    splits: dict[str, list[tuple[str, list[str], int, int]]] = {}
    for split in ("train", "dev", "test"):
        rows = []
        with open(task_path / f"{split}.txt", encoding="utf-8") as fin:
            for line in fin:
                label, entity, s, e = line.strip().split("\t")
                rows.append((label, entity.split(), int(s), int(e)))
        splits[split] = rows
    return splits
