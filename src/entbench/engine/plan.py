"""Planning a stage: its parameters and shard count resolved, its fingerprint, its directories.

A stage's fingerprint is the sha256 of the canonical JSON of its identity (`fingerprint_doc`): what
it declares (name, version, parameters, instance arguments, shard count, output schemas) and what
it reads (upstream fingerprints, source sizes and hashes). Never the module its class lives in,
never a timestamp: moving code changes no output directory, and the same inputs and parameters
always name the same `v<version>-<fp12>` directory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from entbench.engine.inputs import auto_num_shards, upstream_bytes
from entbench.engine.manifest import MANIFEST_FORMAT, canonical_json
from entbench.engine.shards import shard_file_name
from entbench.engine.stage import (
    BuildOptions,
    Output,
    Params,
    SourceInfo,
    Stage,
    StageContext,
    UpstreamOutput,
)
from entbench.schemas.base import schema_hash


@dataclass(frozen=True)
class StagePlan:
    """A stage with its parameters resolved and its fingerprint computed."""

    stage: Stage
    ctx: StageContext
    outputs: tuple[Output, ...]
    fingerprint: str
    final_dir: Path
    work_dir: Path
    fingerprint_doc: Mapping[str, Any]


def table_rel_path(outputs: Sequence[Output], table: str, shard: int, num_shards: int) -> str:
    """Where a table's shard lives inside the stage directory."""
    name = shard_file_name(shard, num_shards)
    return name if len(outputs) == 1 else f"{table}/{name}"


def fingerprint_doc(
    stage: Stage,
    params: Params,
    num_shards: int,
    outputs: Sequence[Output],
    upstream: Mapping[str, UpstreamOutput],
    sources: Mapping[str, SourceInfo],
) -> dict[str, Any]:
    """What a stage's fingerprint hashes: what the stage declares and what it reads."""
    return {
        "format": MANIFEST_FORMAT,
        "stage": stage.stage_name,
        "version": stage.version,
        "params": params.to_json(),
        "instance": stage.identity(),
        "num_shards": num_shards,
        "outputs": {
            o.name: {"schema_hash": schema_hash(o.schema), "sort_by": list(o.sort_by)} for o in outputs
        },
        "inputs": {name: upstream[name].fingerprint for name in sorted(upstream)},
        "sources": {name: sources[name].identity() for name in sorted(sources)},
    }


def plan_stage(
    stage: Stage,
    params: Params,
    sources: Mapping[str, SourceInfo],
    upstream: Mapping[str, UpstreamOutput],
    out: Path,
    options: BuildOptions,
) -> StagePlan:
    """Resolve the shard count, compute the fingerprint and the output directories under `out`.

    A shard count of 0 (the stage's default or `num_shards = 0`) is sized from the upstream tables
    the stage names (`Stage.shard_inputs`), so it enters the fingerprint as a number like any other."""
    num_shards = stage.resolve_num_shards(params, sources)
    if num_shards == 0:
        num_shards = auto_num_shards(
            upstream_bytes(upstream, stage.shard_inputs(params)), stage.shard_input_bytes
        )
    if hasattr(params, "num_shards"):
        params = replace(params, **{"num_shards": num_shards})
    outputs = tuple(stage.outputs(params))
    doc = fingerprint_doc(stage, params, num_shards, outputs, upstream, sources)
    fingerprint = hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()
    stage_dir = out / stage.layer / stage.stage_name
    version_name = f"v{stage.version}-{fingerprint[:12]}"
    work_dir = stage_dir / ".incomplete" / version_name
    ctx = StageContext(
        stage=stage.stage_name,
        params=params,
        num_shards=num_shards,
        sources=sources,
        inputs=dict(upstream),
        workdir=str(work_dir),
        options=options,
    )
    return StagePlan(stage, ctx, outputs, fingerprint, stage_dir / version_name, work_dir, doc)
