"""Builds published to a store (`--out URL`): fsspec's in-process `memory://` store stands in for
s3:// (same fsspec calls; CI has no bucket). Real fixture dumps, compared with local builds."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from entbench.engine.build_out import locate_stage
from entbench.engine.manifest import MANIFEST_NAME, load_manifest, manifest_files
from entbench.engine.store import Store, default_work_dir
from entbench.errors import StorageError
from tests import builds as samples
from tests.builders.kb.support import FIXTURES, KB_STAGES, shard_hashes

fsspec = pytest.importorskip("fsspec")

WIKIDATA = f"wikidata={FIXTURES / 'wikidata' / 'entities-old.json.bz2'}"


def store_url(tmp_path: Path) -> str:
    return f"memory://entbench-store-{tmp_path.name}/build"


def store_bytes(url: str, rel: str) -> bytes:
    with fsspec.open(f"{url}/{rel}", "rb") as f:
        data: bytes = f.read()
    return data


def build(target: str, out: str | Path, log: list[str] | None = None, **kwargs: Any) -> dict[str, Path]:
    sink: Callable[[str], None] = log.append if log is not None else (lambda _m: None)
    return samples.build(target, out=out, progress=False, log=sink, **kwargs)


def assert_store_holds(url: str, local_root: Path, local_dir: Path) -> None:
    """The store has the stage at the same relative path, every file of its manifest byte-identical."""
    rel = local_dir.relative_to(local_root).as_posix()
    assert store_bytes(url, f"{rel}/{MANIFEST_NAME}") == (local_dir / MANIFEST_NAME).read_bytes()
    for entry in manifest_files(load_manifest(local_dir)):
        assert hashlib.sha256(store_bytes(url, f"{rel}/{entry['file']}")).hexdigest() == entry["sha256"]


def test_kb_published_to_a_store_is_the_bytes_of_a_local_build(tmp_path: Path) -> None:
    local = build("kb", tmp_path / "local", card=False)
    url = store_url(tmp_path)
    work = tmp_path / "work"
    published = build("kb", url, work_dir=work)
    assert published.keys() == local.keys() and set(KB_STAGES) <= set(local)
    for stage, directory in local.items():
        assert published[stage].relative_to(work) == directory.relative_to(tmp_path / "local"), stage
        assert_store_holds(url, tmp_path / "local", directory)
    listing = json.loads(store_bytes(url, "targets/kb.json"))
    assert listing == json.loads((work / "targets" / "kb.json").read_text(encoding="utf-8"))
    card = json.loads(store_bytes(url, "cards/kb/card.json"))
    assert card["target"] == "kb"
    assert b"# " in store_bytes(url, "cards/kb/README.md")


def test_a_build_from_another_work_dir_takes_the_stages_from_the_store(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    first = build("wikidata", url, work_dir=tmp_path / "w1", sources=[WIKIDATA], card=False)["wikidata"]

    # A second machine (a fresh work dir) builds title-qid: the Wikidata scan is found in the store
    # and downloaded, since title_qid reads it; the Wikipedia scan and title_qid are built.
    log: list[str] = []
    second = build("title-qid", url, log, work_dir=tmp_path / "w2", sources=[WIKIDATA], card=False)
    assert any(line.startswith("wikidata: up to date (memory://") for line in log), log
    assert any(line.startswith("fetched memory://") for line in log), log
    assert not any(line.startswith("wikidata: wrote") for line in log), log
    assert (second["wikidata"] / MANIFEST_NAME).read_bytes() == (first / MANIFEST_NAME).read_bytes()
    assert any(line.startswith("title_qid: wrote") for line in log), log
    local = build("title-qid", tmp_path / "local", sources=[WIKIDATA], card=False)
    for directory in local.values():
        assert_store_holds(url, tmp_path / "local", directory)

    # A third: every stage is in the store, so nothing is built and nothing downloaded.
    log.clear()
    third = build("title-qid", url, log, work_dir=tmp_path / "w3", sources=[WIKIDATA], card=False)
    assert sum("up to date (memory://" in line for line in log) == len(third), log
    assert not any(d.exists() for d in third.values())


def test_an_upload_cut_short_leaves_no_manifest_and_the_rerun_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = store_url(tmp_path)
    work = tmp_path / "work"
    sent = {"n": 0}
    put = Store._put

    def fails_after_three(self: Store, source: Path, remote: str) -> None:
        if sent["n"] == 3:
            raise ConnectionError("connection reset by peer")
        sent["n"] += 1
        put(self, source, remote)

    monkeypatch.setattr(Store, "_put", fails_after_three)
    params = ["wikidata.num_shards=3"]
    with pytest.raises(StorageError, match=r"uploading .* failed \(ConnectionError: connection reset"):
        build("wikidata", url, work_dir=work, sources=[WIKIDATA], params=params, card=False)
    stage = next((work / "normalized" / "wikidata").glob("v*"))  # complete in the work dir
    rel = stage.relative_to(work).as_posix()
    fs = fsspec.filesystem("memory")
    root = url.removeprefix("memory://")
    assert len(fs.find(f"{root}/{rel}")) == 3 and not fs.exists(f"{root}/{rel}/{MANIFEST_NAME}")
    assert Store(url).read_manifest(rel) is None

    monkeypatch.setattr(Store, "_put", put)
    log: list[str] = []
    build("wikidata", url, log, work_dir=work, sources=[WIKIDATA], params=params, card=False)
    assert any(line.startswith("wikidata: up to date (") for line in log)  # not rebuilt, only published
    assert any(line.startswith(f"published {url}/{rel}") for line in log), log
    assert_store_holds(url, work, stage)

    # A shard deleted from the store: the stage counts as unpublished and is published again.
    shard = manifest_files(load_manifest(stage))[0]["file"]
    fs.rm(f"{root}/{rel}/{shard}")
    assert Store(url).read_manifest(rel) is None
    build("wikidata", url, work_dir=work, sources=[WIKIDATA], params=params, card=False)
    assert_store_holds(url, work, stage)


def test_cli_publishes_prints_store_locations_and_verifies(tmp_path: Path, run_cli: Any) -> None:
    url = store_url(tmp_path)
    args = ["build", "wikidata", "--no-progress", "--source", WIKIDATA, "--out", url]
    built = run_cli([*args, "--work-dir", str(tmp_path / "work")])
    assert built.exit_code == 0, built.stderr
    assert f"listed in {url}/targets/wikidata.json" in built.stdout
    assert f"  wikidata: {url}/normalized/wikidata/v" in built.stdout

    verified = run_cli(["verify", url])
    assert verified.exit_code == 0, verified.stderr
    assert verified.stdout.startswith("ok: ") and "in 1 stage directory" in verified.stdout

    fs = fsspec.filesystem("memory")
    root = url.removeprefix("memory://")
    shard = sorted(p for p in fs.find(root) if p.endswith(".parquet"))[0]
    data = bytearray(fs.cat_file(shard))
    data[len(data) // 2] ^= 0xFF
    fs.pipe_file(shard, bytes(data))
    corrupted = run_cli(["verify", url])
    assert corrupted.exit_code == 1
    assert "sha256 differs from the manifest (corrupted)" in corrupted.stderr
    assert shard.rsplit("/", 1)[1] in corrupted.stderr

    local_only = run_cli([*args, "--work-dir", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    assert local_only.exit_code == 2 and "--work-dir is only for an --out URL" in local_only.stderr


def test_a_store_without_its_driver_is_one_usage_error(tmp_path: Path, run_cli: Any) -> None:
    if importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed: s3:// would be reached")
    refused = run_cli(["build", "wikidata", "--no-progress", "--out", "s3://bucket/entbench"])
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1 and "s3fs" in refused.stderr
    unknown = run_cli(["build", "wikidata", "--no-progress", "--out", "nosuchproto://bucket/x"])
    assert unknown.exit_code == 2 and unknown.stderr.count("\n") == 1


def test_a_damaged_copy_in_the_store_is_not_taken_when_downloaded(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    stage = build("wikidata", url, work_dir=tmp_path / "w1", sources=[WIKIDATA], card=False)["wikidata"]
    rel = stage.relative_to(tmp_path / "w1").as_posix()
    fs = fsspec.filesystem("memory")
    shard = f"{url.removeprefix('memory://')}/{rel}/{manifest_files(load_manifest(stage))[0]['file']}"
    data = bytearray(fs.cat_file(shard))
    data[-100] ^= 0xFF  # same size: only the hash can tell
    fs.pipe_file(shard, bytes(data))
    with pytest.raises(
        StorageError, match=r"does not match its sha256 .* after download: the store's copy is damaged"
    ):
        build("title-qid", url, work_dir=tmp_path / "w2", sources=[WIKIDATA], card=False)
    assert not (tmp_path / "w2" / rel).exists()
    assert not list((tmp_path / "w2" / rel).parent.glob(".fetch-*"))


def test_a_published_build_is_read_from_its_url(
    tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inspect, alias lookup, card and the exports' `locate_stage` take the store URL; what they
    read is downloaded once into the URL's work directory, and only the stages they read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = store_url(tmp_path)
    wikipedia = f"wikipedia={FIXTURES / 'wikipedia' / 'enwiki.dbpedia-minidump.part.xml.bz2'}"
    built = build("alias-table", url, work_dir=tmp_path / "w1", sources=[wikipedia])
    w1 = tmp_path / "w1"

    def inspected(where: str) -> Any:
        result = run_cli(["inspect", where, "--json", "--rows", "3"])
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    remote = inspected(url)
    local = inspected(str(w1))
    assert [r["stage"] for r in remote] == [r["stage"] for r in local]
    for there, here in zip(remote, local, strict=True):
        assert there["directory"] == f"{url}/{Path(here['directory']).relative_to(w1).as_posix()}"
        assert {**there, "directory": ""} == {**here, "directory": ""}
    rel = built["alias_table"].relative_to(w1).as_posix()
    one = inspected(f"{url}/{rel}")
    assert one["stage"] == "alias_table" and one["tables"]["alias_table"]["sample"]
    text = run_cli(["inspect", url])
    assert text.exit_code == 0 and "derived/alias_table" in text.stdout

    lookups = [run_cli(["alias", "lookup", "London", "--from", where, "--json"]) for where in (url, str(w1))]
    assert lookups[0].exit_code == 0, lookups[0].stderr
    remote_lookup, local_lookup = (json.loads(r.stdout) for r in lookups)
    # Labels come from the build's Wikidata scan, which a lookup never downloads from a store
    # (a full scan is far too big for a few labels): there only where the scan is already local.
    assert [c.pop("label") for c in remote_lookup["candidates"]] == [None]
    assert [c.pop("label") for c in local_lookup["candidates"]] == ["London"]
    assert remote_lookup == local_lookup
    cache = default_work_dir(url)
    fetched = sorted(p.parent.relative_to(cache).as_posix() for p in cache.glob("*/*/*/_MANIFEST.json"))
    assert fetched == sorted(built[s].relative_to(w1).as_posix() for s in ("alias_table", "mention_stats"))

    stage = locate_stage(url, "alias-table", "title_qid")
    assert Path(stage.directory) == cache / built["title_qid"].relative_to(w1)
    assert shard_hashes(Path(stage.directory)) == shard_hashes(built["title_qid"])

    fs = fsspec.filesystem("memory")
    fs.rm(f"{url.removeprefix('memory://')}/cards/alias-table", recursive=True)
    card = run_cli(["card", "alias-table", "--from", url])
    assert card.exit_code == 0, card.stderr
    assert json.loads(store_bytes(url, "cards/alias-table/card.json"))["target"] == "alias-table"
