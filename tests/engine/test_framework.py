"""The stage framework on its own: fingerprints, DAG order, config parsing, shard writing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from msgspec import Meta

from entbench.engine import registry
from entbench.engine.config import BuildConfig, load_config, make_params
from entbench.engine.runner import Builder
from entbench.engine.shards import DuplicateKeyError, prepare_rows, shard_of, split_by_shard
from entbench.engine.stage import (
    BuildOptions,
    Output,
    Params,
    Stage,
    StageContext,
    side_file_name,
    write_side_file,
)
from entbench.engine.stats import Stats
from entbench.errors import DataError, UserError


@dataclass(frozen=True)
class ToyParams(Params):
    size: int = 3
    words: tuple[str, ...] = ("a", "b")
    ratio: float = 0.5
    flag: bool = False
    note: str | None = None
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"big": {"size": 100, "flag": True}}


@dataclass(eq=False)
class ToyStage(Stage[ToyParams]):
    name = "toy"
    default_num_shards = 2

    stage_name: str
    column: str

    def outputs(self, params: ToyParams) -> list[Output]:
        schema = pa.schema([pa.field(self.column, pa.int64(), nullable=False)])
        return [Output("rows", schema, (self.column,))]

    def shard(self, ctx: StageContext[ToyParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        values = [v for v in range(ctx.params.size) if v % ctx.num_shards == shard]
        rows = pa.table({self.column: pa.array(values[::-1], pa.int64())})
        return {"rows": rows}, Stats({"seen": len(values)})


def plan_fingerprint(tmp_path: Path, stage: Stage, params: dict[str, Any] | None = None) -> str:
    config = BuildConfig(sources={}, params={stage.stage_name: params or {}})
    return Builder(tmp_path, config, BuildOptions(progress=False)).plan(stage, {}).fingerprint


def test_fingerprint_depends_on_params_and_instance_arguments(tmp_path: Path) -> None:
    base = plan_fingerprint(tmp_path, ToyStage("toy", "x"))
    assert base == plan_fingerprint(tmp_path, ToyStage("toy", "x"))
    assert base != plan_fingerprint(tmp_path, ToyStage("toy", "y"))
    assert base != plan_fingerprint(tmp_path, ToyStage("toy", "x"), {"size": 4})
    assert base != plan_fingerprint(tmp_path, ToyStage("toy", "x"), {"ratio": 0.25})


def test_a_stage_declares_its_parameters_and_identity_once() -> None:
    """`Stage[ToyParams]` names the parameters type; the dataclass fields are the whole identity."""
    assert ToyStage.params_type is ToyParams
    assert ToyStage("toy", "x").identity() == {"column": "x"}

    @dataclass(eq=False)
    class Wider(ToyStage):
        upstream: tuple[str, ...] = ("a", "b")

    assert Wider.params_type is ToyParams
    assert Wider("toy", "x").identity() == {"column": "x", "upstream": ["a", "b"]}
    assert Stage().identity() == {}


def test_fingerprint_does_not_depend_on_where_the_stage_class_lives(tmp_path: Path) -> None:
    """The same stage declared by a class of another name in another module has the same identity."""
    moved_class = type("MovedToyStage", (ToyStage,), {"__module__": "somewhere.else.entirely"})
    moved = moved_class("toy", "x")
    assert type(moved).__module__ != type(ToyStage("toy", "x")).__module__
    assert plan_fingerprint(tmp_path, moved) == plan_fingerprint(tmp_path, ToyStage("toy", "x"))
    assert plan_fingerprint(tmp_path, moved_class("toy", "y")) != plan_fingerprint(tmp_path, moved)


def test_shard_stage_builds_sorted_shards_with_stats(tmp_path: Path) -> None:
    stage = ToyStage("toy", "x")
    config = BuildConfig(sources={}, params={"toy": {"size": 7}})
    builder = Builder(tmp_path, config, BuildOptions(progress=False))
    from entbench.engine.executors.local import InlineExecutor

    result = builder.run(builder.plan(stage, {}), InlineExecutor())
    import pyarrow.parquet as pq

    shard0 = pq.read_table(result.files("rows")[0]).column("x").to_pylist()
    assert shard0 == sorted(shard0) == [0, 2, 4, 6]
    import json

    manifest = json.loads((Path(result.directory) / "_MANIFEST.json").read_text())
    assert manifest["stats"]["seen"] == 7
    assert manifest["outputs"]["rows"]["rows"] == 7
    assert manifest["shard_stats"] == [{"seen": 4}, {"seen": 3}]


def test_params_conversion_and_presets() -> None:
    params = make_params(ToyParams, "toy", {"size": "5", "words": "x, y", "ratio": "0.1", "flag": "yes"})
    assert params == ToyParams(size=5, words=("x", "y"), ratio=0.1, flag=True)
    assert make_params(ToyParams, "toy", {"preset": "big", "size": 7}) == ToyParams(size=7, flag=True)
    assert make_params(ToyParams, "toy", {"note": "none"}) == ToyParams(note=None)
    assert make_params(ToyParams, "toy", {"words": ["p", "q"]}) == ToyParams(words=("p", "q"))
    with pytest.raises(UserError, match=r"unknown parameter toy\.nope"):
        make_params(ToyParams, "toy", {"nope": 1})
    with pytest.raises(UserError, match="expected an integer"):
        make_params(ToyParams, "toy", {"size": "3.5"})
    with pytest.raises(UserError, match="unknown preset"):
        make_params(ToyParams, "toy", {"preset": "huge"})


def test_params_errors_name_the_parameter_and_the_value() -> None:
    """One line per mistake, whether the value came from `--param` (a string) or from TOML."""
    cases = {
        "size": ("x", "toy.size: expected an integer, got 'x'"),
        "flag": ("maybe", "toy.flag: expected true/false, got 'maybe'"),
        "ratio": ("lots", "toy.ratio: expected a number, got 'lots'"),
        "words": (5, "toy.words: expected a list, got 5"),
    }
    for key, (value, message) in cases.items():
        with pytest.raises(UserError) as caught:
            make_params(ToyParams, "toy", {key: value})
        assert str(caught.value) == message
    with pytest.raises(UserError, match=r"^toy\.size: expected an integer, got 2\.5$"):
        make_params(ToyParams, "toy", {"size": 2.5})  # TOML `size = 2.5` is not silently 2
    assert make_params(ToyParams, "toy", {"size": 2.0}) == ToyParams(size=2)
    assert make_params(ToyParams, "toy", {"note": 7}) == ToyParams(note="7")


def test_every_stage_refuses_a_negative_shard_count() -> None:
    """`num_shards` is checked once, in `Params`, for every stage that has it (0 = automatic)."""
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline

    with_shards = [s for s in registry.stages().values() if "num_shards" in s.params_type().to_json()]
    assert len(with_shards) >= 16
    for stage in with_shards:
        with pytest.raises(UserError, match=r"num_shards must be >= 0 \(0 = automatic\)"):
            make_params(stage.params_type, stage.stage_name, {"num_shards": -1})
        automatic = make_params(stage.params_type, stage.stage_name, {"num_shards": 0})
        assert automatic.to_json()["num_shards"] == 0


def test_config_file_overrides_and_errors(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[sources]\nwikidata = "dumps/a.json"\n[params.wikidata]\nnum_shards = 2\n')
    loaded = load_config(config, ["wikidata_old=b.json"], ["wikidata.num_shards=8", "wikidata.languages=en"])
    assert loaded.sources["wikidata"] == str(tmp_path / "dumps" / "a.json")
    assert loaded.sources["wikidata_old"] == str(Path("b.json").resolve())
    assert loaded.params["wikidata"] == {"num_shards": "8", "languages": "en"}
    with pytest.raises(UserError, match="NAME=PATH"):
        load_config(config, ["nonsense"], [])
    with pytest.raises(UserError, match=r"STAGE\.KEY=VALUE"):
        load_config(config, [], ["nodot=1"])
    bad = tmp_path / "bad.toml"
    bad.write_text("[sources\n")
    with pytest.raises(UserError, match="malformed config"):
        load_config(bad)
    with pytest.raises(UserError, match="config file not found"):
        load_config(tmp_path / "missing.toml")


def test_shard_routing_is_stable_and_total() -> None:
    # xxh64 values are fixed by the algorithm: the same id lands in the same shard on every machine.
    assert [shard_of(k, 8) for k in ("Q1", "Q42", "Q64")] == [shard_of(k, 8) for k in ("Q1", "Q42", "Q64")]
    table = pa.table({"id": [f"Q{i}" for i in range(100)]})
    parts = split_by_shard(table, "id", 4)
    assert sum(p.num_rows for p in parts.values()) == 100
    for shard, part in parts.items():
        assert all(shard_of(k, 4) == shard for k in part.column("id").to_pylist())


def test_duplicate_sort_keys_are_refused() -> None:
    schema = pa.schema([pa.field("k", pa.string()), pa.field("v", pa.int64())])
    with pytest.raises(DuplicateKeyError):
        prepare_rows(pa.table({"k": ["a", "a"], "v": [1, 2]}), schema, ("k",))
    with pytest.raises(DuplicateKeyError):
        prepare_rows(pa.table({"k": [None, "a", None], "v": [1, 2, 3]}), schema, ("k",))
    two_keys = prepare_rows(pa.table({"k": [None, "a", "a"], "v": [1, 1, 2]}), schema, ("k", "v"))
    assert two_keys.num_rows == 3
    rows = prepare_rows(pa.table({"v": [2, 1], "k": ["b", "a"]}), schema, ("k",))
    assert rows.column_names == ["k", "v"] and rows.column("k").to_pylist() == ["a", "b"]


def test_dag_order_is_deterministic_and_upstream_first() -> None:
    import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry

    assert registry.targets()  # every dataset's targets, through the declared pipelines
    for target in registry.targets().values():
        order = [s.stage_name for s in registry.stage_order(target.stages)]
        assert order == [s.stage_name for s in registry.stage_order(target.stages)]
        seen: set[str] = set()
        for stage in registry.stage_order(target.stages):
            assert set(stage.inputs) <= seen
            seen.add(stage.stage_name)


def test_the_engine_alone_knows_no_dataset() -> None:
    """Without `entbench.builders` imported no pipeline is declared, and a lookup says so."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from entbench.engine import registry\n"
        "try:\n"
        "    registry.targets()\n"
        "except RuntimeError as exc:\n"
        "    print(exc)\n"
        "print(sorted(m for m in sys.modules if m.startswith('entbench.builders')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    error, imported = result.stdout.splitlines()
    assert error.startswith("no pipelines declared: import entbench.builders")
    assert imported == "[]"


def test_declared_constraints_and_choices_are_one_line_errors() -> None:
    """A `Meta` bound or a `Literal` on a parameter is checked by `msgspec.convert` and named in
    the message, with the value given."""

    @dataclass(frozen=True)
    class Bounded(Params):
        seed: Annotated[int, Meta(ge=1, description="the seed")] = 1
        ratio: Annotated[float, Meta(gt=0, le=1)] = 0.5
        mode: Literal["fast", "exact"] = "fast"
        words: tuple[Annotated[str, Meta(min_length=1)], ...] = ()

    assert make_params(Bounded, "b", {"seed": "3", "mode": "exact"}) == Bounded(seed=3, mode="exact")
    cases = {
        "seed": ("0", "b.seed: expected an integer >= 1, got '0'"),
        "ratio": (1.5, "b.ratio: expected a number <= 1.0, got 1.5"),
        "mode": ("slow", "b.mode: expected one of 'fast', 'exact', got 'slow'"),
    }
    for key, (value, message) in cases.items():
        with pytest.raises(UserError) as caught:
            make_params(Bounded, "b", {key: value})
        assert str(caught.value) == message
    with pytest.raises(UserError) as caught:
        make_params(Bounded, "b", {"words": ["a", ""]})
    assert str(caught.value) == "b.words: expected a string of length >= 1, got ''"


@dataclass(eq=False)
class NotingStage(ToyStage):
    """A toy stage that declares a side file, and writes it unless told not to."""

    side_files = ("note",)
    write_note: bool = True

    def finalize(self, ctx: StageContext[ToyParams], directory: Path, stats: Stats) -> dict[str, Any]:
        if self.write_note:
            write_side_file(directory, "note", {"size": ctx.params.size, "column": self.column})
        return {}


@dataclass(eq=False)
class ReadingStage(ToyStage):
    """A toy stage that sizes itself from its upstream's side file, read through the engine."""

    upstream: str = "noting"

    def __post_init__(self) -> None:
        self.inputs = (self.upstream,)

    def shard(self, ctx: StageContext[ToyParams], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        note = ctx.inputs[self.upstream].side_file("note")
        rows = pa.table({self.column: pa.array([int(note["size"]) + shard], pa.int64())})
        return {"rows": rows}, Stats({"noted": 1})


def test_a_declared_side_file_is_recorded_and_read_downstream_through_the_engine(tmp_path: Path) -> None:
    from entbench.engine.executors.local import InlineExecutor

    config = BuildConfig(sources={}, params={"noting": {"size": 5}})
    builder = Builder(tmp_path, config, BuildOptions(progress=False))
    noted = builder.run(builder.plan(NotingStage("noting", "x"), {}), InlineExecutor())
    assert set(noted.side_files) == {"note"}
    assert noted.side_file("note") == {"size": 5, "column": "x"}
    manifest = json.loads((Path(noted.directory) / "_MANIFEST.json").read_text())
    assert list(manifest["files"]) == [side_file_name("note")]
    reading = builder.run(builder.plan(ReadingStage("reading", "y"), {"noting": noted}), InlineExecutor())
    assert [pq.read_table(f).column("y").to_pylist() for f in reading.files("rows")] == [[5], [6]]
    with pytest.raises(DataError, match="has no side file 'other'"):
        noted.side_file("other")


def test_a_side_file_declared_and_not_written_stops_the_stage(tmp_path: Path) -> None:
    from entbench.engine.executors.local import InlineExecutor

    builder = Builder(tmp_path, BuildConfig(sources={}, params={}), BuildOptions(progress=False))
    with pytest.raises(RuntimeError, match=r"noting declares side files it did not write: \['_note.json'\]"):
        builder.run(builder.plan(NotingStage("noting", "x", write_note=False), {}), InlineExecutor())
