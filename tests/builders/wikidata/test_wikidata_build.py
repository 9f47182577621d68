"""`entbench build wikidata` end to end: counts, rejects, determinism, skip, resume."""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from entbench.engine import manifest as manifest_module
from entbench.engine import runner, tasks
from entbench.engine.manifest import load_manifest
from entbench.engine.shards import file_sha256
from entbench.errors import DataError
from tests import builds as samples
from tests.builders.kb.support import die_after, shard_hashes
from tests.conftest import SAMPLES_CONFIG

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "wikidata"
REAL_DUMPS = [
    "entities-old.json.bz2",
    "entities-new.json.bz2",
    "latest-all.2017-03.head-part.json.bz2",
    "entitydata-revisions.jsonl.bz2",
    "labels-en.entity-metadata.jsonl.gz",
]


def build(out: Path, source: Path | str, *extra_params: str, **kwargs: Any) -> Path:
    """Build the wikidata target quietly and without its card (no test here reads one); returns
    the stage directory."""
    kwargs.setdefault("card", False)
    dirs = samples.build(
        "wikidata",
        sources=[f"wikidata={source}"],
        params=["wikidata.num_shards=4", *extra_params],
        out=out,
        progress=False,
        log=lambda _msg: None,
        **kwargs,
    )
    return dirs["wikidata"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`built(NAME)`: the stage directory of `build` on the fixture dump NAME with the default
    parameters, made once for this module (every test that only reads such a build shares it;
    tests that damage, re-run or kill a build make their own)."""
    stages: dict[str, Path] = {}

    def stage(name: str) -> Path:
        if name not in stages:
            stages[name] = build(tmp_path_factory.mktemp("built"), FIXTURES / name)
        return stages[name]

    return stage


def read_table(stage_dir: Path, table: str) -> list[dict[str, Any]]:
    files = sorted((stage_dir / table).glob("part-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def entity_line_count(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if line.strip() not in (b"", b"[", b"]"))


def rejects(stage_dir: Path) -> list[dict[str, Any]]:
    text = (stage_dir / "_rejects.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("name", REAL_DUMPS)
def test_every_real_dump_builds_and_accounts_for_every_line(built: Callable[[str], Path], name: str) -> None:
    stage = built(name)
    manifest = load_manifest(stage)
    opener = bz2.open if name.endswith(".bz2") else gzip.open
    with opener(FIXTURES / name, "rb") as f:
        lines = entity_line_count(f.read())
    stats = manifest["stats"]
    entities = manifest["outputs"]["entities"]["rows"]
    assert stats["lines_total"] == lines
    # Nothing silently dropped: rows + rejects (incl. superseded duplicates) + bare redirects = lines.
    assert entities + len(rejects(stage)) + stats.get("redirect_only_lines", 0) == lines
    assert stats.get("rejected_total", 0) == 0
    ids = [r["id"] for r in read_table(stage, "entities")]
    assert len(ids) == len(set(ids))


def test_revisions_dump_keeps_the_newest_revision_per_id(built: Callable[[str], Path]) -> None:
    stage = built("entitydata-revisions.jsonl.bz2")
    by_id = {r["id"]: r for r in read_table(stage, "entities")}
    duplicates = [r for r in rejects(stage) if r["reason"] == "duplicate_id"]
    assert len(by_id) == 64 and len(duplicates) == 10  # 74 revisions of 64 ids (MANIFEST.tsv)
    with bz2.open(FIXTURES / "entitydata-revisions.jsonl.bz2") as f:
        revisions: dict[str, list[int]] = {}
        for line in f:
            doc = next(iter(json.loads(line)["entities"].values()))
            revisions.setdefault(doc["id"], []).append(doc.get("lastrevid", -1))
    for ident, revs in revisions.items():
        assert (by_id[ident]["lastrevid"] or -1) == max(revs)
    # The superseded revisions' claims are gone too: every claim row belongs to a kept revision.
    claims = read_table(stage, "truthy_claims")
    kept_q1_ids = {r["statement_id"] for r in claims if r["subject"] == "Q1"}
    assert len(kept_q1_ids) == sum(1 for r in claims if r["subject"] == "Q1")


def test_two_workers_write_identical_bytes(tmp_path: Path) -> None:
    source = FIXTURES / "entities-new.json.bz2"
    one = build(tmp_path / "w1", source, workers=1, chunk_mb=1)
    two = build(tmp_path / "w2", source, workers=2, chunk_mb=1)
    assert shard_hashes(one) == shard_hashes(two)
    assert (one / "_rejects.jsonl").read_bytes() == (two / "_rejects.jsonl").read_bytes()


def test_uncompressed_byte_ranges_match_compressed_stream(
    tmp_path: Path, built: Callable[[str], Path]
) -> None:
    plain = tmp_path / "dump.json"
    with bz2.open(FIXTURES / "entities-new.json.bz2") as f:
        plain.write_bytes(f.read())
    from_bz2 = built("entities-new.json.bz2")
    # 1 MB ranges split the 4 MB dump mid-line: every line must still be read exactly once.
    # (Bytes differ only because the source identity is stamped into each file's fingerprint.)
    from_ranges = build(tmp_path / "b", plain, workers=2, chunk_mb=1)
    for table in ("entities", "aliases", "truthy_claims", "outranked_type_claims", "sitelinks", "redirects"):
        assert read_table(from_bz2, table) == read_table(from_ranges, table)


@pytest.mark.parametrize("dump", ["entities-old.json.bz2", "entities-new.json.bz2"])
def test_outranked_type_claims_are_every_non_truthy_p31_p279(built: Callable[[str], Path], dump: str) -> None:
    # Reference from the raw JSON with the stdlib: per entity and property, the statements whose
    # rank is not the best non-deprecated rank (spec §1), with their item value where there is one.
    expected = set()
    with bz2.open(FIXTURES / dump, "rt", encoding="utf-8") as f:
        for raw in f:
            line = raw.strip().rstrip(",")
            if len(line) < 3:
                continue
            entity = json.loads(line)
            for prop in ("P31", "P279"):
                statements = (entity.get("claims") or {}).get(prop, [])
                best = "preferred" if any(s["rank"] == "preferred" for s in statements) else "normal"
                for i, st in enumerate(statements):
                    if st["rank"] != best:
                        value = (st["mainsnak"].get("datavalue") or {}).get("value")
                        item = value.get("id") if isinstance(value, dict) else None
                        expected.add((entity["id"], prop, i, st["rank"], item))
    rows = read_table(built(dump), "outranked_type_claims")
    assert {(r["subject"], r["property"], r["ordinal"], r["rank"], r["item"]) for r in rows} == expected
    assert len(rows) == len(expected)
    assert expected  # the real dumps have outranked P31 statements (e.g. Berlin's deprecated one)


def test_rerun_of_a_complete_build_does_nothing(tmp_path: Path) -> None:
    source = FIXTURES / "entities-old.json.bz2"
    stage = build(tmp_path / "out", source)
    before = {p: p.stat().st_mtime_ns for p in stage.rglob("*") if p.is_file()}
    logged: list[str] = []
    again = samples.build(
        "wikidata",
        sources=[f"wikidata={source}"],
        params=["wikidata.num_shards=4"],
        out=tmp_path / "out",
        progress=False,
        log=logged.append,
        card=False,
    )["wikidata"]
    assert again == stage
    assert any("up to date" in m for m in logged)
    assert {p: p.stat().st_mtime_ns for p in stage.rglob("*") if p.is_file()} == before


def test_rerun_hashes_only_files_changed_since_they_were_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FIXTURES / "entities-old.json.bz2"
    stage = build(tmp_path / "out", source)
    hashed: list[str] = []
    real_sha256 = manifest_module.file_sha256

    def counting(path: Path | str, *args: Any) -> str:
        hashed.append(Path(path).name)
        return real_sha256(path, *args)

    monkeypatch.setattr(manifest_module, "file_sha256", counting)
    assert build(tmp_path / "out", source) == stage
    assert hashed == []  # every file as written: sizes checked, nothing re-read
    shard = stage / "truthy_claims" / "part-00001-of-00004.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01  # same size, new mtime: hashed, found corrupt, rebuilt
    shard.write_bytes(bytes(data))
    expected = shard_hashes(stage)
    assert build(tmp_path / "out", source) == stage
    assert "part-00001-of-00004.parquet" in hashed
    assert (
        shard_hashes(stage) == expected
        and file_sha256(shard) == expected["truthy_claims/part-00001-of-00004.parquet"]
    )


def test_deleted_shard_is_rebuilt_identically(tmp_path: Path) -> None:
    source = FIXTURES / "entities-old.json.bz2"
    stage = build(tmp_path / "out", source)
    expected = shard_hashes(stage)
    (stage / "truthy_claims" / "part-00002-of-00004.parquet").unlink()
    assert build(tmp_path / "out", source) == stage
    assert shard_hashes(stage) == expected
    assert (stage / "truthy_claims" / "part-00002-of-00004.parquet").is_file()
    assert not (stage.parent / ".incomplete").exists()


def test_killed_build_resumes_to_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built: Callable[[str], Path]
) -> None:
    source = FIXTURES / "entities-new.json.bz2"
    reference = shard_hashes(built(source.name))
    original = die_after(monkeypatch, "shard_task", 2)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", source)
    incomplete = next((tmp_path / "out" / "normalized" / "wikidata" / ".incomplete").iterdir())
    done = sorted(p.name for p in (incomplete / "_shards").iterdir())
    assert done == ["part-00000.json", "part-00001.json"]
    assert not list((tmp_path / "out" / "normalized" / "wikidata").glob("v*-*"))
    monkeypatch.setattr(tasks, "shard_task", original)
    resumed = build(tmp_path / "out", source)
    assert shard_hashes(resumed) == reference


def test_parquet_files_carry_stage_fingerprint_and_schema(built: Callable[[str], Path]) -> None:
    stage = built("entities-old.json.bz2")
    manifest = load_manifest(stage)
    meta = pq.read_schema(stage / "entities" / "part-00000-of-00004.parquet").metadata
    assert meta[b"entbench.stage"] == b"wikidata"
    assert meta[b"entbench.fingerprint"].decode() == manifest["fingerprint"]
    assert meta[b"entbench.table"] == b"entities"
    assert json.loads(meta[b"entbench.schema"])[0] == {"name": "id", "type": "string", "nullable": False}
    assert stage.name == f"v3-{manifest['fingerprint'][:12]}"


def test_params_change_the_fingerprint_and_the_schema(tmp_path: Path, built: Callable[[str], Path]) -> None:
    a = built("entities-new.json.bz2")
    b = build(tmp_path / "out", FIXTURES / "entities-new.json.bz2", "wikidata.languages=en,de")
    assert a.name != b.name  # another fingerprint, so another stage directory
    columns = pq.read_schema(b / "entities" / "part-00000-of-00004.parquet").names
    assert "label_de" in columns and "label_zh" not in columns
    berlin = next(r for r in read_table(b, "entities") if r["id"] == "Q64")
    assert berlin["label_de"] == "Berlin"


# --- bad input ----------------------------------------------------------------------------------
def real_lines() -> list[bytes]:
    with bz2.open(FIXTURES / "entities-old.json.bz2") as f:
        return [line for line in f.read().split(b"\n") if line.strip() not in (b"", b"[", b"]")]


def write_dump(path: Path, lines: list[bytes], *, closing: bool = True) -> Path:
    body = b"[\n" + b"\n".join(lines) + (b"\n]\n" if closing else b"\n")
    path.write_bytes(body)
    return path


def test_bad_lines_are_counted_written_and_fail_the_build(tmp_path: Path) -> None:
    lines = real_lines()
    good = len(lines)
    lines.insert(3, b'{"type":"item","id":"Q1","labels":{,')  # malformed JSON
    lines.insert(6, b'{"hello":"world"},')  # valid JSON, not an entity
    lines.insert(9, lines[8].replace(b'"id":"Q', b'"id":"\xff\xfeQ', 1))  # invalid UTF-8 in a decoded field
    dump = write_dump(tmp_path / "bad.json", lines)
    with pytest.raises(DataError) as info:
        build(tmp_path / "out", dump)
    message = str(info.value)
    assert str(dump) in message and "byte offset" in message and "--max-bad-lines" in message
    first_bad_offset = len(b"[\n") + sum(len(line) + 1 for line in lines[:3])
    assert info.value.offset == first_bad_offset
    stage = build(tmp_path / "out", dump, max_bad_lines=3)
    stats = load_manifest(stage)["stats"]
    assert stats["rejected_total"] == 3
    assert stats["rejected_malformed_json"] == stats["rejected_not_an_entity"] == 1
    assert stats["rejected_invalid_utf8"] == 1
    records = rejects(stage)
    assert [r["reason"] for r in records] == ["malformed_json", "not_an_entity", "invalid_utf8"]
    assert records[0]["offset"] == first_bad_offset
    assert records[0]["head"].startswith('{"type":"item","id":"Q1"')
    assert all(len(r["head"].encode("utf-8", "backslashreplace")) <= 4 * 200 for r in records)
    assert load_manifest(stage)["outputs"]["entities"]["rows"] == good


def test_missing_closing_bracket_is_accepted_with_a_warning_stat(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    dump = write_dump(tmp_path / "open.json", real_lines(), closing=False)
    stats = load_manifest(build(tmp_path / "out", dump))["stats"]
    assert stats["missing_closing_bracket"] == 1
    assert stats.get("rejected_total", 0) == 0
    # a download cut at a line boundary looks the same: a warning on stderr and in the card
    assert "has no closing `]`" in capfd.readouterr().err
    from entbench.cards.build_view import BuildView
    from entbench.cards.generic import sources_section

    view = BuildView(tmp_path / "out", "wikidata")
    assert any("no closing" in str(block) for block in sources_section(view).blocks)


@pytest.mark.parametrize("suffix", [".json.gz", ".json.bz2"])
@pytest.mark.parametrize("max_bad_lines", [0, 10])
def test_truncated_compressed_file_is_a_clear_error(tmp_path: Path, suffix: str, max_bad_lines: int) -> None:
    data = b"[\n" + b"\n".join(real_lines()) + b"\n]\n"
    compressed = gzip.compress(data) if suffix.endswith(".gz") else bz2.compress(data)
    dump = tmp_path / f"cut{suffix}"
    dump.write_bytes(compressed[: len(compressed) // 2])
    # `--max-bad-lines` counts malformed lines: a missing tail is never one of them.
    with pytest.raises(DataError) as info:
        build(tmp_path / "out", dump, max_bad_lines=max_bad_lines)
    assert str(dump) in str(info.value)
    assert "truncated" in str(info.value) and "offset" in str(info.value)
    assert not list((tmp_path / "out" / "normalized" / "wikidata").glob("v*"))  # nothing looks complete


@pytest.mark.parametrize("max_bad_lines", [0, 10])
def test_plain_dump_cut_mid_entity_is_a_clear_error(tmp_path: Path, max_bad_lines: int) -> None:
    data = b"[\n" + b"\n".join(real_lines()) + b"\n]\n"
    dump = tmp_path / "cut.json"
    cut = len(data) // 2
    dump.write_bytes(data[:cut])
    line_start = data.rindex(b"\n", 0, cut) + 1
    with pytest.raises(DataError) as info:
        build(tmp_path / "out", dump, max_bad_lines=max_bad_lines)
    assert f"{dump} at byte offset {line_start}: the dump ends in the middle of an entity" in str(info.value)
    assert not list((tmp_path / "out" / "normalized" / "wikidata").glob("v*"))


def test_last_line_complete_without_newline_is_accepted(tmp_path: Path) -> None:
    lines = real_lines()
    dump = tmp_path / "open.json"
    dump.write_bytes(b"[\n" + b"\n".join(lines).rstrip(b","))  # no closing bracket, no final newline
    stage = build(tmp_path / "out", dump)
    assert load_manifest(stage)["outputs"]["entities"]["rows"] == len(lines)


def test_not_a_dump_is_one_clear_error(tmp_path: Path, run_cli: Any) -> None:
    xml = tmp_path / "export.xml"
    xml.write_text('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n</mediawiki>\n')
    result = run_cli(
        ["build", "wikidata", "--source", f"wikidata={xml}", "--out", str(tmp_path / "o"), "--no-progress"]
    )
    assert result.exit_code == 1
    assert "not a Wikidata JSON dump" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_missing_source_and_bad_param_are_usage_errors(tmp_path: Path, run_cli: Any) -> None:
    out = str(tmp_path / "o")
    missing = run_cli(["build", "wikidata", "--source", "wikidata=/nonexistent.json", "--out", out])
    assert missing.exit_code == 2 and "file not found" in missing.stderr
    unknown = run_cli(["build", "wikidata", "--param", "wikidata.nope=1", "--out", out])
    assert unknown.exit_code == 2 and "unknown parameter wikidata.nope" in unknown.stderr
    badint = run_cli(["build", "wikidata", "--param", "wikidata.num_shards=many", "--out", out])
    assert badint.exit_code == 2 and "expected an integer" in badint.stderr
    target = run_cli(["build", "nosuchtarget", "--out", out])
    assert target.exit_code == 2 and "unknown target" in target.stderr


def test_out_as_a_file_url_is_a_local_directory(
    tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Store URLs: test_store.py.)"""
    monkeypatch.chdir(tmp_path)
    source = FIXTURES / "entities-old.json.bz2"
    url = (tmp_path / "via url").as_uri()
    built = run_cli(["build", "wikidata", "--no-progress", "--source", f"wikidata={source}", "--out", url])
    assert built.exit_code == 0, built.stderr
    assert (
        load_manifest(next((tmp_path / "via url" / "normalized" / "wikidata").glob("v*-*")))["stage"]
        == "wikidata"
    )


def test_a_disk_too_small_for_the_spills_is_said_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FIXTURES / "entities-old.json.bz2"
    real = shutil.disk_usage
    monkeypatch.setattr(runner.shutil, "disk_usage", lambda path: real(path)._replace(free=1_000))
    logged: list[str] = []

    def build_into(name: str) -> None:
        samples.build(
            "wikidata",
            sources=[f"wikidata={source}"],
            out=tmp_path / name,
            progress=False,
            log=logged.append,
            card=False,
        )

    build_into("out")
    warnings = [m for m in logged if "warning: the map may need" in m]
    assert len(warnings) == 1 and "0.0 GB are free" in warnings[0] and "resumes" in warnings[0]
    logged.clear()
    monkeypatch.setattr(runner.shutil, "disk_usage", real)
    build_into("more")
    assert not [m for m in logged if "warning" in m]


def test_shared_dump_files_copied_verbatim_build_with_cli(tmp_path: Path, run_cli: Any) -> None:
    out = tmp_path / "o"
    result = run_cli(
        ["build", "wikidata", "--out", str(out), "--no-progress", "--config", str(SAMPLES_CONFIG)]
    )
    assert result.exit_code == 0, result.stderr
    stage = out / json.loads((out / "targets" / "wikidata.json").read_text())["stages"]["wikidata"]
    inspected = run_cli(["inspect", str(stage), "--json"])
    assert inspected.exit_code == 0
    report = json.loads(inspected.stdout)
    assert report["tables"]["entities"]["rows"] == 56
    assert report["stats"]["lines_total"] == 56
    assert run_cli(["verify", str(out)]).exit_code == 0
    shard = stage / "entities" / "part-00001-of-00004.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    failed = run_cli(["verify", str(out)])
    assert failed.exit_code == 1
    assert "entities/part-00001-of-00004.parquet" in failed.stderr
    shutil.rmtree(out)


@pytest.mark.parametrize("killed_in", ["map", "reduce"])
def test_resume_with_another_chunk_size_reads_every_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_in: str
) -> None:
    """Killed with 1 MB map tasks, resumed with 3 MB ones: task ids name where a task starts, so
    the first run's finished tasks must not stand in for the second run's (the bytes between would
    never be read), and _rejects.jsonl lists each bad line once."""
    good = gzip.decompress((FIXTURES / "kgtk-arnold.hierarchy.json.gz").read_bytes()).split(b"\n")
    good = [line for line in good if line.strip() not in (b"", b"[", b"]")]
    bad = [b'{"id": "Q1", "labels": ', b"not json at all", b'{"id": 5}']
    third = len(good) // 3
    lines = [*good[:third], bad[0], *good[third : 2 * third], bad[1], *good[2 * third :], bad[2]]
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(b"\n".join(lines) + b"\n")
    assert dump.stat().st_size > 4 << 20  # several 1 MB tasks
    reference = build(tmp_path / "ref", dump, max_bad_lines=10)
    expected = (reference / "_rejects.jsonl").read_text(encoding="utf-8")
    assert len(expected.splitlines()) == len(bad)

    name = "map_task" if killed_in == "map" else "shard_task"
    original = die_after(monkeypatch, name, 2)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", dump, max_bad_lines=10, chunk_mb=1)
    monkeypatch.setattr(tasks, name, original)
    resumed = build(tmp_path / "out", dump, max_bad_lines=10, chunk_mb=3)
    assert shard_hashes(resumed) == shard_hashes(reference)
    assert (resumed / "_rejects.jsonl").read_text(encoding="utf-8") == expected
    entities = load_manifest(resumed)["outputs"]["entities"]["rows"]
    assert entities == len(good)
