"""`entbench.engine.diff` on the manifests of real fixture builds."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from entbench.engine.diff import diff_builds, diff_manifests
from entbench.engine.inspect import build_manifests
from entbench.engine.manifest import load_manifest
from tests import builds as samples


def quiet(target: str, out: Path, *params: str) -> dict[str, Path]:
    return samples.build(
        target, out=out, params=list(params), progress=False, log=lambda _m: None, card=False
    )


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    a, b, c = (tmp_path_factory.mktemp(n) for n in ("a", "b", "c"))
    quiet("wikidata", a)
    quiet("wikidata", b)
    quiet("wikidata", c, "wikidata.num_shards=2", "wikidata.languages=en")
    return a, b, c


def manifest(out: Path) -> dict[str, Any]:
    (directory,) = (out / "normalized" / "wikidata").glob("v*")
    return load_manifest(directory)


def test_two_builds_of_the_same_inputs_are_identical(builds: tuple[Path, Path, Path]) -> None:
    a, b, _ = builds
    result = diff_builds(build_manifests(a), build_manifests(b))
    assert result.identical
    assert [s.stage for s in result.stages] == ["wikidata"]
    assert result.render() == "1 stage(s) identical, 0 differ, 0 only in A, 0 only in B"


def test_parameter_changes_show_params_shards_rows_and_stats(builds: tuple[Path, Path, Path]) -> None:
    a, _, c = builds
    ma, mc = manifest(a), manifest(c)
    changes = {(ch.kind, ch.key): ch for ch in diff_manifests(ma, mc)}
    assert (changes[("param", "num_shards")].a, changes[("param", "num_shards")].b) == (4, 2)
    assert changes[("param", "languages")].b == ["en"]
    assert changes[("num_shards", "entities")].a == 4
    # fewer label languages: the entities table lost its zh columns
    assert ("schema", "entities") in changes
    assert ("nondeterministic", "entities") not in {(k, key) for k, key in changes}
    text = diff_builds([ma], [mc]).render()
    assert text.startswith(f"~ wikidata: fingerprint {ma['fingerprint'][:12]} -> {mc['fingerprint'][:12]}")
    assert "param num_shards: 4 -> 2" in text


def test_same_fingerprint_different_bytes_is_called_nondeterministic(builds: tuple[Path, Path, Path]) -> None:
    a, _, _ = builds
    ma = manifest(a)
    mb = copy.deepcopy(ma)
    mb["outputs"]["sitelinks"]["shards"][1]["sha256"] = "0" * 64
    (first, *rest) = diff_manifests(ma, mb)
    assert first.kind == "nondeterministic" and first.key == "sitelinks"
    assert [(c.kind, c.key, c.a, c.b) for c in rest] == [("shards", "sitelinks", 4, 1)]


def test_pairing_versions_and_one_sided_stages(builds: tuple[Path, Path, Path]) -> None:
    a, b, c = builds
    ma, mb, mc = manifest(a), manifest(b), manifest(c)
    # A holds two versions of the stage, B one: the equal fingerprints pair, the other is A's only.
    result = diff_builds([mc, ma], [mb])
    assert [(s.fingerprint_a, s.identical) for s in result.stages] == [(ma["fingerprint"], True)]
    assert result.only_a == [("wikidata", mc["fingerprint"])] and not result.only_b
    assert not result.identical
    other = copy.deepcopy(ma)
    other["stage"] = "wikidata_old"
    assert diff_builds([ma], [ma, other]).only_b == [("wikidata_old", ma["fingerprint"])]
    doc = result.to_json()
    assert doc["identical"] is False and doc["only_a"] == [
        {"stage": "wikidata", "fingerprint": mc["fingerprint"]}
    ]
