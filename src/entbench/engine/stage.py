"""The stage contract: a frozen spec plus up to three plain functions.

A stage turns sources (dumps) and upstream stages' shards into `num_shards` Parquet shards
per output table. Work comes in one of two shapes:

* **shard stages** implement `shard(ctx, k)`: build the rows of output shard `k` directly
  (typically from shard `k` of a co-partitioned upstream stage, or a DuckDB query);
* **map/reduce stages** implement `map_tasks(ctx)` and `map(ctx, task, sink)`: each map task
  (a byte range of a dump, a block of decompressed lines, one global query) routes its rows
  into shard buckets; `reduce(ctx, k, tables)` may then dedupe or aggregate bucket `k`.

Either way the framework sorts each shard by the table's `sort_by` (a unique key, checked) and
writes it with fixed writer options, so the bytes depend on the inputs and parameters only,
never on how many workers ran or in which order tasks finished.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, ClassVar, Generic

import numpy as np
import pyarrow as pa
from typing_extensions import TypeVar

from entbench.engine.external_sort import SORT_MEMORY_BYTES
from entbench.engine.shards import atomic_write_text, column_shards, split_by_shard_ids
from entbench.engine.stats import Stats
from entbench.errors import DataError

LAYERS = ("normalized", "derived", "benchmarks")


@dataclass(frozen=True)
class Params:
    """Base class of a stage's parameters: a frozen dataclass whose every field enters the fingerprint.

    Each field is declared once, with everything known about it: its type (constraints and help
    in an `Annotated[T, msgspec.Meta(ge=…, description=…)]`, the choices in a `Literal`), and its
    default. `msgspec.convert` checks the constraints when the parameters are read
    (`engine.config.make_params`); `docs/stages.md`'s parameter tables are generated from the
    declarations (`cards.param_tables`). Field types must be JSON-representable: bool, int, float,
    str, or tuples of them. A field named
    `num_shards` overrides the stage's default shard count (0 = let the stage decide from its inputs).
    Fields named in `PATH_FIELDS` are file paths: a relative one is taken relative to the config file
    that gives it (the current directory for `--param`), as `[sources]` are.
    """

    PATH_FIELDS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        """The check every stage's `num_shards` shares: 0 (automatic) or more. A subclass with
        checks of its own calls this from its `__post_init__`."""
        if getattr(self, "num_shards", 0) < 0:
            raise ValueError("num_shards must be >= 0 (0 = automatic)")

    def to_json(self) -> dict[str, Any]:
        """The parameters as plain JSON (tuples become lists)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _identity_value(value: Any) -> Any:
    """A stage's construction field as JSON: another stage by its name, a path as text, a column
    by `name:type`."""
    if isinstance(value, Stage):
        return value.stage_name
    if isinstance(value, pa.Field):
        return f"{value.name}:{value.type}"
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, tuple | list):
        return [_identity_value(v) for v in value]
    return value


@dataclass(frozen=True)
class Output:
    """One output table of a stage.

    `sort_by` must identify a row uniquely within a shard: it is the order rows are written in,
    and the framework refuses to write a shard with duplicate keys (that would make the order
    depend on scheduling). `may_be_empty` marks a side table that real inputs can leave empty
    (a dump without redirect stubs): a build warns about an empty final table unless it is one.
    `sized_by_data` is False for a table whose rows do not grow with the input (one row per task
    built): a few rows there say nothing about how much the dumps held.
    """

    name: str
    schema: pa.Schema
    sort_by: tuple[str, ...]
    may_be_empty: bool = False
    sized_by_data: bool = True


@dataclass(frozen=True)
class InOrder:
    """An output table a reduce gives as pieces already in its `sort_by` order (no key twice),
    produced as they are written (`engine.in_order`): a reduce whose output grows with its shard
    then holds about a piece, not the table. The reduce's stats may be counted while the pieces
    are produced: the shard's record is written after its tables."""

    pieces: Iterable[pa.Table]


def side_file_name(name: str) -> str:
    """The file side file `name` is kept in, in its stage's directory (`_` keeps Parquet readers
    of the directory off it)."""
    return f"_{name}.json"


def write_side_file(directory: Path, name: str, doc: Mapping[str, Any]) -> None:
    """Write a side file the stage declares (`Stage.side_files`) from its `finalize`."""
    text = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    atomic_write_text(directory / side_file_name(name), text)


@dataclass(frozen=True)
class SourceInfo:
    """A dump the build reads: where it is and what it is (size and sha256 identify it)."""

    name: str
    path: str  # absolute path (or URL) to read
    label: str  # the path as the user wrote it, recorded in manifests
    size: int
    sha256: str
    #: For a trial build (`build --limit N`): what of the dump `path` holds, e.g. "first 100 entities
    #: of latest-all.json.gz" (`path` is then the cut dump); "" for a whole dump.
    limit: str = ""

    def identity(self) -> dict[str, Any]:
        """What enters fingerprints: the content, not the path."""
        return {"size": self.size, "sha256": self.sha256}


@dataclass(frozen=True)
class UpstreamOutput:
    """A finished upstream stage as seen by a downstream task."""

    stage: str
    directory: str
    fingerprint: str
    manifest_sha256: str
    tables: Mapping[str, tuple[str, ...]]  # table -> shard files (absolute paths), in shard order
    #: The parameters it was built with and its stats, from its manifest: how a downstream stage
    #: reads what an upstream stage kept or counted.
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)
    #: Bytes of each shard file per table (`tables`' order), from the manifest: what automatic
    #: shard counts of downstream stages are sized from (`engine.inputs`).
    sizes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: The side files it wrote (`Stage.side_files`): name -> absolute path.
    side_files: Mapping[str, str] = field(default_factory=dict)

    def files(self, table: str) -> list[str]:
        """All shard files of `table`, in shard order."""
        return list(self.tables[table])

    def side_file(self, name: str) -> dict[str, Any]:
        """The JSON document of a side file the stage declares (`Stage.side_files`): how a
        downstream stage reads what an upstream one wrote besides its tables, without knowing
        where or how it was written."""
        path = self.side_files.get(name)
        if path is None:
            raise DataError(f"{self.directory}: {self.stage} has no side file {name!r}; rebuild it")
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise DataError(f"{path}: a side file holds a JSON object, got {type(doc).__name__}")
        return doc


@dataclass(frozen=True)
class BuildOptions:
    """Execution options: they change how a build runs, never what it writes (so no fingerprint)."""

    workers: int = 1
    max_bad_lines: int = 0
    chunk_bytes: int = 64 << 20
    executor: str = "local"
    dask_address: str | None = None
    progress: bool = True
    #: Past this many output shards a stage's map spills by group of shards and a merge pass
    #: regroups them (`engine.shuffle`); the output bytes are the same either way.
    shuffle_groups: int = 64


#: A context's parameters type: a `StageContext[TopSnaksParams]` is a `StageContext` (of `Params`),
#: so helpers that read only what every context has take any stage's.
P_co = TypeVar("P_co", bound=Params, default=Params, covariant=True)
#: A stage's parameters type (`Stage[TopSnaksParams]`); the engine holds stages of any (`Stage`).
P = TypeVar("P", bound=Params, default=Any)


@dataclass(frozen=True)
class StageContext(Generic[P_co]):
    """Everything a task needs, picklable so it can travel to worker processes."""

    stage: str
    params: P_co
    num_shards: int
    sources: Mapping[str, SourceInfo]
    inputs: Mapping[str, UpstreamOutput]
    workdir: str  # the stage's `.incomplete/…` directory (shards and markers live here)
    options: BuildOptions
    #: The stage's own phases once they ran (`Stage.phases`), read like `inputs`.
    phases: Mapping[str, UpstreamOutput] = field(default_factory=dict)

    @property
    def scratch(self) -> Path:
        """A private temporary directory (`_scratch/` inside the work directory), created on demand;
        it is removed when the stage completes, so nothing written there reaches the output."""
        path = Path(self.workdir) / "_scratch"
        path.mkdir(parents=True, exist_ok=True)
        return path


@dataclass(frozen=True)
class MapTask:
    """One unit of map work. `task_id` is stable across runs (it names the task's outputs, for resume).

    `payload` carries data the task cannot read itself (a block of a sequentially decompressed
    stream); `meta` carries small JSON-able descriptors such as a byte range.
    """

    task_id: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    payload: bytes | bytearray | None = None

    def digest(self) -> str:
        """What the task covers (its id and meta), as its completion record keeps it: a resumed
        build re-runs a task whose record was written for other work under the same id (a plan
        cut differently by another entbench), instead of taking its rows for this task's."""
        text = json.dumps({"task": self.task_id, "meta": self.meta}, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def map_column(tables: Mapping[str, pa.Table], table: str, column: str) -> pa.Array:
    """One column of a reduce's map table `table`, as one array.

    From a reducer's gathered tables (anything with `batches(table)`, as `engine.shuffle`'s) it is
    read one spilled batch at a time and copied out of it, so the table's other columns (a page's
    text) are never all held; the table can then still be left to the runner, which sorts a large
    one on disk (`engine.external_sort`)."""
    batches = getattr(tables, "batches", None)
    if batches is None:
        return tables[table].column(column).combine_chunks()
    parts = [pa.concat_arrays([batch.column(column)]) for batch in batches(table)]
    if not parts:
        return pa.array([], type=tables[table].schema.field(column).type)
    return pa.concat_arrays(parts)


def map_rows(tables: Mapping[str, pa.Table], table: str) -> int:
    """The number of rows of a reduce's map table `table`, read batch by batch where it can be."""
    batches = getattr(tables, "batches", None)
    if batches is None:
        return int(tables[table].num_rows)
    return sum(batch.num_rows for batch in batches(table))


class BucketSink:
    """Receives a map task's rows, already assigned to shards, and spills them to scratch.

    Implemented by the framework (`engine.shuffle`); declared here so stages can type it.
    """

    #: How many consecutive shards the sink spills together: rows handed over already in order of
    #: `shard // shards_per_group` are cut into groups without a copy (`split_by_shard_ids`).
    shards_per_group: int = 1

    def emit(self, table: str, shard: int, batch: pa.RecordBatch | pa.Table) -> None:
        """Add rows of `table` that belong to output shard `shard`."""
        raise NotImplementedError

    def emit_sharded(self, table: str, rows: pa.Table, shards: np.ndarray) -> None:
        """Add rows of `table`, row i to output shard `shards[i]` (rows keep their order per shard).

        One call for a whole table: with thousands of shards, a call per shard's slice cost more
        than the rows (`FileBucketSink` then spills by group without splitting per shard)."""
        for shard, part in split_by_shard_ids(rows, shards):
            self.emit(table, shard, part)

    def emit_by_key(self, table: str, rows: pa.Table, key_column: str, num_shards: int) -> None:
        """Add rows of `table`, each to the shard of its `key_column` value (`shards.shard_of`)."""
        if rows.num_rows:
            self.emit_sharded(table, rows, column_shards(rows.column(key_column), num_shards))


ProgressFn = Callable[[int, int], None]  # (units done, items done) since the last call


class Stage(Generic[P]):
    """Base class of all stages. Subclasses set the class attributes and implement one work shape.

    A stage is declared once. `class TopSnaks(Stage[TopSnaksParams])` names its parameters type
    (`params_type` is taken from it, and `ctx.params` is a `TopSnaksParams` to the type checker),
    and a stage class instantiated with construction arguments (which upstream stages to read,
    which columns to use) is a dataclass whose fields *are* the instance's identity: `identity`
    derives what enters the fingerprint from them, so no field can be forgotten there. Its first
    field is `stage_name`; a field with `init=False` (the `inputs` it derives) is not identity.
    """

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    layer: ClassVar[str] = "derived"
    #: Set from `Stage[P]`'s argument when a subclass names one (`__init_subclass__`).
    params_type: ClassVar[type[Params]] = Params
    #: Upstream stage names and source names this stage reads.
    inputs: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    #: Default number of output shards (0 = automatic: see `shard_inputs`) and the column rows are
    #: routed by.
    default_num_shards: ClassVar[int] = 1
    shard_key: ClassVar[str] = ""
    #: The automatic shard count (`num_shards` 0) is about one shard per this many bytes of the
    #: upstream tables `shard_inputs` names (`engine.inputs.auto_num_shards`). The default, 8 MB of
    #: a Wikipedia scan's Parquet, is about 25 MB of its XML: a full enwiki dump gives stages
    #: over its pages a few thousand shards, a reducer a few tens of MB.
    shard_input_bytes: ClassVar[int] = 8 << 20
    #: A reducer sorts a table it keeps as mapped (left out of `reduce`'s result) in memory up to
    #: this many bytes of spilled rows; past it, through sorted runs of this size on scratch
    #: (`engine.external_sort`). A memory knob, not identity: the bytes written are the same
    #: whatever it is, so it is no parameter and no part of the fingerprint. A stage whose shards
    #: sort faster whole than in two runs, and whose memory is set by larger map tasks anyway,
    #: declares more (the Wikidata scan: twice a map task's emits).
    sort_memory_bytes: ClassVar[int] = SORT_MEMORY_BYTES
    description: ClassVar[str] = ""
    #: The kind of dump the stage's sources are (`readers.head.KINDS`: "wikidata-json",
    #: "mediawiki-xml", "lines"): how `build --limit N` cuts one and `--dry-run` samples one.
    source_kind: ClassVar[str] = ""
    #: Unit of progress reported by tasks (shown on the bar): "B" for bytes of input, else a noun.
    progress_unit: ClassVar[str] = "shard"
    progress_items: ClassVar[str] = "rows"
    #: Side files `finalize` writes (`write_side_file`): small JSON documents downstream stages read
    #: besides the tables, as `ctx.inputs[stage].side_file(name)` (a wiki's siteinfo, an alias
    #: table's normaliser). The engine checks they were written and records them in the manifest.
    side_files: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str | None = None) -> None:
        self.stage_name = name or self.name

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Take `params_type` from the `Stage[P]` (or `SomeStage[P]`) a subclass derives from."""
        super().__init_subclass__(**kwargs)
        if "params_type" in cls.__dict__:
            return
        for base in cls.__dict__.get("__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, Stage):
                args = [a for a in typing.get_args(base) if isinstance(a, type) and issubclass(a, Params)]
                if args:
                    cls.params_type = args[0]

    # --- declaration -------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What of this instance enters the fingerprint besides its name: the fields it was
        constructed with (none for a stage that is not a dataclass), as JSON."""
        if not dataclasses.is_dataclass(self):
            return {}
        return {
            f.name: _identity_value(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.init and f.name != "stage_name"
        }

    def outputs(self, params: P) -> list[Output]:
        """The stage's output tables (schemas may depend on parameters, e.g. label languages)."""
        raise NotImplementedError

    def map_schemas(self, params: P) -> dict[str, pa.Schema]:
        """Schemas of the rows map tasks emit: the output schemas unless a stage carries extra
        columns to its reducer (columns not in the output schema are dropped when writing)."""
        return {o.name: o.schema for o in self.outputs(params)}

    def resolve_num_shards(self, params: P, sources: Mapping[str, SourceInfo]) -> int:
        """The shard count for this build: the `num_shards` parameter if set, else the default
        (0: the planner sizes it from the upstream tables of `shard_inputs`)."""
        requested = getattr(params, "num_shards", 0)
        return int(requested) if requested else self.default_num_shards

    def shard_inputs(self, params: P) -> tuple[tuple[str, str], ...]:
        """The upstream (stage, table) pairs whose bytes size an automatic shard count (none by
        default: one shard)."""
        return ()

    # --- work -------------------------------------------------------------------------------
    def phases(self, ctx: StageContext[P]) -> Sequence[tuple[Stage[Any], Params]]:
        """Map/reduce rounds that run before this stage's own work, each a stage with its
        parameters (none by default).

        A repartition join routes rows by one key, joins each partition, and then this stage's map
        routes the joined rows by its own key: two shuffles, where a stage has one. Each phase is
        planned and run like a stage, in this stage's work directory (`_phases/`, resumed like
        any stage and deleted when this stage completes); its inputs are this stage's and the
        phases before it, and this stage's tasks read it as `ctx.phases[name]`. The runner asks
        again after each phase has run (`ctx.phases` then holds those run so far) and runs the
        first one listed that has not: a stage may list phases the data calls for. Phases are how
        this stage computes, not what it reads: they do not enter its fingerprint (its `version`
        covers them). What they count stays in their own manifests (`ctx.phases[name].stats`): the
        stage reports what it means to in `finalize`."""
        return ()

    def map_tasks(self, ctx: StageContext[P]) -> Iterable[MapTask]:
        """Map tasks, in a deterministic order. Empty for shard stages."""
        return ()

    def map(self, ctx: StageContext[P], task: MapTask, sink: BucketSink, progress: ProgressFn) -> Stats:
        """Run one map task, emitting rows into shard buckets; return its stats."""
        raise NotImplementedError

    def progress_total(self, ctx: StageContext[P]) -> int | None:
        """Total progress units of the map phase (e.g. input bytes), if known."""
        return None

    def spill_bytes_estimate(self, ctx: StageContext[P]) -> int | None:
        """About how many bytes the map phase spills (for a free-space warning), if known."""
        return None

    def worker_memory_estimate(self, ctx: StageContext[P]) -> int | None:
        """About how many bytes each process running this stage's map tasks holds for the whole
        phase (a table or automaton every task needs; for an out-of-memory warning), if known."""
        return None

    def on_map_done(self, ctx: StageContext[P], done: Mapping[str, Any], progress: ProgressFn) -> None:
        """Called for map tasks found already finished on resume (e.g. to advance the progress bar)."""

    def check_map_stats(self, ctx: StageContext[P], stats: Stats, map_dir: Path) -> None:
        """Called with the running map stats after each finished task; raise `DataError` to stop early."""

    def reduce(
        self, ctx: StageContext[P], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[Mapping[str, pa.Table | InOrder], Stats]:
        """Turn the gathered buckets of one shard into its final rows (default: unchanged), each
        output a table or, when it grows with the shard, its pieces in order (`InOrder`).

        `tables` reads each map table from the spills when first asked for. An output missing
        from the result is written from the map table of the same name as it was mapped (empty if
        there is none), so return only the tables you change: the others are then read one at a
        time as they are written, never all held at once."""
        return {}, Stats()

    def shard(self, ctx: StageContext[P], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Build output shard `shard` directly (shard stages only)."""
        raise NotImplementedError

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """What a finished build of this stage kept and let go, in a few plain words, from its
        manifest's stats and parameters ("12 of 25 items have an article among the dump's 84
        pages"); a build whose final table is empty or tiny prints these, upstream first, instead of
        counter names. None: the stage has nothing to say (its drop counters are named instead)."""
        return None

    def finalize(self, ctx: StageContext[P], directory: Path, stats: Stats) -> dict[str, Any]:
        """Run once after all shards exist, in the stage's output directory (still incomplete).

        May write extra files there (e.g. a rejects list) and return derived statistics to add to
        the manifest; may raise `DataError` to fail the build (e.g. too many bad lines).
        """
        return {}

    @property
    def is_map_reduce(self) -> bool:
        """Whether this stage overrides `map` (and so routes rows through buckets)."""
        return type(self).map is not Stage.map
