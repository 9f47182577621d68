"""How many shards a dump scan gets when `num_shards` is 0: one per `auto_shard_bytes` of the
dump's decompressed size, estimated from its expansion measured on the start of the stream."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import math
import random
import shutil
from pathlib import Path

import pytest

from entbench.builders.wikidata.stages.scan import WikidataScan, WikidataScanParams
from entbench.engine.dump_scan import sampled_expansion
from entbench.engine.plan import plan_stage
from entbench.engine.stage import BuildOptions, SourceInfo
from entbench.readers.head import SAMPLE_BYTES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


class SmallShardScan(WikidataScan):
    """The Wikidata scan with 1 MB shards, so that a dump of a few MB needs several."""

    auto_shard_bytes = 1 << 20


def entity_lines(n: int, vocabulary: int, seed: int = 7) -> bytes:
    """`n` entity-like JSON lines whose labels come from `vocabulary` words (fewer words: the
    lines compress better)."""
    rng = random.Random(seed)
    words = [f"w{rng.getrandbits(40):x}" for _ in range(vocabulary)]
    lines = []
    for i in range(n):
        label = " ".join(rng.choice(words) for _ in range(6))
        entity = {"type": "item", "id": f"Q{i + 1}", "labels": {"en": {"language": "en", "value": label}}}
        lines.append(json.dumps(entity))
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def source(path: Path) -> SourceInfo:
    data = path.read_bytes()
    return SourceInfo("wikidata", str(path), path.name, len(data), hashlib.sha256(data).hexdigest())


def shards(stage: WikidataScan, path: Path) -> int:
    return stage.resolve_num_shards(WikidataScanParams(), {"wikidata": source(path)})


@pytest.mark.parametrize(("suffix", "compress"), [(".gz", gzip.compress), (".bz2", bz2.compress)])
@pytest.mark.parametrize("vocabulary", [40, 100_000])
def test_shard_count_follows_the_decompressed_size(
    tmp_path: Path, suffix: str, compress: object, vocabulary: int
) -> None:
    """A dump that compresses 3x and one that compresses 20x+ each get the shards their real size
    needs, not the ones a fixed ratio per format (x7 .gz, x9 .bz2) would give."""
    data = entity_lines(60_000, vocabulary)
    path = tmp_path / f"dump.json{suffix}"
    path.write_bytes(compress(data))  # type: ignore[operator]
    ratio = len(data) / path.stat().st_size
    assert abs(ratio - 7) > 2 and abs(ratio - 9) > 2  # a fixed ratio would be wrong here
    expected = math.ceil(len(data) / SmallShardScan.auto_shard_bytes)
    assert expected > 1
    assert shards(SmallShardScan("wikidata"), path) == expected
    assert SmallShardScan("wikidata").input_bytes(source(path)) == pytest.approx(len(data), rel=0.03)


def test_a_dump_larger_than_the_sample_is_estimated_from_its_start(tmp_path: Path) -> None:
    """Past `SAMPLE_BYTES` only the start is decompressed at planning: a uniform dump's estimate
    is still within a few percent of its real size."""
    data = entity_lines(200_000, 2_000)
    assert len(data) > 2 * SAMPLE_BYTES
    path = tmp_path / "dump.json.gz"
    path.write_bytes(gzip.compress(data, compresslevel=6))
    estimate = SmallShardScan("wikidata").input_bytes(source(path))
    assert estimate == pytest.approx(len(data), rel=0.05)
    assert shards(SmallShardScan("wikidata"), path) == pytest.approx(len(data) / (1 << 20), rel=0.06)


def test_the_plan_is_the_same_whatever_workers_and_for_a_copy(tmp_path: Path) -> None:
    """The shard count enters the fingerprint: the same bytes (another path, another run, another
    --workers) give the same count and fingerprint, so a resumed build finds its own work."""
    data = entity_lines(30_000, 50)
    first = tmp_path / "a" / "dump.json.gz"
    first.parent.mkdir()
    first.write_bytes(gzip.compress(data))
    copy = tmp_path / "b" / "dump.json.gz"
    copy.parent.mkdir()
    shutil.copyfile(first, copy)
    stage = SmallShardScan("wikidata")
    plans = [
        plan_stage(
            stage,
            WikidataScanParams(),
            {"wikidata": source(path)},
            {},
            tmp_path / "out",
            BuildOptions(workers=w),
        )
        for path in (first, copy)
        for w in (1, 2, 8)
    ]
    assert {p.ctx.num_shards for p in plans} == {math.ceil(len(data) / (1 << 20))}
    assert len({p.fingerprint for p in plans}) == 1
    assert len({stage.task_bytes(p.ctx) for p in plans}) == 1
    assert sampled_expansion(str(first)) == sampled_expansion(str(copy))


def test_a_tiny_dump_is_one_shard() -> None:
    """The demo world's dumps stay one shard each (its goldens do not move)."""
    stage = WikidataScan("wikidata")
    for name in ("wikidata-old.json.gz", "wikidata-new.json.gz"):
        assert shards(stage, FIXTURES / "world" / name) == 1


def test_a_dump_that_cannot_be_sampled_falls_back_to_the_format_ratio(tmp_path: Path) -> None:
    """A damaged stream is the scan's error to report (file and offset), not the planner's: the
    plan falls back to the format's ratio."""
    damaged = tmp_path / "dump.json.gz"
    damaged.write_bytes(b"\x1f\x8b\x08\x00" + b"not deflate data" * 1000)
    assert sampled_expansion(str(damaged)) is None
    src = source(damaged)
    assert WikidataScan("wikidata").input_bytes(src) == src.size * 7


def test_a_sampled_expansion_is_kept_for_the_next_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The measure is kept in the per-user cache under the file's path, size, mtime and inode, so
    another process planning the same file does not decompress its head again; a changed file is
    measured again."""
    from entbench.engine import dump_scan

    monkeypatch.setenv("ENTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    dump = tmp_path / "dump.json.bz2"
    dump.write_bytes(bz2.compress(entity_lines(2000, 50)))
    measured = sampled_expansion(str(dump))
    assert measured is not None and measured > 1
    (kept,) = (tmp_path / "cache" / "head-expansion").glob("*.json")
    assert json.loads(kept.read_text(encoding="utf-8")) == measured
    dump_scan._sampled_expansion.cache_clear()  # as a new process
    kept.write_text("1.5", encoding="utf-8")
    assert sampled_expansion(str(dump)) == 1.5  # read, not measured
    dump.write_bytes(bz2.compress(entity_lines(3000, 9)))
    again = sampled_expansion(str(dump))
    assert again is not None and again not in (1.5, measured)
    assert len(list((tmp_path / "cache" / "head-expansion").glob("*.json"))) == 2


def test_a_sampled_expansion_is_kept_by_content_when_its_sha256_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given the dump's sha256 (as a build's source has it), a copy at another path is not read again."""
    from entbench.engine import dump_scan

    monkeypatch.setenv("ENTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    first, copy = tmp_path / "a.json.bz2", tmp_path / "b.json.bz2"
    first.write_bytes(bz2.compress(entity_lines(2000, 50)))
    shutil.copy(first, copy)
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    measured = sampled_expansion(str(first), digest)
    (kept,) = (tmp_path / "cache" / "head-expansion").glob("*.json")
    kept.write_text("1.5", encoding="utf-8")
    dump_scan._sampled_expansion.cache_clear()
    assert sampled_expansion(str(copy), digest) == 1.5  # the copy's measure is the one kept
    assert sampled_expansion(str(copy)) == measured  # by its path: measured
