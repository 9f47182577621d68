"""Stage `hansel_corpus`: a raw few-shot corpus, Simplified, and every alias-table match in it.

Input: the source `corpus`, JSON lines `{"id": …, "text": …}` (other keys ignored; `id` a string
or an integer), plain, `.gz` or `.bz2`. Hansel matched AT-base against LCSTS, SohuNews and
TenSiteNews (appendix A): build once per corpus with `--source corpus=PATH`.

`map_tasks` builds one automaton over every alias-table key (in the stage's scratch directory)
and cuts the decompressed corpus into line-aligned blocks; each map task converts its texts to
Simplified when the alias table's keys are (a Chinese wiki's: `hansel.context.to_simplified` with
the alias table's converter, offsets kept; any other corpus is left as it is) and
finds the keys in them (`builders.alias.matching`: normalised like the keys, no tokenisation, longest
match on overlap).

Tables: `docs` (routed by `doc_id`) and `matches` (routed by `key`, so every occurrence of a phrase
is in one shard). A line that is not such an object is a bad line (`malformed_json`,
`invalid_utf8`, `not_an_object`, `bad_fields`): counted under `rejected_<reason>`, kept in
`_rejects.jsonl` with its offset and line number, and past `--max-bad-lines` a `DataError` naming
the file and the first one's offset (`engine.dump_scan`); a last line cut short is a truncated
corpus, an error whatever the limit. An id that repeats is a `DataError` naming the file and both
lines. Stats: `docs`, `blank_lines`, `matches`, `texts_not_converged`, `rejected_*`.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated, Any

import ahocorasick
import pyarrow as pa
from msgspec import Meta

from entbench.builders.alias.matching import build_automaton, find_occurrences
from entbench.builders.hansel.context import to_simplified
from entbench.engine.duck import stage_connection
from entbench.engine.dump_scan import TRUNCATION_REASONS, DumpScan, runs_to_the_end
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    StageContext,
    UpstreamOutput,
)
from entbench.engine.stats import Stats
from entbench.errors import DataError
from entbench.filters.mentions import MentionNormalizer
from entbench.readers.compressed.blocks import iter_decompressed_blocks
from entbench.readers.compressed.dumps import detect_compression, iter_lines
from entbench.schemas import hansel as schema

AUTOMATON_FILE = "automaton.bin"
KEYS_FILE = "keys.arrow"
#: Automatic shard count: about one shard per this much text (the docs and their matches).
CORPUS_SHARD_BYTES = 64 << 20
#: Text/compressed size ratio of a corpus file when its own cannot be measured (`DumpScan.expansion_of`).
CORPUS_EXPANSION = {"none": 1, "gzip": 3, "bz2": 4}


@dataclass(frozen=True)
class HanselCorpusParams(Params):
    """Only the shard count: matching follows the alias table's own normalisation."""

    num_shards: Annotated[
        int,
        Meta(
            description=(
                "output shards; 0 = about one per 64 MB of corpus text (matching follows the alias "
                "table's normalisation)"
            )
        ),
    ] = 0


def alias_normalizer(alias_table: UpstreamOutput) -> MentionNormalizer:
    """The normaliser an alias table's keys were built with (its `normalization` side file)."""
    return MentionNormalizer.from_json(alias_table.side_file("normalization"))


def alias_language(alias_table: UpstreamOutput) -> str:
    """The language of the wiki an alias table was built from (its `normalization` side file)."""
    return str(alias_table.side_file("normalization").get("language", ""))


def text_converter(normalizer: MentionNormalizer) -> str:
    """The conversion a text gets to match an alias table's keys: its converter if the keys are
    Simplified Chinese, else `none`."""
    return normalizer.converter if normalizer.chinese else "none"


class BadLine(ValueError):
    """A corpus line that is not `{"id": …, "text": …}`: why (`reason`) and what was found."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def parse_line(raw: bytes, line: int) -> tuple[str, str] | None:
    """(id, text) of one corpus line, None for a blank line, `BadLine` for anything else."""
    if not raw.strip():
        return None
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise BadLine("invalid_utf8", f"line {line}: not UTF-8 ({exc})") from exc
    except ValueError as exc:
        raise BadLine("malformed_json", f"line {line}: not JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise BadLine("not_an_object", f"line {line}: expected an object with id and text")
    ident, text = doc.get("id"), doc.get("text")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or not isinstance(text, str):
        raise BadLine("bad_fields", f'line {line}: expected {{"id": string or integer, "text": string}}')
    return str(ident), text


@dataclass(eq=False)
class HanselCorpus(DumpScan[HanselCorpusParams]):
    """The few-shot corpus and the alias-table matches in it (Hansel appendix A)."""

    version = 2  # 2: texts converted only when the alias table's keys are Chinese
    layer = "derived"
    default_num_shards = 0
    shard_key = "doc_id"
    description = "raw corpus texts (Simplified) and exact longest alias-table matches (Hansel app. A)"
    #: `build --limit N` cuts, and `--dry-run` samples, this stage's dump as one of this kind.
    source_kind = "lines"
    progress_items = "texts"
    expansion = CORPUS_EXPANSION
    auto_shard_bytes = CORPUS_SHARD_BYTES
    items_stat = "docs"

    stage_name: str
    _: KW_ONLY
    alias_table: str
    source: str = "corpus"

    def __post_init__(self) -> None:
        self.inputs = (self.alias_table,)
        self.sources = (self.source,)

    def outputs(self, params: HanselCorpusParams) -> list[Output]:
        """`docs` and `matches`."""
        return [
            Output("docs", schema.CORPUS_DOCS, ("doc_id",)),
            Output("matches", schema.CORPUS_MATCHES, ("key", "doc_id", "start")),
        ]

    def map_tasks(self, ctx: StageContext[HanselCorpusParams]) -> Iterator[MapTask]:
        """Build the automaton once, then blocks of whole lines of the decompressed corpus."""
        scratch = ctx.scratch
        if not (scratch / AUTOMATON_FILE).exists():
            keys = _all_keys(ctx, ctx.inputs[self.alias_table].files("alias_table"))
            tmp = scratch / f".{KEYS_FILE}.tmp-{os.getpid()}"
            with pa.ipc.new_file(str(tmp), pa.schema([pa.field("key", pa.string())])) as writer:
                writer.write_table(pa.table({"key": keys}))
            os.replace(tmp, scratch / KEYS_FILE)
            tmp = scratch / f".{AUTOMATON_FILE}.tmp-{os.getpid()}"
            build_automaton(keys.to_pylist()).save(str(tmp))
            os.replace(tmp, scratch / AUTOMATON_FILE)
        src = self.dump(ctx)
        compression = detect_compression(src.path)
        chunk = self.task_bytes(ctx)
        blocks = iter_decompressed_blocks(src.path, compression, chunk, threads=max(1, ctx.options.workers))
        line = 1

        def first_line(block: bytes | bytearray) -> dict[str, int]:
            """The number of the block's first line (blocks are numbered in order)."""
            nonlocal line
            first, line = line, line + block.count(b"\n")
            return {"line": first}

        yield from self.block_tasks(ctx, blocks, compression=compression, meta=first_line)

    def map(
        self, ctx: StageContext[HanselCorpusParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Convert and match the texts of one block."""
        assert task.payload is not None
        src = ctx.sources[self.sources[0]]
        scratch = ctx.scratch
        automaton = ahocorasick.load(str(scratch / AUTOMATON_FILE), pickle.loads)
        keys = pa.ipc.open_file(pa.memory_map(str(scratch / KEYS_FILE))).read_all().column(0).to_pylist()
        normalizer = alias_normalizer(ctx.inputs[self.alias_table])
        stats = Stats()
        rejects = self.rejects(ctx, stats)
        # As bytes, the type parse_line takes (the reader hands out bytearrays): copying the block
        # costs <1% of parsing and matching its lines.
        block = bytes(task.payload)
        base = int(task.meta["offset"])
        docs: list[tuple[str, int, str]] = []
        matches: list[tuple[str, str, int, int]] = []
        for line, (offset, raw) in enumerate(iter_lines(block, base), start=int(task.meta["line"])):
            try:
                parsed = parse_line(raw, line)
            except BadLine as exc:
                if exc.reason in TRUNCATION_REASONS and runs_to_the_end(offset - base, raw, block):
                    raise DataError(
                        f"the corpus ends in the middle of a line ({exc.detail}): it is truncated",
                        path=src.label,
                        offset=offset,
                    ) from None
                rejects.add(offset, exc.reason, exc.detail, raw)
                continue
            if parsed is None:
                stats.add("blank_lines")
                continue
            doc_id, text = parsed
            simplified, converged = to_simplified(text, text_converter(normalizer))
            stats.add("texts_not_converged", not converged)
            docs.append((doc_id, line, simplified))
            for occ in find_occurrences(automaton, keys, normalizer, simplified):
                matches.append((keys[occ.key], doc_id, occ.start, occ.end))
        stats.add("docs", len(docs))
        stats.add("matches", len(matches))
        for table, rows, table_schema, key in (
            ("docs", docs, schema.CORPUS_DOCS, "doc_id"),
            ("matches", matches, schema.CORPUS_MATCHES, "key"),
        ):
            if rows:
                columns = list(zip(*rows, strict=True))
                arrays = [pa.array(c, type=f.type) for c, f in zip(columns, table_schema, strict=True)]
                data = pa.Table.from_arrays(arrays, schema=table_schema)
                sink.emit_by_key(table, data, key, ctx.num_shards)
        units = int(task.meta["compressed_delta"])
        stats.add("input_progress_bytes", units)
        progress(units, len(docs))
        rejects.write(ctx, task)
        return stats

    def reduce(
        self, ctx: StageContext[HanselCorpusParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Refuse a corpus whose ids repeat (a record must be findable by its id)."""
        docs = tables["docs"]
        if docs.num_rows:
            seen: dict[str, int] = {}
            for doc_id, line in zip(
                docs.column("doc_id").to_pylist(), docs.column("line").to_pylist(), strict=True
            ):
                if doc_id in seen:
                    first, second = sorted((seen[doc_id], line))
                    raise DataError(
                        f"id {doc_id!r} repeats on lines {first} and {second}",
                        path=ctx.sources[self.sources[0]].label,
                    )
                seen[doc_id] = line
        return dict(tables), Stats()

    def finalize(
        self, ctx: StageContext[HanselCorpusParams], directory: Path, stats: Stats
    ) -> dict[str, Any]:
        """`_rejects.jsonl`: the bad lines, by offset (none written when every line was read)."""
        return self.finalize_rejects(directory)


def _all_keys(ctx: StageContext, files: list[str]) -> pa.Array:
    """Every distinct alias-table key, sorted (a key's index is the automaton's value)."""
    with stage_connection(ctx, tasks=1) as con:  # once, while planning the map
        table = con.sql(
            "SELECT DISTINCT mention AS key FROM read_parquet($files) ORDER BY key", params={"files": files}
        ).to_arrow_table()
    return table.column("key").combine_chunks()
