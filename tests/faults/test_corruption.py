"""A flipped byte, a truncated or a missing shard: `verify` names it, `build` rebuilds it.

After the repair the build directory is byte-identical to the undamaged one, and only the damaged
shard's stage ran again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.faults.fault_support import quiet_build, snapshot

CLI = Callable[[list[str]], Result]
SHARD = "truthy_claims/part-00002-of-00004.parquet"


@pytest.fixture(scope="module")
def pristine(solo_build: Callable[[str], Path]) -> Path:
    """The undamaged kb build (shared: each test damages its own copy)."""
    return solo_build("kb")


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def delete(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (flip_byte, "sha256 differs from the manifest (corrupted)"),
        (truncate, "bytes, manifest says"),
        (delete, "missing"),
    ],
)
def test_verify_names_the_bad_shard_and_build_repairs_it(
    damage: Callable[[Path], None], message: str, pristine: Path, tmp_path: Path, run_cli: CLI
) -> None:
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    expected = snapshot(out)
    (stage,) = (out / "normalized" / "wikidata_old").glob("v*")
    damage(stage / SHARD)
    result = run_cli(["verify", str(out)])
    assert result.exit_code == 1
    assert f"entbench: verify failed: {stage}: {SHARD}" in result.output
    assert message in result.output
    log: list[str] = []
    quiet_build("kb", out, log=log)
    rebuilt = [line for line in log if "rebuilding the damaged shards" in line]
    assert len(rebuilt) == 1 and rebuilt[0].startswith("wikidata_old: shard ")
    # downstream stages read the repaired shard's identical bytes: they stay up to date
    assert sum("up to date" in line for line in log) == 6
    assert run_cli(["verify", str(out)]).exit_code == 0
    assert snapshot(out) == expected


def test_a_corrupted_manifest_is_named_and_its_stage_rebuilt(
    pristine: Path, tmp_path: Path, run_cli: CLI
) -> None:
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    expected = snapshot(out)
    (stage,) = (out / "derived" / "coarse_types").glob("v*")
    manifest = stage / "_MANIFEST.json"
    manifest.write_bytes(manifest.read_bytes()[:-40])  # cut mid-JSON
    result = run_cli(["verify", str(out)])
    assert result.exit_code == 1
    assert f"{stage}: _MANIFEST.json: unreadable" in result.output
    quiet_build("kb", out)
    assert run_cli(["verify", str(out)]).exit_code == 0
    assert snapshot(out) == expected
