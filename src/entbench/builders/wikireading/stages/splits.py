"""Stage `wikireading`: the benchmark splits `train`, `valid`, `test` (spec §6).

Every document goes to one split by a stable hash of its page id (`entbench.builders.wikireading.splits`),
so no document is in two splits whatever the shard or worker counts. Presets: `paper` (70/10/20,
§2.2, the default), `released` (85/10/5, the public release's counts) and `recycled`
(`property-holdout`: a share of the properties only in test, as WikiReading Recycled).

Map tasks take one shard of `wikireading_instances` each; rows are routed by document id. In
`property-holdout` mode the held-out set is chosen once, in `map_tasks`, from the number of
documents of every property over all instance shards, and handed to every task.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.wikireading.splits import (
    PAPER_RATIOS,
    RELEASED_RATIOS,
    SPLITS,
    assign_splits,
    check_ratios,
    held_out_properties,
)
from entbench.engine.inputs import Span, row_group_spans
from entbench.engine.shards import atomic_write_text, shards_of
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
    UpstreamOutput,
)
from entbench.engine.stats import Stats
from entbench.schemas import wikireading as schema

#: Uncompressed instance bytes of one map task, more than the engine's default span
#: (`engine.inputs.SPAN_BYTES`; the figures below are for this size, not a multiple of that). A
#: task's light work (a split per document) is routed to every shard, so a build writes
#: tasks x shards x 3 spilled pieces, which grow with the square of the dump until the shards are
#: many enough to be grouped (`BuildOptions.shuffle_groups`): at 1 GB of enwiki (240 tasks, 23
#: shards) they were a fifth of the stage (17.0 -> 13.3 s from 8 to 16 MB, one worker; 3.9 -> 3.3 s
#: at 256 MB), and the task's peak is the same (at 32 MB it was +60 MiB).
SPAN_BYTES = 16 << 20

HELD_OUT_FILE = "_held_out_properties.json"  # a sidecar: `_` keeps Parquet readers off it


@dataclass(frozen=True)
class SplitParams(Params):
    """`preset`: paper (70/10/20), released (85/10/5) or recycled (property-holdout); explicit
    fields override it. `mode`: "document" or "property-holdout"; `ratios`: train/valid/test
    shares of documents; `seed`: of the split hash; `holdout_share`: share of all properties held
    out (Recycled: 20%); `holdout_max_documents`: only properties with at most this many
    documents may be held out (0 = any), as Recycled chose rare ones to keep test small."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "paper": {"mode": "document", "ratios": list(PAPER_RATIOS)},
        "released": {"mode": "document", "ratios": list(RELEASED_RATIOS)},
        "recycled": {"mode": "property-holdout", "holdout_share": 0.2},
    }

    preset: Annotated[
        str,
        Meta(
            description=(
                "`paper` (70/10/20, as the paper's text), `released` (85/10/5, as the public "
                "release), `recycled` (property hold-out, as WikiReading Recycled); explicit "
                "parameters override it"
            )
        ),
    ] = "paper"
    mode: Annotated[
        Literal["document", "property-holdout"],
        Meta(description="`document` or `property-holdout` (a share of the properties appears only in test)"),
    ] = "document"
    ratios: Annotated[
        tuple[float, ...],
        Meta(description="train/valid/test shares of the documents"),
    ] = PAPER_RATIOS
    seed: Annotated[
        int,
        Meta(description="seed of the split hash"),
    ] = 0
    holdout_share: Annotated[
        float,
        Meta(ge=0, le=1, description="`property-holdout`: share of the properties held out"),
    ] = 0.2
    holdout_max_documents: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "`property-holdout`: only properties with at most this many documents may be held out"
                " (0 = any)"
            ),
        ),
    ] = 0
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 8 MB of the instances"),
    ] = 0

    def __post_init__(self) -> None:
        if self.preset not in self.PRESETS:
            raise ValueError(f"preset must be one of {sorted(self.PRESETS)}, got {self.preset!r}")
        check_ratios(self.ratios)
        super().__post_init__()


def property_document_counts(instances: UpstreamOutput) -> dict[str, int]:
    """Number of documents per property over every instance shard (one instance per pair)."""
    counts: Counter[str] = Counter()
    for path in instances.files("instances"):
        column = pq.read_table(path, columns=["property"]).column("property")
        counts.update(column.to_pylist())
    return dict(sorted(counts.items()))


def choose_held_out(params: SplitParams, instances: UpstreamOutput) -> frozenset[str]:
    """The held-out properties of a `property-holdout` build (empty in `document` mode)."""
    if params.mode != "property-holdout":
        return frozenset()
    counts = property_document_counts(instances)
    return held_out_properties(counts, params.holdout_share, params.seed, params.holdout_max_documents)


class WikiReadingSplit(Stage[SplitParams]):
    """Instances -> `train`, `valid`, `test` tables in the released column shape."""

    name = "wikireading"
    version = 3  # 2: `_held_out_properties.json`; 3: row groups of at most ~8 MB of values
    layer = "benchmarks"
    inputs = ("wikireading_instances",)
    default_num_shards = 0
    shard_key = "document_id"
    description = "WikiReading splits by document: train, valid, test"
    progress_unit = "task"
    progress_items = "instances"

    def outputs(self, params: SplitParams) -> list[Output]:
        """The three splits, each sorted by (document_id, property)."""
        return [Output(name, schema.SPLIT, ("document_id", "property")) for name in SPLITS]

    def shard_inputs(self, params: SplitParams) -> tuple[tuple[str, str], ...]:
        """Sized from the instances."""
        return (("wikireading_instances", "instances"),)

    def map_tasks(self, ctx: StageContext[SplitParams]) -> Iterator[MapTask]:
        """One task per span of an instance shard (a range of whole documents), each told the
        held-out properties."""
        params = ctx.params
        instances = ctx.inputs["wikireading_instances"]
        held_out = sorted(choose_held_out(params, instances))
        for span in row_group_spans(instances.files("instances"), SPAN_BYTES, key="document_id"):
            yield MapTask(span.task_id, {**span.meta(), "held_out": held_out})

    def map(
        self, ctx: StageContext[SplitParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Assign one span's documents to splits and route the rows by document."""
        params = ctx.params
        stats = Stats()
        span = Span.from_meta(task.meta)
        path = ctx.inputs["wikireading_instances"].files("instances")[span.file]
        instances = pq.read_table(path, filters=span.key_filters("document_id"))
        held_out = frozenset(task.meta["held_out"])
        parts = assign_splits(instances, params.ratios, params.seed, held_out)
        for name in SPLITS:
            table = _split_rows(parts[name])
            stats.add(f"{name}_instances", table.num_rows)
            stats.add(f"{name}_documents", len(pc.unique(table.column("document_id"))))
            if held_out:
                in_held = pc.is_in(
                    table.column("property"), value_set=pa.array(sorted(held_out), pa.string())
                )
                stats.add(f"{name}_held_out_instances", pc.sum(in_held).as_py() or 0)
            routes = shards_of(table.column("_route").to_pylist(), ctx.num_shards)
            sink.emit_sharded(name, table.drop_columns(["_route"]), routes)
        progress(1, instances.num_rows)
        return stats

    def finalize(self, ctx: StageContext[SplitParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """List the held-out properties (empty in `document` mode) next to the shards."""
        params = ctx.params
        held_out = sorted(choose_held_out(params, ctx.inputs["wikireading_instances"]))
        atomic_write_text(directory / HELD_OUT_FILE, json.dumps(held_out, indent=1) + "\n")
        return {"files": [HELD_OUT_FILE], "held_out_properties": len(held_out)}


def _split_rows(instances: pa.Table) -> pa.Table:
    """Instance rows in the released shape: key "<qid>-<property>", the label as the question."""
    qids = instances.column("qid")
    properties = instances.column("property")
    keys = pc.binary_join_element_wise(qids, properties, "-")
    route = pc.cast(instances.column("document_id"), pa.string())
    columns = {
        "key": keys,
        "document_id": instances.column("document_id"),
        "qid": qids,
        "property": properties,
        "property_label": instances.column("property_label"),
        "question": instances.column("property_label"),
        "answers": instances.column("answers"),
        "document": instances.column("document"),
        "_route": route,
    }
    out_schema = schema.SPLIT.append(pa.field("_route", pa.string(), nullable=False))
    return pa.table([columns[f.name] for f in out_schema], schema=out_schema)
