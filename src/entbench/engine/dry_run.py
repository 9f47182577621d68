"""`entbench build --dry-run`: what a build would do, and about how long and how much it would take,
without building anything.

It reads the config and the target's stage DAG, states each source (path, size on disk, and what
its first few MB say of the whole: `readers.head.measure_head`) and each stage, upstream first:
up to date (a complete output with the fingerprint this build would compute is there) or to run.
A source's sha256 comes from the identity cache only (`engine.sources`): hashing a 100 GB dump
takes minutes, so a source never hashed is said to be and its stages counted as to run.

Estimates come from measured rates (`Rate`, one per kind of stage, given by the caller: entbench
keeps them in `builders/rates.json`, written from the benchmarks' results by `bench/rates.py`):
each stage's time is linear in what drives it, the decompressed MB of the Wikipedia or Wikidata
dump upstream of it or that dump's entities, on one worker, and `w` workers divide it by
1 + (w - 1)·e where e = the measured 2-worker speedup - 1 (clamped to [0, 1]). A stage without
a measured rate is named as such and left out of the totals. Memory per worker is the largest
measured peak among the stages to run; scratch space the largest map-reduce stage's three times
its output (spills are uncompressed Arrow; outputs zstd Parquet). These are
estimates for planning (a factor of two either way), not promises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from entbench.engine import registry
from entbench.engine.config import BuildConfig
from entbench.engine.manifest import check_complete, upstream_from_manifest
from entbench.engine.plan import plan_stage
from entbench.engine.sources import LIMITED_DIR, check_sources, human_bytes
from entbench.engine.stage import BuildOptions, SourceInfo, Stage, UpstreamOutput
from entbench.errors import UserError
from entbench.readers.cache import default_cache_dir
from entbench.readers.head import KINDS, HeadSample, measure_head

#: What a rate counts: decompressed MB of a Wikipedia dump, of a Wikidata dump, or Wikidata entities.
UNITS = ("wiki_mb", "wikidata_mb", "wikidata_entity")
#: Spills are uncompressed Arrow; outputs are zstd Parquet, about a third of that.
SPILL_PER_OUTPUT_BYTE = 3


@dataclass(frozen=True)
class Rate:
    """A kind of stage's measured cost per unit of what drives it (`UNITS`), on one worker."""

    unit: str
    seconds: float  # per unit, one worker
    speedup_2: float  # two workers' speed over one's
    rss_mib: float  # peak resident memory of a worker
    output_bytes: float  # Parquet bytes written per unit
    measured: str  # where the numbers come from


@dataclass(frozen=True)
class SourcePlan:
    """A source as the dry run sees it."""

    name: str
    label: str
    kind: str
    size: int
    sample: HeadSample | None
    hashed: bool

    def amount(self, unit: str, limit: int | None) -> float:
        """How many `unit`s this source holds (with `--limit`, at most that many entities or pages)."""
        if self.sample is None:
            return 0.0
        decompressed, units = self.sample.estimate(self.size)
        if limit is not None and units > limit:
            decompressed, units = int(decompressed * limit / units), limit
        if unit == "wikidata_entity":
            return float(units) if self.kind == "wikidata-json" else 0.0
        wanted = "wikidata-json" if unit == "wikidata_mb" else "mediawiki-xml"
        return decompressed / 1e6 if self.kind == wanted else 0.0


def load_rates(path: Path) -> dict[str, Rate]:
    """The rates of a `rates.json` (stage class -> `Rate` fields; `bench/rates.py` writes it)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {name: Rate(**fields) for name, fields in doc["rates"].items()}


def scale(seconds: float, speedup_2: float, workers: int) -> float:
    """One worker's seconds on `workers` workers: every worker after the first adds what the second
    added on the benchmark (e = speedup_2 - 1, clamped to [0, 1])."""
    e = min(1.0, max(0.0, speedup_2 - 1.0))
    return seconds / (1.0 + (workers - 1) * e)


def dry_run(
    target: str,
    config: BuildConfig,
    options: BuildOptions,
    out: Path,
    rates: Mapping[str, Rate],
    *,
    limit: int | None = None,
) -> list[str]:
    """The lines `build --dry-run` prints: sources, stages with their status and estimates, totals."""
    spec = registry.get_target(target)
    order = registry.stage_order(spec.stages)
    for stage in order:
        config.params_for(stage.params_type, stage.stage_name)  # a bad parameter is the same error
    # A missing or unknown source: the build's error.
    check_sources(target, order, config, registry.source_names)
    sources = _sources(order, config)
    lines = [f"dry run of {target} into {out} (nothing is built or written):", "sources:"]
    for src in sources.values():
        lines.append("  " + _source_line(src, limit))
    drivers = _drivers(order)
    estimates = _stages(order, config, options, out, sources, limit)
    lines.append(f"stages, upstream first (estimates for {options.workers} worker(s)):")
    width = max(len(s.stage_name) for s in order)
    totals = {"seconds": 0.0, "rss": 0.0, "scratch": 0.0, "output": 0.0}
    unmeasured = []
    for stage in order:
        status = estimates[stage.stage_name]
        if status == "up to date":
            lines.append(f"  {stage.stage_name:<{width}}  up to date")
            continue
        rate = rates.get(type(stage).__name__)
        if rate is None:
            unmeasured.append(stage.stage_name)
            lines.append(f"  {stage.stage_name:<{width}}  {status}: no measured rate")
            continue
        amount = sum(sources[name].amount(rate.unit, limit) for name in drivers[stage.stage_name])
        seconds = scale(rate.seconds * amount, rate.speedup_2, options.workers)
        output = rate.output_bytes * amount
        scratch = output * SPILL_PER_OUTPUT_BYTE if stage.is_map_reduce else 0.0
        totals["seconds"] += seconds
        totals["rss"] = max(totals["rss"], rate.rss_mib)
        totals["scratch"] = max(totals["scratch"], scratch)
        totals["output"] += output
        said = [_duration(seconds), f"~{rate.rss_mib:,.0f} MiB per worker"]
        said += [f"~{human_bytes(int(output))} written"] if output else []
        said += [f"~{human_bytes(int(scratch))} of scratch"] if scratch else []
        lines.append(f"  {stage.stage_name:<{width}}  {status}: {', '.join(said)}")
    to_run = [s for s in order if estimates[s.stage_name] != "up to date"]
    if not to_run:
        lines.append(f"total: nothing to build; {target} is up to date in {out}")
        return lines
    lines.append(
        f"total: {len(to_run)} of {len(order)} stage(s) to run, {_duration(totals['seconds'])} on "
        f"{options.workers} worker(s); ~{totals['rss']:,.0f} MiB of memory per worker; scratch space up "
        f"to ~{human_bytes(int(totals['scratch']))} and ~{human_bytes(int(totals['output']))} of "
        f"outputs under {out}"
        + (f"; not counted (no measured rate): {', '.join(unmeasured)}" if unmeasured else "")
    )
    measured = sorted({r.measured for r in rates.values()})
    lines.append(
        "estimates from measured rates (" + "; ".join(measured) + "), scaled to each source's size "
        "as its first few MB suggest: a factor of two either way"
    )
    return lines


def _sources(order: Sequence[Stage], config: BuildConfig) -> dict[str, SourcePlan]:
    """Every source the stages read: its size, a sample of its start, whether its hash is cached."""
    cache = _identity_cache()
    found: dict[str, SourcePlan] = {}
    for stage in order:
        for name in stage.sources:
            if name in found:
                continue
            path = Path(config.sources[name])
            label = config.source_labels.get(name, str(path))
            if not path.is_file():
                raise UserError(f"source {name}: file not found: {label}")
            sample = measure_head(stage.source_kind, str(path)) if stage.source_kind in KINDS else None
            hit = cache.get(str(path.resolve()), {})
            stat = path.stat()
            hashed = hit.get("size") == stat.st_size and hit.get("mtime_ns") == stat.st_mtime_ns
            found[name] = SourcePlan(name, label, stage.source_kind, stat.st_size, sample, hashed)
    return found


def _identity_cache() -> dict[str, dict[str, object]]:
    try:
        doc = json.loads((default_cache_dir() / "sources.json").read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def _source_line(src: SourcePlan, limit: int | None) -> str:
    said = f"{src.name}: {src.label}, {human_bytes(src.size)}"
    sample = src.sample
    if sample is not None:
        decompressed, units = sample.estimate(src.size)
        unit = KINDS[src.kind][0]
        if sample.compression != "none":
            said += f" {sample.compression}, ~{human_bytes(decompressed)} decompressed"
        said += f", ~{units:,} {unit} (from its first {human_bytes(sample.sampled)})"
        if limit is not None:
            said += f"; --limit {limit}: the first {min(limit, units):,} {unit}"
    if not src.hashed:
        said += "; not hashed yet (the build hashes it first)"
    return said


def _drivers(order: Sequence[Stage]) -> dict[str, list[str]]:
    """The sources each stage reads, directly or through its upstream stages."""
    upstream: dict[str, list[str]] = {}
    for stage in order:
        names = list(stage.sources)
        for name in stage.inputs:
            names += upstream.get(name, [])
        upstream[stage.stage_name] = list(dict.fromkeys(names))
    return upstream


def _stages(
    order: Sequence[Stage],
    config: BuildConfig,
    options: BuildOptions,
    out: Path,
    sources: Mapping[str, SourcePlan],
    limit: int | None,
) -> dict[str, str]:
    """Each stage's status: "up to date" when its output with this build's fingerprint is complete
    (which needs every source hashed and every upstream stage up to date), else "to run". With
    `limit`, a source is the cut dump an earlier trial build left (`engine.sources.limit_sources`)."""
    infos: dict[str, SourceInfo] = {}
    cache = _identity_cache()
    for name, src in sources.items():
        path = Path(config.sources[name])
        if limit is not None:
            path = (
                out / LIMITED_DIR / f"{name}-first-{limit}.{KINDS[src.kind][1]}"
                if src.kind in KINDS
                else path
            )
        hit = cache.get(str(path.resolve()), {})
        if (
            path.is_file()
            and hit.get("size") == path.stat().st_size
            and hit.get("mtime_ns") == path.stat().st_mtime_ns
        ):
            infos[name] = SourceInfo(
                name, str(path.resolve()), src.label, path.stat().st_size, str(hit["sha256"])
            )
    status: dict[str, str] = {}
    done: dict[str, UpstreamOutput] = {}
    for stage in order:
        ready = all(n in infos for n in stage.sources) and all(n in done for n in stage.inputs)
        if ready:
            params = config.params_for(stage.params_type, stage.stage_name)
            plan = plan_stage(
                stage,
                params,
                {n: infos[n] for n in stage.sources},
                {n: done[n] for n in stage.inputs},
                out,
                options,
            )
            if plan.final_dir.is_dir() and not check_complete(plan.final_dir):
                done[stage.stage_name] = upstream_from_manifest(plan.final_dir)
                status[stage.stage_name] = "up to date"
                continue
        status[stage.stage_name] = "to run"
    return status


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "<1 s"
    if seconds < 60:
        return f"~{seconds:.0f} s"
    if seconds < 3600:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds / 3600:.1f} h"
