"""`MemAuditStage`: the memorisation audit (spec §7) of a built benchmark's evaluation split against
its training split, with the heuristics `entbench filter mem` runs (`builders.edge_probing.filter_mem`).

It writes one decision row per evaluation row, the counts in its stats and the percentages in its
manifest stats and `_report.json`. WikiReading and Hansel register one per audited pair.

In `strict` mode (the default) the audit is sharded by span key, so no task holds a whole split:
an ordered pass over the evaluation split (`builders.edge_probing.draws`) decides from label
counts alone which items are tested and draws their random numbers in evaluation order, as the
unsharded audit would; map tasks route train items (counted per task) and evaluation rows by key;
each reducer indexes its keys' train counts and runs the heuristics' own code on its items with
their numbers replayed, so the decisions are those of `filters.memorization.audit` on the whole
splits. Shards are sized from the two tables; a shard holds every row of its keys, so a reducer
decides and writes its rows a slice at a time (`InOrder`): a frequent key (a WikiReading question,
a sixth of a split) costs a slice of memory, not its rows. `eptest` mode (EPtest's quirks key the
heuristics differently, and its label numbering follows all of train) runs as one task, one shard.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.edge_probing.decisions import decision_table
from entbench.builders.edge_probing.draws import Replay, item_sql, write_draws
from entbench.builders.edge_probing.filter_mem import check_mode
from entbench.builders.edge_probing.reduce_rows import (
    EVAL,
    TRAIN,
    in_eval_order,
    slices,
    streamed_keys,
    take,
    valid_keys,
)
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import Span, iter_span, row_group_spans
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import (
    BucketSink,
    InOrder,
    MapTask,
    Output,
    Params,
    ProgressFn,
    SourceInfo,
    Stage,
    StageContext,
)
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.filters.memorization import (
    DEFAULT_SEED,
    HEURISTICS,
    Item,
    KeyMemo,
    StrictIndex,
    audit_with_index,
    build_index,
    mem_exact,
    mem_freq,
    mem_uniform,
    percent,
)
from entbench.filters.memorization_index import Mode, checked
from entbench.filters.memorization_reasons import UNSEEN_LABEL
from entbench.gc_pause import gc_paused
from entbench.schemas import edge_probing as schema

#: The audit's report (`filter mem`'s `report.json`), a sidecar: `_` keeps Parquet readers off it.
REPORT_FILE = "_report.json"
#: The schemas of the map tables `TRAIN` and `EVAL`: train items with their count in a task, evaluation rows.
TRAIN_ROWS = pa.schema(
    [
        pa.field("_key", pa.string(), nullable=False),
        pa.field("_spans", pa.list_(pa.string()), nullable=False),
        pa.field("_labels", pa.list_(pa.string()), nullable=False),
        pa.field("_count", pa.int64(), nullable=False),
    ]
)
#: (Underscored, so that no id column of the evaluation table can clash with them.)
EVAL_ROWS = pa.schema(
    [
        pa.field("_eval_index", pa.int64(), nullable=False),
        pa.field("_key", pa.string(), nullable=False),
        pa.field("_valid", pa.bool_(), nullable=False),
        pa.field("_spans", pa.list_(pa.string()), nullable=False),
        pa.field("_labels", pa.list_(pa.string()), nullable=False),
    ]
)
DRAWS_FILE = "draws.arrow"
#: Evaluation rows a reducer turns into decision rows at a time.
REDUCE_SLICE_ROWS = 4_096
#: Joins a two-span key's texts for routing (a character span texts do not hold).
KEY_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class MemAuditParams(Params):
    """`mode`: strict (the paper's prose; the default of audits inside builds, whose labels are
    entities or answer sets) or eptest (EPtest's code, the paper's Table 2; the default of `entbench
    filter mem`); `seed`: the heuristics' random seed (EPtest: `random.seed(30)`)."""

    mode: Annotated[
        Mode,
        Meta(description="`strict` or `eptest` (`entbench filter mem` defaults to `eptest`)"),
    ] = "strict"
    seed: Annotated[
        int,
        Meta(description="the heuristics' seed (the paper's code seeds 30)"),
    ] = DEFAULT_SEED


@dataclass(eq=False)
class MemAuditStage(Stage[MemAuditParams]):
    """Audit a built benchmark's evaluation split for train memorisation (Mem-Exact/Freq/Uniform).

    Construct one per audited pair and register it, e.g. in a Hansel builder's pipeline (which
    reaches this module through `registry.lazy_module`, as `mem_audit`)::

        register_stage("hansel_mem_audit", lambda name: mem_audit.MemAuditStage(
            name,
            train=("hansel_train", "examples"),
            evaluation=("hansel_validation", "examples"),
            span_columns=("mention",),
            label_column="qid",
            id_fields=(pa.field("id", pa.string(), nullable=False),),
        ))

    `span_columns` are one or two columns (their values as strings are the span texts);
    `label_column` holds a string or a list of strings; `id_fields` name and type the evaluation
    table's identifying columns, copied into the `decisions` table. Train and evaluation rows are
    read in shard order, then row order (the order the draws follow). Every decision row says why,
    per heuristic (`<heuristic>_reason`, codes in `entbench.filters.memorization_reasons`), and the
    stats count each heuristic's reasons (`<heuristic>_<reason>`). Rows whose span or label is null are
    skipped and counted (`*_rows_null`); evaluation rows dropped before the heuristics (a label
    train never has) get a decision row with `in_test` false; the heuristic columns of both are
    null, their reasons `span_or_label_null` and `label_unseen_in_train`.

    The fields are the instance's identity (`Stage.identity`), so changing which tables or columns
    a registered audit reads rebuilds it.
    """

    # 2: a reason on every decision, kept ones too; 3: `_report.json`; 4: `dropped_label_unseen_in_train`
    # counts rows (it counted labels: a multi-answer row once per unseen answer)
    version = 4
    layer = "benchmarks"
    default_num_shards = 0
    description = "Train/test memorisation audit (Mem-Exact, Mem-Freq, Mem-Uniform)"
    progress_unit = "task"
    progress_items = "items"

    stage_name: str
    _: KW_ONLY
    train: tuple[str, str]
    evaluation: tuple[str, str]
    span_columns: tuple[str, ...]
    label_column: str
    id_fields: tuple[pa.Field, ...]

    def __post_init__(self) -> None:
        if len(self.span_columns) not in (1, 2):
            raise ValueError(f"{self.stage_name}: one or two span columns, got {list(self.span_columns)}")
        if not self.id_fields:
            raise ValueError(
                f"{self.stage_name}: id_fields must name the evaluation table's identifying columns"
            )
        self.inputs = tuple(dict.fromkeys((self.train[0], self.evaluation[0])))

    def outputs(self, params: MemAuditParams) -> list[Output]:
        """One table, `decisions`, keyed by the evaluation order (and EPtest's duplicate copies)."""
        return [Output("decisions", schema.mem_decisions_schema(self.id_fields), ("eval_index", "copy"))]

    def columns(self, split: str) -> tuple[tuple[str, ...], str]:
        """(span columns, label column) of the train or the evaluation table."""
        return self.span_columns, self.label_column

    def resolve_num_shards(self, params: MemAuditParams, sources: Mapping[str, SourceInfo]) -> int:
        """One shard in `eptest` mode; else sized from the two tables (`shard_inputs`)."""
        return 1 if params.mode == "eptest" else 0

    def shard_inputs(self, params: MemAuditParams) -> tuple[tuple[str, str], ...]:
        """The train and evaluation tables."""
        return (self.train, self.evaluation)

    def map_schemas(self, params: MemAuditParams) -> dict[str, pa.Schema]:
        """`decisions` (eptest mode's one task), train items and evaluation rows (strict mode)."""
        return {
            "decisions": schema.mem_decisions_schema(self.id_fields),
            TRAIN: TRAIN_ROWS,
            EVAL: pa.schema([*EVAL_ROWS, *self.id_fields]),
        }

    def map_tasks(self, ctx: StageContext[MemAuditParams]) -> Iterator[MapTask]:
        """`eptest`: one task. `strict`: the ordered pass (`draws`), then one task per span of row
        groups of each table (an evaluation span knows the `eval_index` of its first row)."""
        params = ctx.params
        check_mode(params.mode)
        if params.mode == "eptest":
            yield MapTask("all")
            return
        train_files = ctx.inputs[self.train[0]].files(self.train[1])
        eval_files = ctx.inputs[self.evaluation[0]].files(self.evaluation[1])
        self._check_columns(ctx)
        with stage_connection(ctx, tasks=1, ordered=True) as con:  # its results are read in order
            write_draws(
                con,
                ctx.scratch / DRAWS_FILE,
                train=(train_files, *self.columns("train")),
                evaluation=(eval_files, *self.columns("eval")),
                seed=params.seed,
            )
        for i in range(len(train_files)):  # one upstream shard each: counted by DuckDB
            yield MapTask(f"t{i:05d}", {"file": i, "side": TRAIN, "tasks": len(train_files)})
        offsets = _row_offsets(eval_files)
        for span in row_group_spans(eval_files):
            yield MapTask(
                f"e{span.task_id}",
                {**span.meta(), "side": EVAL, "base": offsets[span.file][span.row_groups[0]]},
            )

    def map(
        self, ctx: StageContext[MemAuditParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """`eptest`: the whole audit. `strict`: route a span's items by span key."""
        if task.task_id == "all":
            tables, stats = self._audit_whole(ctx)
            sink.emit("decisions", 0, tables["decisions"])
            progress(1, tables["decisions"].num_rows)
            return stats
        stats = Stats()
        if task.meta["side"] == TRAIN:
            rows = self._count_train(ctx, int(task.meta["file"]), int(task.meta["tasks"]), stats)
        else:
            span = Span.from_meta(task.meta)
            path = ctx.inputs[self.evaluation[0]].files(self.evaluation[1])[span.file]
            ids = [f.name for f in self.id_fields]
            columns: dict[str, list[Any]] = {name: [] for name in (*EVAL_ROWS.names, *ids)}
            base = int(task.meta["base"])
            for offset, (row_ids, item) in enumerate(self._read(path, span.row_groups, ids, stats, "eval")):
                columns["_eval_index"].append(base + offset)
                columns["_key"].append("" if item is None else _key(item))
                columns["_valid"].append(item is not None)
                columns["_spans"].append([] if item is None else list(item.spans))
                columns["_labels"].append([] if item is None else list(item.labels))
                for name in ids:
                    columns[name].append(row_ids[name])
            rows = pa.table(columns, schema=pa.schema([*EVAL_ROWS, *self.id_fields]))
            stats.add("eval_rows", rows.num_rows)
        sink.emit_by_key(str(task.meta["side"]), rows, "_key", ctx.num_shards)
        progress(1, rows.num_rows)
        return stats

    def reduce(
        self, ctx: StageContext[MemAuditParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table | InOrder], Stats]:
        """`strict`: index the shard's train keys, decide its evaluation rows with their draws."""
        params = ctx.params
        if params.mode == "eptest":
            return {}, Stats()  # the one task's decisions, as mapped
        stats = Stats()
        # A shard holds every evaluation row of its span keys, and a frequent key (a WikiReading
        # question) grows with the dump: both tables are read from the map spills a batch at a time
        # when the rows come in `eval_index` order (map task order, as the runner gives them), not
        # gathered (at 16S a question's shard held 12 MiB, twice while gathering, all its reduce).
        # The rows are decided and turned into decision rows a slice at a time as they are written
        # (in `eval_index` order, the output's): only a slice's items, draws, decisions and rows
        # are held. Slices do not show in the output: it is cut again, draws replay in row order.
        batches = getattr(tables, "batches", None)
        wanted = streamed_keys(batches) if callable(batches) else None
        train: Iterable[pa.Table]
        if callable(batches) and wanted is not None:
            given: Iterator[pa.Table] = (pa.Table.from_batches([b]) for b in batches(EVAL))
            train = (pa.Table.from_batches([b]) for b in batches(TRAIN))
        else:
            rows = take(tables, EVAL)
            if not in_eval_order(rows.column("_eval_index").to_numpy()):
                rows = rows.sort_by("_eval_index")
            wanted, given, train = valid_keys(rows), iter([rows]), [take(tables, TRAIN)]
        parts = slices(given, REDUCE_SLICE_ROWS, pa.schema([*EVAL_ROWS, *self.id_fields]))
        index, train_items = self._index_train(train, wanted)
        stats.add("train_items", train_items)
        draws = pa.ipc.open_file(pa.memory_map(str(ctx.scratch / DRAWS_FILE))).read_all()
        memo = KeyMemo()
        what = f"{ctx.stage} shard {shard}"
        pieces = (self._decide_slice(part, draws, index, memo, stats, what) for part in parts)
        return {"decisions": InOrder(pieces)}, stats

    def _index_train(self, train: Iterable[pa.Table], wanted: pa.Array) -> tuple[StrictIndex, int]:
        """The train counts of the `wanted` keys, and how many train items the shard was sent; read
        and filtered a slice at a time (a key's distinct labels grow with the dump)."""
        train_items = 0
        index = StrictIndex()
        with gc_paused():
            for table in train:
                train_items += int(pc.sum(table.column("_count")).as_py() or 0)
                for start in range(0, table.num_rows, REDUCE_SLICE_ROWS):
                    part = table.slice(start, REDUCE_SLICE_ROWS)
                    part = part.filter(pc.is_in(part.column("_key"), value_set=wanted))
                    for spans, labels, count in zip(
                        *(part.column(c).to_pylist() for c in ("_spans", "_labels", "_count")), strict=True
                    ):
                        index.add(checked(Item(tuple(spans), tuple(labels))), count)
        return index, train_items

    def _decide_slice(
        self, part: pa.Table, draws: pa.Table, index: StrictIndex, memo: KeyMemo, stats: Stats, what: str
    ) -> pa.Table:
        """The decision rows of a slice of a shard's evaluation rows (in evaluation order), their
        draws replayed: the slices of a shard consume its draws in the order the whole shard does."""
        at = pa.array(part.column("_eval_index").to_numpy())
        kept = draws.column("kept").take(at).to_pylist()
        x_freq = draws.column("x_freq").take(at).to_pylist()
        x_uniform = draws.column("x_uniform").take(at).to_pylist()
        unseen = draws.column("unseen").take(at).to_pylist()
        evaluation = [
            Item(tuple(spans), tuple(labels)) if valid else None
            for spans, labels, valid in zip(
                *(part.column(c).to_pylist() for c in ("_spans", "_labels", "_valid")), strict=True
            )
        ]
        tested = [i for i, k in enumerate(kept) if k]
        items = [checked(evaluation[i]) for i in tested]  # type: ignore[arg-type]
        freq = Replay([x for i in tested if (x := x_freq[i]) is not None])
        uniform = Replay([x for i in tested if (x := x_uniform[i]) is not None])
        decisions = {
            "mem_exact": mem_exact(index, items, memo=memo),
            "mem_freq": mem_freq(index, items, rng=freq, memo=memo),
            "mem_uniform": mem_uniform(index, items, rng=uniform, memo=memo),
        }
        freq.check_consumed(f"{what} mem_freq")
        uniform.check_consumed(f"{what} mem_uniform")
        ids = {f.name: part.column(f.name).to_pylist() for f in self.id_fields}
        table = decision_table(
            self.id_fields,
            [{name: ids[name][r] for name in ids} for r in range(part.num_rows)],
            part.column("_eval_index").to_pylist(),
            evaluation,
            {row: [k] for k, row in enumerate(tested)},
            {r: labels for r, labels in enumerate(unseen) if labels},
            decisions,
            stats,
        )
        stats.add("test_items", len(tested))
        # rows, not labels: a multi-answer row with two unseen answers is one row dropped
        stats.add(f"dropped_{UNSEEN_LABEL}", sum(1 for labels in unseen if labels))
        for heuristic in HEURISTICS:
            stats.add(f"removed_{heuristic}", sum(1 for d in decisions[heuristic] if d.solved))
        return table

    def _count_train(
        self, ctx: StageContext[MemAuditParams], file: int, tasks: int, stats: Stats
    ) -> pa.Table:
        """One train shard's items counted by (span texts, sorted labels), keyed for routing.

        Which rows are items is `draws.item_sql`'s rule, the one `_read` applies row by row."""
        path = ctx.inputs[self.train[0]].files(self.train[1])[file]
        spans, labels, valid = item_sql([path], *self.columns("train"))
        with stage_connection(ctx, tasks=tasks, ordered=False) as con:
            null_rows = con.execute(
                f"SELECT count(*) FROM read_parquet($file) WHERE NOT {valid}", {"file": path}
            ).fetchall()[0][0]
            counted = con.sql(
                "SELECT array_to_string(s, chr(31)) AS _key, s AS _spans, l AS _labels, count(*) AS _count "
                f"FROM (SELECT {spans} AS s, list_sort({labels}) AS l FROM read_parquet($file) "
                f"WHERE {valid}) GROUP BY s, l",
                params={"file": path},
            ).to_arrow_table()
        if null_rows:
            stats.add("train_rows_null", int(null_rows))
        return counted.cast(TRAIN_ROWS)

    def _audit_whole(self, ctx: StageContext[MemAuditParams]) -> tuple[dict[str, pa.Table], Stats]:
        """Index train, read the evaluation split, run the heuristics, emit a decision per row."""
        params = ctx.params
        stats = Stats()
        mode = check_mode(params.mode)
        train_items = (
            item for _, item in self._rows(ctx, self.train, (), stats, "train") if item is not None
        )
        index = build_index(train_items, mode)
        ids: list[dict[str, Any]] = []
        evaluation: list[Item | None] = []
        for row_ids, item in self._rows(
            ctx, self.evaluation, [f.name for f in self.id_fields], stats, "eval"
        ):
            ids.append(row_ids)
            evaluation.append(item)
        present = [i for i, item in enumerate(evaluation) if item is not None]
        present_items = [item for item in evaluation if item is not None]
        result = audit_with_index(index, present_items, seed=params.seed)
        kept = [present[k] for k in result.selection.kept]
        copies: dict[int, list[int]] = {}
        for k, row in enumerate(kept):
            copies.setdefault(row, []).append(k)
        unseen: dict[int, list[str]] = {}
        for k, label in result.selection.dropped:
            unseen.setdefault(present[k], []).append(label)
        table = decision_table(
            self.id_fields,
            ids,
            list(range(len(evaluation))),
            evaluation,
            copies,
            unseen,
            result.decisions,
            stats,
        )
        stats.add("train_items", index.n_items)
        stats.add("eval_rows", len(evaluation))
        stats.add("test_items", result.n_test)
        stats.add(f"dropped_{UNSEEN_LABEL}", len(unseen))  # rows, not labels
        for heuristic in HEURISTICS:
            stats.add(f"removed_{heuristic}", result.removed(heuristic))
        return {"decisions": table}, stats

    def _check_columns(self, ctx: StageContext[MemAuditParams]) -> None:
        """UserError naming the first table that lacks a column the audit reads."""
        for split, (stage, table) in (("train", self.train), ("eval", self.evaluation)):
            spans, label = self.columns(split)
            wanted = [*spans, label, *([f.name for f in self.id_fields] if split == "eval" else [])]
            for path in ctx.inputs[stage].files(table):
                names = pq.read_schema(path).names
                missing = [c for c in dict.fromkeys(wanted) if c not in names]
                if missing:
                    raise UserError(f"{self.stage_name}: {stage}.{table} has no column(s) {missing} ({path})")

    def _rows(
        self,
        ctx: StageContext[MemAuditParams],
        ref: tuple[str, str],
        id_columns: Sequence[str],
        stats: Stats,
        split: str,
    ) -> Iterator[tuple[dict[str, Any], Item | None]]:
        """(ids, item) per row of an upstream table, in shard order; item None if span/label is null."""
        stage, table = ref
        for path in ctx.inputs[stage].files(table):
            groups = range(pq.ParquetFile(path).num_row_groups)
            yield from self._read(path, groups, id_columns, stats, split)

    def _read(
        self, path: str, row_groups: Sequence[int], id_columns: Sequence[str], stats: Stats, split: str
    ) -> Iterator[tuple[dict[str, Any], Item | None]]:
        """(ids, item) per row of some row groups of one shard file, in order."""
        span_columns, label_column = self.columns(split)
        columns = list(dict.fromkeys([*id_columns, *span_columns, label_column]))
        missing = [c for c in columns if c not in pq.read_schema(path).names]
        if missing:
            ref = self.train if split == "train" else self.evaluation
            raise UserError(f"{self.stage_name}: {ref[0]}.{ref[1]} has no column(s) {missing} ({path})")
        for batch in iter_span(path, row_groups, columns, batch_rows=1 << 16):
            data = batch.to_pydict()
            for r in range(batch.num_rows):
                spans = [data[c][r] for c in span_columns]
                label = data[label_column][r]
                labels = (label,) if isinstance(label, str) else tuple(label or ())
                ok = bool(labels) and all(v is not None for v in (*spans, *labels))
                if not ok:
                    stats.add(f"{split}_rows_null")
                item = Item(tuple(str(s) for s in spans), tuple(str(lb) for lb in labels)) if ok else None
                yield {c: data[c][r] for c in id_columns}, item

    def finalize(self, ctx: StageContext[MemAuditParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """Write `_report.json` (the `filter mem` report) and add the three percentages to the stats."""
        params = ctx.params
        n_test = stats.get("test_items", 0)
        report: dict[str, Any] = {"n_test": n_test}
        for heuristic in HEURISTICS:
            report[heuristic] = percent(stats.get(f"removed_{heuristic}", 0), n_test)
        report["mode"] = params.mode
        atomic_write_text(directory / REPORT_FILE, json.dumps(report, indent=2) + "\n")
        return {"files": [REPORT_FILE], **{f"{h}_pct": report[h] for h in HEURISTICS}}


def _key(item: Item) -> str:
    """What routes an item: its span texts (a key's train counts and test items meet in a shard)."""
    return KEY_SEPARATOR.join(item.spans)


def _row_offsets(files: Sequence[str]) -> list[list[int]]:
    """The evaluation index of the first row of every row group of every file (shard order)."""
    offsets: list[list[int]] = []
    total = 0
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        starts = []
        for g in range(metadata.num_row_groups):
            starts.append(total)
            total += metadata.row_group(g).num_rows
        offsets.append(starts)
    return offsets
