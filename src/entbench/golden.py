"""Golden fixture shards: `make fixtures` records them, `make fixtures-check` (CI) proves them unchanged.

For every target of the bundled demo world (`fixtures/entbench.toml`, built with no --config and
no --source, as `make run` builds it), `fixtures/golden/<target>.json` lists each stage's
fingerprint and the sha256 and row count of every shard. `check` rebuilds everything from scratch
in a temporary directory and fails, naming each differing shard, if any byte changed; the test
suite makes the same comparison on its one shared build of the world (`built_snapshot`). A change
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
from entbench.engine import build_out, registry
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
        result[target] = stage_hashes(dirs)
    return result


def built_snapshot(out: Path) -> dict[str, dict[str, Any]]:
    """The snapshot of a build of every golden target already in `out`, read from each target's
    listing (`targets/<target>.json`) and its stages' manifests: nothing is built."""
    result: dict[str, dict[str, Any]] = {}
    for target in GOLDEN_TARGETS:
        listing = build_out.listing_file(out, target)
        stages = build_out.listed_stages(listing.read_bytes())
        result[target] = stage_hashes({stage: out / rel for stage, rel in stages.items()})
    return result


def stage_hashes(dirs: dict[str, Path]) -> dict[str, Any]:
    """Stage -> its fingerprint and the sha256 (and rows) of each of its files, from the manifests."""
    stages: dict[str, Any] = {}
    for stage, directory in sorted(dirs.items()):
        manifest = load_manifest(directory)
        files = {
            s["file"]: {"sha256": s["sha256"], "rows": s["rows"]}
            for table in sorted(manifest["outputs"])
            for s in manifest["outputs"][table]["shards"]
        }
        files.update({name: {"sha256": info["sha256"]} for name, info in manifest.get("files", {}).items()})
        stages[stage] = {"fingerprint": manifest["fingerprint"], "files": dict(sorted(files.items()))}
    return stages


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
        return report(snapshot(Path(tmp)))


def problems_by_target(snap: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Target -> how its snapshot differs from its golden file (empty when every byte matches)."""
    found: dict[str, list[str]] = {}
    for target, stages in snap.items():
        path = golden_dir() / f"{target}.json"
        if not path.exists():
            found[target] = [f"no golden file {path}; run `make fixtures`"]
            continue
        found[target] = diff(json.loads(path.read_text(encoding="utf-8")), stages)
    return found


def report(snap: dict[str, dict[str, Any]]) -> int:
    """Print each target's verdict (differences on stderr); 1 if any target differs, else 0."""
    found = problems_by_target(snap)
    for target, problems in found.items():
        for problem in problems:
            print(f"{target}: {problem}", file=sys.stderr)
        if not problems:
            files = sum(len(s["files"]) for s in snap[target].values())
            print(f"{target}: {files} files match {target}.json")
    return 1 if any(found.values()) else 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command not in ("regenerate", "check"):
        print("usage: python -m entbench.golden regenerate|check", file=sys.stderr)
        sys.exit(2)
    sys.exit(regenerate() if command == "regenerate" else check())
