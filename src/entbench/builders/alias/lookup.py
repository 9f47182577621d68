"""Reading a built alias table: candidate lookup and recall on a labeled dataset (spec §4).

`open_alias_table(out)` finds the `alias-table` target of a build (`<out>/targets/alias-table.json`)
and the normaliser it was built with; `lookup` reads only the shards the asked mentions hash to;
`evaluate` computes R@K on a Hansel-format file (Hansel §4, Table 3 reports AT-base R@1/10/100):

* In-KB: over records whose `gold_id` is not `NIL…`, the share whose gold QID is among the top K
  candidates of the (normalised) mention;
* with NIL: over all records, the share where the top candidate is the gold QID, or where the gold
  is `NIL…` and the table has no candidate (an alias table's only way of predicting NIL).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from entbench.engine.build_out import listing_file, local_build
from entbench.engine.manifest import check_complete, upstream_from_manifest
from entbench.engine.shards import shard_of
from entbench.engine.stage import side_file_name
from entbench.errors import DataError, UserError
from entbench.filters.mentions import MentionNormalizer

HANSEL_KEYS = ("id", "text", "start", "end", "mention", "gold_id")


@dataclass(frozen=True)
class Candidate:
    """One row of the alias table."""

    qid: str
    p_e_given_m: float
    count: int
    link_count: int
    title_flag: bool
    redirect_flag: bool
    rank: int


@dataclass(frozen=True)
class AliasTables:
    """A built alias table and its mention statistics; with the build's Wikidata entities (when its
    listing has them), the labels shown beside QIDs."""

    alias_files: tuple[str, ...]
    stats_files: tuple[str, ...]
    normalizer: MentionNormalizer
    entity_files: tuple[str, ...] = ()
    label_columns: tuple[str, ...] = ()

    def normalize(self, mentions: Sequence[str]) -> list[str]:
        """Mentions as the table's keys are written."""
        return self.normalizer.many(list(mentions))


def open_alias_table(out: str | Path, target: str = "alias-table") -> AliasTables:
    """The alias table of a build directory (a user error if it was not built)."""
    root = local_build(out, target, stages=())  # a store URL: its listing, no stage yet
    listing = listing_file(root, target)
    if not listing.is_file():
        raise UserError(f"no {target} build in {root} (run: entbench build {target} --out {root})")
    stages: dict[str, str] = json.loads(listing.read_text(encoding="utf-8"))["stages"]
    # `alias_table`, `alias_table_kb`, `hansel_alias_table` and their `…mention_stats`; a target
    # may list no mention statistics (`hansel-kb`: a lookup then has none to show).
    alias = [s for s in stages if "alias_table" in s]
    stats = [s for s in stages if "mention_stats" in s]
    if len(alias) != 1 or len(stats) > 1:
        raise UserError(f"{listing} does not list one alias table and at most one mention_stats stage")
    # The title -> QID stage's Wikidata scan (its entities give labels): `wikidata` for alias-table,
    # `wikidata_new` for alias-table-kb. From a store it is read only if already here: a full
    # scan is far too big to download for a few labels.
    scans = [s for s in sorted(stages) if s.startswith("wikidata")]
    root = local_build(out, target, stages=[*alias, *stats])
    scans = [s for s in scans if (root / stages[s]).is_dir() and not check_complete(root / stages[s])]
    alias_dir = root / stages[alias[0]]
    alias_upstream = upstream_from_manifest(alias_dir)
    normalizer = MentionNormalizer.from_json(alias_upstream.side_file("normalization"))
    alias_files = alias_upstream.files("alias_table")
    stats_files = upstream_from_manifest(root / stages[stats[0]]).files("mention_stats") if stats else []
    entity_files: list[str] = []
    label_columns: tuple[str, ...] = ()
    for scan in scans:
        upstream = upstream_from_manifest(root / stages[scan])
        if "entities" in upstream.tables:
            entity_files = upstream.files("entities")
            names = pq.read_schema(entity_files[0]).names if entity_files else []
            language = _wiki_language(root, stages)
            preferred = [f"label_{language}", "label_en"] if language else ["label_en"]
            label_columns = tuple(
                dict.fromkeys(
                    [c for c in preferred if c in names] + [c for c in names if c.startswith("label_")]
                )
            )
    return AliasTables(tuple(alias_files), tuple(stats_files), normalizer, tuple(entity_files), label_columns)


def _wiki_language(root: Path, stages: dict[str, str]) -> str:
    """The language of the Wikipedia dump the alias table was built from (its scan's siteinfo)."""
    for rel in sorted(stages.values()):
        siteinfo = root / rel / side_file_name("siteinfo")
        if siteinfo.is_file():
            language = json.loads(siteinfo.read_text(encoding="utf-8")).get("language")
            if isinstance(language, str):
                return language
    return ""


def labels(tables: AliasTables, qids: Iterable[str]) -> dict[str, str]:
    """The label of each QID found in the build's Wikidata entities: in the wiki's language, else
    English, else any kept (reading only the shards the ids hash to)."""
    wanted = sorted({q for q in qids if q})
    if not tables.entity_files or not tables.label_columns or not wanted:
        return {}
    found: dict[str, str] = {}
    for row in _rows(tables.entity_files, wanted, ["id", *tables.label_columns], key_column="id"):
        label = next((row[c] for c in tables.label_columns if row.get(c)), None)
        if label:
            found[row["id"]] = label
    return found


def _rows(
    files: Sequence[str], keys: Iterable[str], columns: list[str] | None = None, key_column: str = "mention"
) -> Iterator[dict[str, Any]]:
    by_shard: dict[int, set[str]] = {}
    for key in keys:
        by_shard.setdefault(shard_of(key, len(files)), set()).add(key)
    for shard in sorted(by_shard):
        wanted = pa.array(sorted(by_shard[shard]), pa.string())
        table = pq.read_table(files[shard], columns=columns)
        yield from table.filter(pc.is_in(table.column(key_column), value_set=wanted)).to_pylist()


def lookup(tables: AliasTables, mentions: Sequence[str], top: int = 10) -> dict[str, list[Candidate]]:
    """Top candidates (by rank) of each normalised mention; absent mentions map to []."""
    result: dict[str, list[Candidate]] = {m: [] for m in mentions}
    for row in _rows(tables.alias_files, [m for m in mentions if m]):
        if row["rank"] <= top:
            result[row["mention"]].append(
                Candidate(
                    row["qid"],
                    row["p_e_given_m"],
                    row["count"],
                    row["link_count"],
                    row["title_flag"],
                    row["redirect_flag"],
                    row["rank"],
                )
            )
    for candidates in result.values():
        candidates.sort(key=lambda c: c.rank)
    return result


def mention_stats(tables: AliasTables, mentions: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The `mention_stats` row of each normalised mention found."""
    if not tables.stats_files:
        return {}
    return {row["mention"]: row for row in _rows(tables.stats_files, [m for m in mentions if m])}


def read_hansel(path: str | Path) -> list[dict[str, Any]]:
    """Records of a Hansel-format jsonl file; a bad line is a `DataError` naming its offset."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"dataset not found: {file}")
    records = []
    offset = 0
    with open(file, "rb") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(
                        f"line {number} is not JSON ({exc.msg})", path=str(file), offset=offset
                    ) from exc
                missing = [
                    k for k in ("mention", "gold_id") if not isinstance(record, dict) or k not in record
                ]
                if missing:
                    raise DataError(
                        f"line {number} lacks {', '.join(missing)}", path=str(file), offset=offset
                    )
                records.append(record)
            offset += len(line)
    return records


def evaluate(
    tables: AliasTables,
    records: Sequence[dict[str, Any]],
    ks: Sequence[int] = (1, 10, 100),
    examples: int = 10,
) -> dict[str, Any]:
    """R@K (In-KB) and R@1 with NIL of the alias table on Hansel-format records, and the first
    `examples` In-KB records whose top candidate is not the gold, with the labels of both QIDs."""
    raw = [str(r["mention"]) for r in records]
    normalized = tables.normalize(raw)
    found = lookup(tables, sorted(set(normalized)), top=max(ks))
    in_kb = [
        (n, str(r["gold_id"])) for n, r in zip(normalized, records, strict=True) if not _nil(r["gold_id"])
    ]
    hits = dict.fromkeys(ks, 0)
    for mention, gold in in_kb:
        qids = [c.qid for c in found.get(mention, [])]
        for k in ks:
            hits[k] += gold in qids[:k]
    correct_with_nil = 0
    for mention, record in zip(normalized, records, strict=True):
        candidates = found.get(mention, [])
        predicted = candidates[0].qid if candidates else None
        gold = str(record["gold_id"])
        correct_with_nil += (predicted is None) if _nil(gold) else (predicted == gold)
    n_in_kb = len(in_kb)
    misses: list[dict[str, Any]] = []
    for mention, record in zip(normalized, records, strict=True):
        candidates = found.get(mention, [])
        predicted = candidates[0].qid if candidates else None
        gold = str(record["gold_id"])
        if not _nil(gold) and predicted != gold and len(misses) < examples:
            misses.append({"mention": str(record["mention"]), "gold_id": gold, "predicted": predicted})
    names = labels(tables, [q for m in misses for q in (m["gold_id"], m["predicted"]) if q])
    for miss in misses:
        miss["gold_label"] = names.get(str(miss["gold_id"]))
        miss["predicted_label"] = names.get(str(miss["predicted"])) if miss["predicted"] else None
    return {
        "records": len(records),
        "in_kb": n_in_kb,
        "nil": len(records) - n_in_kb,
        "mentions_without_candidates": sum(1 for m in normalized if not found.get(m)),
        "in_kb_recall": {f"R@{k}": (hits[k] / n_in_kb if n_in_kb else None) for k in ks},
        "with_nil_recall": {"R@1": (correct_with_nil / len(records) if records else None)},
        "misses_at_1": misses,
    }


def _nil(gold: Any) -> bool:
    return gold is None or str(gold).upper().startswith("NIL")
