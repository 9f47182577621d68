"""Golden fixture shards: `make fixtures` records them, `make fixtures-check` (CI) proves them unchanged.

For every target of the bundled demo world (`fixtures/entbench.toml`, built with no --config and
no --source, as `make run` builds it), `fixtures/golden/<target>.json` lists each stage's
fingerprint and the sha256 and row count of every shard. `check` rebuilds everything from scratch
in a temporary directory and fails, naming each differing shard, if any byte changed. A change
that is meant to alter outputs (or a dependency upgrade that does) is committed together with the
regenerated golden files, in a commit of its own.

    python -m entbench.golden regenerate | check
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from entbench import api
from entbench.engine import registry
from entbench.engine.config import default_config_path
from entbench.engine.manifest import load_manifest
from entbench.engine.stage import BuildOptions

#: Every registered target, each of which the demo world builds, in build order (later ones reuse
#: the stages of earlier ones): what `entbench targets` prints and `make run` builds.
GOLDEN_TARGETS: tuple[str, ...] = tuple(registry.build_order())


def golden_dir() -> Path:
    """`fixtures/golden/` next to the bundled config."""
    return default_config_path().parent / "golden"


def snapshot(
    out: Path, workers: int = 1, shuffle_groups: int = BuildOptions.shuffle_groups
) -> dict[str, dict[str, Any]]:
    """Build every golden target into `out`; target -> stage -> fingerprint and shard hashes.

    `shuffle_groups` (`BuildOptions`) can route the map-reduce stages through the merge pass."""
    result: dict[str, dict[str, Any]] = {}
    for target in GOLDEN_TARGETS:
        dirs = api.build(
            target,
            out=out,
            workers=workers,
            progress=False,
            log=lambda _m: None,
            shuffle_groups=shuffle_groups,
        )
        stages: dict[str, Any] = {}
        for stage, directory in sorted(dirs.items()):
            manifest = load_manifest(directory)
            files = {
                s["file"]: {"sha256": s["sha256"], "rows": s["rows"]}
                for table in sorted(manifest["outputs"])
                for s in manifest["outputs"][table]["shards"]
            }
            files.update(
                {name: {"sha256": info["sha256"]} for name, info in manifest.get("files", {}).items()}
            )
            stages[stage] = {"fingerprint": manifest["fingerprint"], "files": dict(sorted(files.items()))}
        result[target] = stages
    return result


def regenerate() -> int:
    """Rebuild the golden targets and rewrite `fixtures/golden/*.json`."""
    target_dir = golden_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="entbench-golden-") as tmp:
        snap = snapshot(Path(tmp))
    for stale in target_dir.glob("*.json"):
        if stale.stem not in snap:
            stale.unlink()
    for target, stages in snap.items():
        path = target_dir / f"{target}.json"
        path.write_text(json.dumps(stages, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


def diff(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable differences between two snapshots of one target."""
    problems = []
    for stage in sorted(set(expected) | set(actual)):
        if stage not in actual:
            problems.append(f"{stage}: stage no longer built")
            continue
        if stage not in expected:
            problems.append(f"{stage}: new stage, not in the golden files (run `make fixtures`)")
            continue
        exp_files, act_files = expected[stage]["files"], actual[stage]["files"]
        if expected[stage]["fingerprint"] != actual[stage]["fingerprint"]:
            problems.append(f"{stage}: fingerprint changed (parameters, schema, version or inputs)")
        for name in sorted(set(exp_files) | set(act_files)):
            if exp_files.get(name) != act_files.get(name):
                problems.append(f"{stage}/{name}: {exp_files.get(name)} != {act_files.get(name)}")
    return problems


def check() -> int:
    """Rebuild into a temporary directory and compare with the committed golden files."""
    with tempfile.TemporaryDirectory(prefix="entbench-golden-") as tmp:
        snap = snapshot(Path(tmp))
    failures = 0
    for target, stages in snap.items():
        path = golden_dir() / f"{target}.json"
        if not path.exists():
            print(f"{target}: no golden file {path}; run `make fixtures`", file=sys.stderr)
            failures += 1
            continue
        problems = diff(json.loads(path.read_text(encoding="utf-8")), stages)
        for problem in problems:
            print(f"{target}: {problem}", file=sys.stderr)
        failures += bool(problems)
        if not problems:
            print(f"{target}: {sum(len(s['files']) for s in stages.values())} files match {path.name}")
    return 1 if failures else 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command not in ("regenerate", "check"):
        print("usage: python -m entbench.golden regenerate|check", file=sys.stderr)
        sys.exit(2)
    sys.exit(regenerate() if command == "regenerate" else check())
