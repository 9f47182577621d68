"""`MemAuditStage` built on a small upstream: real UD EWT dev files turned into items tables.

The upstream stage below stands in for a benchmark builder (Hansel, WikiReading): it writes an
items table sharded by id. The audit reads its train and evaluation tables and must agree with
the pure filter run on the same rows in the same order, and with `entbench filter mem` on the
order-free heuristic (Mem-Exact).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench.builders.edge_probing.filter_mem import run_filter_mem
from entbench.builders.edge_probing.stages import mem_audit
from entbench.builders.edge_probing.stages.mem_audit import MemAuditStage
from entbench.engine.config import BuildConfig
from entbench.engine.executors import make_executor
from entbench.engine.manifest import load_manifest
from entbench.engine.runner import Builder
from entbench.engine.shards import split_by_shard
from entbench.engine.stage import BuildOptions, Output, Params, Stage, StageContext, UpstreamOutput
from entbench.engine.stats import Stats
from entbench.filters.memorization import Item, audit, percent
from entbench.filters.memorization_reasons import UNSEEN_LABEL
from entbench.readers.edge_probing.items import read_conllu

EWT = Path(__file__).resolve().parents[3] / "fixtures" / "ud-ewt"
TRAIN = EWT / "v2.2" / "en_ewt-ud-dev.conllu.gz"  # small real files: v2.2 dev plays "train"
EVAL = EWT / "v2.16" / "en_ewt-ud-dev.conllu.gz"
ITEMS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("word", pa.string(), nullable=False),
        pa.field("upos", pa.string(), nullable=False),
    ]
)
HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")


@dataclass(frozen=True)
class UdItemsParams(Params):
    num_shards: int = 3


class UdItemsStage(Stage):
    """A CoNLL-U source as a `pos` items table (id, word, upos), sharded by id."""

    version = 1
    layer = "normalized"
    params_type = UdItemsParams
    default_num_shards = 3
    shard_key = "id"

    def __init__(self, name: str, source: str) -> None:
        super().__init__(name)
        self.sources = (source,)

    def outputs(self, params: Params) -> list[Output]:
        return [Output("items", ITEMS, ("id",))]

    def shard(self, ctx: StageContext, shard: int) -> tuple[dict[str, pa.Table], Stats]:
        table = items_table(ctx.sources[self.sources[0]].path)
        part = split_by_shard(table, "id", ctx.num_shards).get(shard, ITEMS.empty_table())
        return {"items": part}, Stats(items=part.num_rows)


@functools.cache
def items_table(path: str) -> pa.Table:
    """The `pos` items of a CoNLL-U file as an items table: read once per process, not once per
    shard of each of this module's builds (this scaffolding is not what the tests are about)."""
    items = read_conllu(path, "pos")
    return pa.Table.from_pydict(
        {
            "id": [f"{it.sentence_index:05d}-{it.target_index:03d}" for it in items],
            "word": [it.span1_text for it in items],
            "upos": [it.labels[0] for it in items],
        },
        schema=ITEMS,
    )


class SmallShardsAudit(MemAuditStage):
    """The audit with shards of ~40 KB of input: the UD tables (~200 KB each) make ~10 shards."""

    shard_input_bytes = 40 << 10


def audit_stage(kind: type[MemAuditStage] = MemAuditStage) -> MemAuditStage:
    return kind(
        "ud_mem_audit",
        train=("ud_train_items", "items"),
        evaluation=("ud_eval_items", "items"),
        span_columns=("word",),
        label_column="upos",
        id_fields=(pa.field("id", pa.string(), nullable=False),),
    )


def build(
    out: Path,
    *,
    workers: int = 1,
    params: dict[str, dict[str, Any]] | None = None,
    kind: type[MemAuditStage] = MemAuditStage,
) -> list[str]:
    """Build the three stages in order; returns the log lines."""
    log: list[str] = []
    config = BuildConfig(sources={"ud_train": str(TRAIN), "ud_eval": str(EVAL)}, params=params or {})
    builder = Builder(out, config, BuildOptions(workers=workers, progress=False), log=log.append)
    stages: Sequence[Stage] = (
        UdItemsStage("ud_train_items", "ud_train"),
        UdItemsStage("ud_eval_items", "ud_eval"),
        audit_stage(kind),
    )
    executor = make_executor("local", workers)
    done: dict[str, UpstreamOutput] = {}
    try:
        for stage in stages:
            plan = builder.plan(stage, {name: done[name] for name in stage.inputs})
            done[stage.stage_name] = builder.run(plan, executor)
    finally:
        executor.close()
    return log


def stage_dir(out: Path, layer: str, name: str) -> Path:
    (directory,) = (out / layer / name).glob("v*-*")
    return directory


def rows_in_order(directory: Path) -> list[dict[str, Any]]:
    return [row for f in sorted(directory.glob("part-*.parquet")) for row in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built with the audit's defaults (strict mode, seed 30)."""
    out = tmp_path_factory.mktemp("audit")
    build(out)
    return out


@pytest.fixture(scope="module")
def built_eptest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit_eptest")
    build(out, params={"ud_mem_audit": {"mode": "eptest", "seed": 5}})
    return out


def test_decisions_match_the_filter_on_the_same_rows(built: Path) -> None:
    train = rows_in_order(stage_dir(built, "normalized", "ud_train_items"))
    evaluation = rows_in_order(stage_dir(built, "normalized", "ud_eval_items"))
    expected = audit(
        [Item((r["word"],), (r["upos"],)) for r in train],
        [Item((r["word"],), (r["upos"],)) for r in evaluation],
        mode="strict",
        seed=30,
    )
    directory = stage_dir(built, "benchmarks", "ud_mem_audit")
    decisions = rows_in_order(directory)
    assert [d["id"] for d in decisions] == [r["id"] for r in evaluation]  # one row per eval row, in order
    in_test = [d for d in decisions if d["in_test"]]
    assert len(in_test) == expected.n_test
    manifest = load_manifest(directory)
    for heuristic in HEURISTICS:
        got = [(d[heuristic], d[f"{heuristic}_reason"], d[f"{heuristic}_detail"]) for d in in_test]
        assert got == [(x.solved, x.reason, x.detail) for x in expected.decisions[heuristic]]
        # Every kept or solved decision has a reason, and the stats count them.
        reasons = Counter(x.reason for x in expected.decisions[heuristic])
        assert len(reasons) >= 2
        assert {r: manifest["stats"][f"{heuristic}_{r}"] for r in reasons} == reasons
    dropped = [d for d in decisions if not d["in_test"]]
    assert all(d["unseen_labels"] and d["mem_exact"] is None for d in dropped)
    assert {d["mem_freq_reason"] for d in dropped} == {UNSEEN_LABEL}
    assert len(dropped) == len(expected.selection.dropped) == len(evaluation) - expected.n_test

    report = json.loads((directory / "_report.json").read_text())
    assert report == expected.report() and report["mode"] == "strict"
    assert manifest["params"] == {"mode": "strict", "seed": 30}
    assert manifest["stats"]["test_items"] == expected.n_test
    for heuristic in HEURISTICS:
        assert manifest["stats"][f"removed_{heuristic}"] == expected.removed(heuristic)
        assert manifest["stats"][f"{heuristic}_pct"] == percent(expected.removed(heuristic), expected.n_test)
    assert "_report.json" in manifest["files"]


def test_mem_exact_agrees_with_filter_mem_on_the_source_files(built_eptest: Path, tmp_path: Path) -> None:
    """Mem-Exact does not depend on row order, so the CLI on the CoNLL-U files must agree."""
    cli = run_filter_mem(train=TRAIN, test=EVAL, out=tmp_path, input_format="conllu-upos")
    manifest = load_manifest(stage_dir(built_eptest, "benchmarks", "ud_mem_audit"))
    assert manifest["stats"]["removed_mem_exact"] == cli.result.removed("mem_exact")
    # v2.16 dev: 25,510 items, of which the 359 range lines (UPOS "_") have a label v2.2 never has.
    assert manifest["stats"]["test_items"] == cli.result.n_test == 25_510 - 359
    assert manifest["stats"]["dropped_label_unseen_in_train"] == 359


def test_two_workers_write_the_same_bytes_and_a_rerun_is_up_to_date(built: Path, tmp_path: Path) -> None:
    build(tmp_path, workers=2)
    for layer, name in (("normalized", "ud_train_items"), ("benchmarks", "ud_mem_audit")):
        one, two = (
            load_manifest(stage_dir(built, layer, name)),
            load_manifest(stage_dir(tmp_path, layer, name)),
        )
        assert one["fingerprint"] == two["fingerprint"]
        assert one["outputs"] == two["outputs"]  # shard files with their sha256
    log = build(tmp_path)
    assert any(line.startswith("ud_mem_audit: up to date") for line in log)


def test_eptest_mode_is_a_parameter(built: Path, built_eptest: Path) -> None:
    eptest = load_manifest(stage_dir(built_eptest, "benchmarks", "ud_mem_audit"))
    strict = load_manifest(stage_dir(built, "benchmarks", "ud_mem_audit"))
    assert eptest["params"] == {"mode": "eptest", "seed": 5}
    assert strict["fingerprint"] != eptest["fingerprint"]
    # The mode changes the heuristics, not the rows: the same items, more solved by EPtest's
    # Mem-Exact (the pair in train, other labels or not), fewer by its Mem-Freq (F3: no draw for a
    # span with one train label).
    assert strict["stats"]["test_items"] == eptest["stats"]["test_items"]
    assert strict["stats"]["removed_mem_exact"] < eptest["stats"]["removed_mem_exact"]
    assert strict["stats"]["removed_mem_freq"] > eptest["stats"]["removed_mem_freq"]
    assert eptest["stats"]["mem_freq_train_distribution_flat"] > 0


def test_bad_mode_is_a_user_error(tmp_path: Path) -> None:
    from entbench.errors import UserError

    with pytest.raises(
        UserError, match=r"^ud_mem_audit\.mode: expected one of 'eptest', 'strict', got 'loose'$"
    ):
        build(tmp_path, params={"ud_mem_audit": {"mode": "loose"}})


def test_a_sharded_audit_decides_as_the_whole_splits_do(built: Path, tmp_path: Path) -> None:
    """Strict mode shards the audit by span key (the draws replayed from one ordered pass): with
    ~10 shards on two workers, every decision row, stat and report is what one shard gives."""
    build(tmp_path, workers=2, kind=SmallShardsAudit)
    one, many = (
        stage_dir(built, "benchmarks", "ud_mem_audit"),
        stage_dir(tmp_path, "benchmarks", "ud_mem_audit"),
    )
    sharded = load_manifest(many)
    assert load_manifest(one)["num_shards"] == 1 and sharded["num_shards"] >= 8
    by_index = sorted(rows_in_order(many), key=lambda d: (d["eval_index"], d["copy"]))
    assert by_index == rows_in_order(one)
    assert sharded["stats"] == load_manifest(one)["stats"]
    assert (many / "_report.json").read_text() == (one / "_report.json").read_text()
    # draws really happened in several shards
    solved_by_draw = {
        i
        for i, f in enumerate(sorted(many.glob("part-*.parquet")))
        for d in pq.read_table(f).to_pylist()
        if d["mem_uniform_reason"] in ("uniform_draw_matched", "uniform_draw_missed")
    }
    assert len(solved_by_draw) >= 4


def test_decision_rows_built_in_slices_are_the_rows_built_at_once(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reducer decides a shard's rows and writes their decision rows a slice at a time (its
    25k evaluation rows are several slices, and its most frequent span keys have rows, and draws,
    in every one): the same shard files as one slice holding them all, so a frequent key's memory
    is a slice's, not the key's."""
    directory = stage_dir(built, "benchmarks", "ud_mem_audit")
    manifest = load_manifest(directory)
    assert manifest["num_shards"] == 1 and manifest["stats"]["eval_rows"] > 4 * mem_audit.REDUCE_SLICE_ROWS
    decisions = rows_in_order(directory)
    top, _ = Counter(tuple(d["spans"]) for d in decisions).most_common(1)[0]
    drawn = {
        d["eval_index"] // mem_audit.REDUCE_SLICE_ROWS
        for d in decisions
        if tuple(d["spans"]) == top
        and d["mem_uniform_reason"] in ("uniform_draw_matched", "uniform_draw_missed")
    }
    assert len(drawn) >= 4  # the frequent key's draws replayed across the slices
    monkeypatch.setattr(mem_audit, "REDUCE_SLICE_ROWS", 1 << 30)
    build(tmp_path)
    whole = load_manifest(stage_dir(tmp_path, "benchmarks", "ud_mem_audit"))
    assert whole["outputs"] == manifest["outputs"]  # shard files with their sha256
    assert whole["stats"] == manifest["stats"]
