"""The synthetic dump generator (`bench/gen_wikidata.py`): real layout, parsed by entbench's scan
with zero rejects, every datavalue type present, reproducible bytes, and the reference scans of
the benchmark doing the same work as entbench on it. No timings here (they live in bench/run.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

Dump = tuple[Path, dict[str, Any]]
#: Small enough to keep these tests at a few seconds, big enough for every feature to occur.
ENTITIES = 300
SEED = 7


@pytest.fixture(scope="module")
def dump(gen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Dump:
    """A generated dump (uncompressed) and the generator's summary of its content."""
    path = tmp_path_factory.mktemp("dump") / "synthetic.json"
    stats = gen.generate(path, ENTITIES, SEED)
    return path, stats.to_json()


@pytest.fixture(scope="module")
def scan(dump: Dump, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """`entbench build wikidata` on the generated dump: the stage directory and its manifest."""
    from entbench.api import build

    out = tmp_path_factory.mktemp("build")
    dirs = build(
        "wikidata",
        sources=[f"wikidata={dump[0]}"],
        params=["wikidata.num_shards=2", "wikidata.languages=en,zh", "wikidata.sites=enwiki,zhwiki"],
        out=out,
        progress=False,
        log=lambda _msg: None,
        card=False,
    )
    stage_dir = Path(dirs["wikidata"])
    return stage_dir, json.loads((stage_dir / "_MANIFEST.json").read_text())


def read_table(stage_dir: Path, name: str) -> pa.Table:
    """All shards of one output table."""
    return pa.concat_tables(pq.read_table(p) for p in sorted((stage_dir / name).glob("*.parquet")))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_real_dump_layout(dump: Dump) -> None:
    """`[`, entity lines ending in `,` (the last without), `]`; PHP-style ASCII JSON, `/` escaped."""
    path, stats = dump
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == b"[" and lines[-2] == b"]" and lines[-1] == b""
    entity_lines = lines[1:-2]
    assert len(entity_lines) == ENTITIES == stats["entities"]
    assert all(line.endswith(b",") for line in entity_lines[:-1])
    assert not entity_lines[-1].endswith(b",")
    assert path.stat().st_size == stats["json_bytes"]
    raw = path.read_bytes()
    assert raw.isascii() and b"\\/" in raw and b"\\u" in raw and b"1.0e-5" in raw
    ids = [json.loads(line.rstrip(b","))["id"] for line in entity_lines]
    assert len(set(ids)) == ENTITIES
    assert {i[0] for i in ids} == {"Q", "P", "L"}


def test_line_sizes_have_a_long_tail(dump: Dump) -> None:
    """Mean line in the ~15 KB range of real dumps, with a tail well above the median."""
    sizes = dump[1]["line_bytes"]
    assert 8_000 < sizes["mean"] < 40_000
    assert sizes["p99"] > 4 * sizes["p50"]


def test_same_seed_same_bytes(gen: ModuleType, dump: Dump, tmp_path: Path) -> None:
    """A seed and an entity count fix the bytes, compressed or not; another seed changes them."""
    again = tmp_path / "again.json"
    assert ENTITIES > gen.BLOCK_ENTITIES
    gen.generate(again, ENTITIES, SEED, jobs=2)  # blocks rendered by two processes
    assert sha256(again) == sha256(dump[0])
    gz_a, gz_b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    assert gen.main(["--entities", str(ENTITIES), "--seed", str(SEED), "--out", str(gz_a), "--gzip"]) == 0
    gen.gzip_file(dump[0], gz_b)
    assert sha256(gz_a) == sha256(gz_b)
    assert gzip.decompress(gz_a.read_bytes()) == dump[0].read_bytes()
    other = tmp_path / "other.json"
    gen.generate(other, ENTITIES, SEED + 1)
    assert sha256(other) != sha256(dump[0])


def test_entbench_scan_has_zero_rejects(dump: Dump, scan: tuple[Path, dict[str, Any]]) -> None:
    """Every line decodes on entbench's fast typed path; every entity becomes a row."""
    stage_dir, manifest = scan
    stats = manifest["stats"]
    assert stats["lines_total"] == ENTITIES
    assert stats["entities_written"] == ENTITIES
    assert not [k for k in stats if k.startswith("rejected")]
    assert "slow_path_lines" not in stats and "unsupported_datavalues" not in stats
    assert (stage_dir / "_rejects.jsonl").read_text() == ""
    entities = read_table(stage_dir, "entities")
    assert entities.num_rows == ENTITIES
    assert set(entities.column("type").to_pylist()) == {"item", "property", "lexeme"}


def test_covers_every_datavalue_type(dump: Dump, scan: tuple[Path, dict[str, Any]]) -> None:
    """Main snaks and qualifiers in entbench's output hold every datavalue kind and its quirks."""
    stats = dump[1]
    claims = read_table(scan[0], "truthy_claims")
    rows = claims.drop_columns(["qualifiers"]).to_pylist()
    rows += pc.list_flatten(claims.column("qualifiers")).to_pylist()
    value_types = {r["value_type"] for r in rows}
    assert value_types >= {
        "wikibase-entityid", "string", "time", "quantity", "globecoordinate", "monolingualtext"
    }  # fmt: skip
    assert {r["datatype"] for r in rows} >= {
        "wikibase-item", "wikibase-property", "wikibase-lexeme", "wikibase-form", "wikibase-sense",
        "external-id", "string", "url", "commonsMedia", "time", "quantity", "globe-coordinate",
        "monolingualtext",
    }  # fmt: skip
    assert {r["snaktype"] for r in rows} == {"value", "somevalue", "novalue"}
    assert {r["time_precision"] for r in rows} >= {7, 8, 9, 10, 11}
    assert any(r["time"] and r["time"].startswith("-") for r in rows)  # BC
    assert any(r["unit"] not in (None, "1") and r["lower_bound"] and r["upper_bound"] for r in rows)
    assert any(r["latitude"] is not None and r["coord_precision"] is None for r in rows)
    # numeric-id-only references (2014-2016 style) were written and all resolve to an id
    assert stats["features"]["numeric_id_only_refs"] > 0
    entity_values = [r for r in rows if r["value_type"] == "wikibase-entityid"]
    assert all(r["item"] for r in entity_values)
    assert {r["item"][0] for r in entity_values} >= {"Q", "P", "L"}
    assert any("-F" in r["item"] for r in entity_values) and any("-S" in r["item"] for r in entity_values)


def test_ranks_and_truthiness(dump: Dump, scan: tuple[Path, dict[str, Any]]) -> None:
    """The dump has all three ranks; the truthy table has no deprecated statement."""
    assert set(dump[1]["ranks"]) == {"preferred", "normal", "deprecated"}
    ranks = set(read_table(scan[0], "truthy_claims").column("rank").to_pylist())
    assert ranks == {"preferred", "normal"}


def test_p279_hierarchy_is_deep_with_cycles(gen: ModuleType, scan: tuple[Path, dict[str, Any]]) -> None:
    """Truthy P279 edges form a hierarchy >= 15 deep once the few cycle-closing edges are removed."""
    claims = read_table(scan[0], "truthy_claims")
    p279 = claims.filter(pc.equal(claims.column("property"), "P279"))
    graph = nx.DiGraph(zip(p279.column("subject").to_pylist(), p279.column("item").to_pylist(), strict=True))
    assert not nx.is_directed_acyclic_graph(graph)
    layout = gen.make_layout(random.Random(SEED), ENTITIES)  # the generator's first use of the rng
    cycle_edges = [(f"Q{a}", f"Q{b}") for a, b in layout.cycle_edges]
    assert cycle_edges and all(graph.has_edge(a, b) for a, b in cycle_edges)
    graph.remove_edges_from(cycle_edges)
    assert nx.is_directed_acyclic_graph(graph)
    assert nx.dag_longest_path_length(graph) >= 15
    assert gen.DEPTH_LEVELS - 1 >= 15


def test_reference_scans_do_the_same_work(
    dump: Dump, scan: tuple[Path, dict[str, Any]], scanners: ModuleType
) -> None:
    """The benchmark's stdlib and qwikidata baselines select the same truthy claims, aliases and
    sitelinks as entbench, and the limit scan decodes every entity: the ratios compare equal work."""
    stage_dir, manifest = scan
    rows = {name: sum(s["rows"] for s in out["shards"]) for name, out in manifest["outputs"].items()}
    claims = read_table(stage_dir, "truthy_claims")
    qualifier_count = pc.sum(pc.list_value_length(claims.column("qualifiers"))).as_py()
    expected = (ENTITIES, rows["truthy_claims"], qualifier_count, rows["aliases"], rows["sitelinks"], 0)
    languages, sites = ("en", "zh"), ("enwiki", "zhwiki")
    for scan_fn in (scanners.scan_stdlib, scanners.scan_qwikidata):
        work = scan_fn(str(dump[0]), languages, sites)
        got = (work.entities, work.truthy_claims, work.qualifiers, work.aliases, work.sitelinks, work.errors)
        assert got == expected, scan_fn.__name__
    limit = scanners.scan_limit(str(dump[0]), languages, sites)
    assert (limit.entities, limit.errors) == (ENTITIES, 0)
