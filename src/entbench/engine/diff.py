"""Compare two builds by their manifests: which stages differ, and how (pure; no I/O).

Stages are paired by name. When a build holds several versions of one stage (directories of
different fingerprints side by side), equal fingerprints pair first; what remains pairs only when
one directory is left on each side, otherwise it is reported as present on one side only.

For a pair the fingerprint says whether the inputs differ (parameters, version, schemas, upstream
fingerprints, source contents); the shard hashes say whether the bytes differ. Equal
fingerprints with different bytes mean a stage is not deterministic, and are reported as such.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Manifest = Mapping[str, Any]


@dataclass(frozen=True)
class Change:
    """One difference between the two manifests of a stage."""

    kind: str
    key: str
    a: Any
    b: Any

    def describe(self) -> str:
        """One line: what changed, from what to what."""
        if self.kind == "shards":
            return f"table {self.key}: {self.b} of {self.a} shard file(s) differ"
        if self.kind == "nondeterministic":
            return f"same fingerprint but different bytes: {self.key} (a stage is not deterministic)"
        return f"{self.kind} {self.key}: {_show(self.a)} -> {_show(self.b)}"


def _show(value: Any) -> str:
    if value is None:
        return "(absent)"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class StageDiff:
    """A stage present in both builds."""

    stage: str
    fingerprint_a: str
    fingerprint_b: str
    changes: tuple[Change, ...]

    @property
    def identical(self) -> bool:
        """Same fingerprint and every listed file byte-identical."""
        return not self.changes


@dataclass
class BuildDiff:
    """Every stage of two builds, compared."""

    stages: list[StageDiff] = field(default_factory=list)
    only_a: list[tuple[str, str]] = field(default_factory=list)  # (stage, fingerprint)
    only_b: list[tuple[str, str]] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """No stage differs and no stage is on one side only."""
        return not self.only_a and not self.only_b and all(s.identical for s in self.stages)

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (`entbench diff --json`)."""
        return {
            "identical": self.identical,
            "stages": [
                {
                    "stage": s.stage,
                    "fingerprint_a": s.fingerprint_a,
                    "fingerprint_b": s.fingerprint_b,
                    "identical": s.identical,
                    "changes": [{"kind": c.kind, "key": c.key, "a": c.a, "b": c.b} for c in s.changes],
                }
                for s in self.stages
            ],
            "only_a": [{"stage": n, "fingerprint": f} for n, f in self.only_a],
            "only_b": [{"stage": n, "fingerprint": f} for n, f in self.only_b],
        }

    def render(self, *, show_identical: bool = False) -> str:
        """Human-readable report, one block per differing stage, then a summary line."""
        lines: list[str] = []
        for s in self.stages:
            if s.identical:
                if show_identical:
                    lines.append(f"= {s.stage}: identical (fingerprint {s.fingerprint_a[:12]})")
                continue
            fp = (
                f"fingerprint {s.fingerprint_a[:12]}"
                if s.fingerprint_a == s.fingerprint_b
                else f"fingerprint {s.fingerprint_a[:12]} -> {s.fingerprint_b[:12]}"
            )
            lines.append(f"~ {s.stage}: {fp}")
            lines.extend(f"    {c.describe()}" for c in s.changes)
        lines.extend(f"- {name}: only in A (fingerprint {fp[:12]})" for name, fp in self.only_a)
        lines.extend(f"+ {name}: only in B (fingerprint {fp[:12]})" for name, fp in self.only_b)
        same = sum(s.identical for s in self.stages)
        lines.append(
            f"{same} stage(s) identical, {len(self.stages) - same} differ, "
            f"{len(self.only_a)} only in A, {len(self.only_b)} only in B"
        )
        return "\n".join(lines)


def diff_manifests(a: Manifest, b: Manifest) -> tuple[Change, ...]:
    """The differences between two manifests of the same stage, most telling first."""
    changes: list[Change] = []
    if a.get("version") != b.get("version"):
        changes.append(Change("version", "version", a.get("version"), b.get("version")))
    changes += _mapping_changes("param", a.get("params", {}), b.get("params", {}))
    changes += _source_changes(a.get("sources", {}), b.get("sources", {}))
    changes += _mapping_changes(
        "input",
        {k: v.get("fingerprint") for k, v in a.get("inputs", {}).items()},
        {k: v.get("fingerprint") for k, v in b.get("inputs", {}).items()},
    )
    outputs_a, outputs_b = a.get("outputs", {}), b.get("outputs", {})
    for table in sorted(set(outputs_a) | set(outputs_b)):
        out_a, out_b = outputs_a.get(table), outputs_b.get(table)
        if out_a is None or out_b is None:
            changes.append(
                Change("schema", table, "present" if out_a else None, "present" if out_b else None)
            )
            continue
        if out_a.get("schema_hash") != out_b.get("schema_hash"):
            changes.append(
                Change("schema", table, out_a.get("schema_hash", "")[:12], out_b.get("schema_hash", "")[:12])
            )
        if out_a.get("rows") != out_b.get("rows"):
            changes.append(Change("rows", table, out_a.get("rows"), out_b.get("rows")))
        if out_a.get("num_shards") != out_b.get("num_shards"):
            changes.append(Change("num_shards", table, out_a.get("num_shards"), out_b.get("num_shards")))
            continue
        differing = [
            sa["file"]
            for sa, sb in zip(out_a["shards"], out_b["shards"], strict=True)
            if sa["sha256"] != sb["sha256"]
        ]
        if differing:
            changes.append(Change("shards", table, len(out_a["shards"]), len(differing)))
    files_a = {k: v.get("sha256") for k, v in a.get("files", {}).items()}
    files_b = {k: v.get("sha256") for k, v in b.get("files", {}).items()}
    for name in sorted(set(files_a) | set(files_b)):
        if files_a.get(name) != files_b.get(name):
            changes.append(Change("file", name, _short(files_a.get(name)), _short(files_b.get(name))))
    if a.get("fingerprint") == b.get("fingerprint"):
        touched = sorted({c.key for c in changes if c.kind in ("shards", "file", "rows")})
        if touched:
            changes.insert(0, Change("nondeterministic", ", ".join(touched), None, None))
    changes += _mapping_changes("stat", a.get("stats", {}), b.get("stats", {}))
    return tuple(changes)


def _short(sha: str | None) -> str | None:
    return None if sha is None else f"sha256 {sha[:12]}"


def _mapping_changes(kind: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    return [Change(kind, k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _source_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    changes = []
    for name in sorted(set(a) | set(b)):
        sa, sb = a.get(name), b.get(name)
        if (
            sa is None
            or sb is None
            or (sa.get("sha256"), sa.get("size")) != (sb.get("sha256"), sb.get("size"))
        ):
            changes.append(Change("source", name, _source(sa), _source(sb)))
    return changes


def _source(info: Mapping[str, Any] | None) -> str | None:
    if info is None:
        return None
    return f"{info.get('path')} ({info.get('size')} bytes, sha256 {str(info.get('sha256'))[:12]})"


def diff_builds(a: Sequence[Manifest], b: Sequence[Manifest]) -> BuildDiff:
    """Pair the stages of two builds (lists of manifests) and compare each pair."""
    by_name_a: dict[str, list[Manifest]] = defaultdict(list)
    by_name_b: dict[str, list[Manifest]] = defaultdict(list)
    for m in a:
        by_name_a[m["stage"]].append(m)
    for m in b:
        by_name_b[m["stage"]].append(m)
    result = BuildDiff()
    for name in sorted(set(by_name_a) | set(by_name_b)):
        left = sorted(by_name_a.get(name, []), key=lambda m: str(m["fingerprint"]))
        right = sorted(by_name_b.get(name, []), key=lambda m: str(m["fingerprint"]))
        for m in list(left):
            match = next((r for r in right if r["fingerprint"] == m["fingerprint"]), None)
            if match is not None:
                left.remove(m)
                right.remove(match)
                result.stages.append(
                    StageDiff(name, m["fingerprint"], match["fingerprint"], diff_manifests(m, match))
                )
        if len(left) == 1 and len(right) == 1:
            ma, mb = left.pop(), right.pop()
            result.stages.append(
                StageDiff(name, ma["fingerprint"], mb["fingerprint"], diff_manifests(ma, mb))
            )
        result.only_a += [(name, m["fingerprint"]) for m in left]
        result.only_b += [(name, m["fingerprint"]) for m in right]
    result.stages.sort(key=lambda s: (s.stage, s.fingerprint_a))
    return result
