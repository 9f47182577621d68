"""The Wikidata dump scan: JSON dump -> normalized `entities`, `aliases`, `truthy_claims`, `sitelinks`,
`redirects` (spec §1), sharded by entity id.

Map tasks are byte ranges (uncompressed input), ranges of the decompressed stream (`.gz` with a
saved rapidgzip index, several workers) or line-aligned blocks of the decompressed stream (`.gz`,
`.bz2`); each parses its lines with the native scanner (`builders.wikidata.native`, C), hands the lines it
does not take to the typed partial decoder (the reference path), and routes rows to shards.
Reducers drop superseded duplicates of an id (a dump of revisions can hold several), keeping the
highest `lastrevid` (then the later line). Every line ends up as rows, a redirect, or a reject
with its byte offset in `_rejects.jsonl`.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
from msgspec import Meta

from entbench.builders.wikidata.native import NativeRows, native_enabled
from entbench.builders.wikidata.rows import OFFSET_COLUMN, ScanRows, emit_tables
from entbench.builders.wikidata.scan import (
    AUTO_SHARD_INPUT_BYTES,
    EXPANSION,
    SPILL_SHARE,
    TRUNCATION_REASONS,
    dedupe_entities,
    first_reject,
    pieces,
    reject_record,
    runs_to_the_end,
    task_bytes,
    write_rejects,
    write_task_rejects,
)
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    SourceInfo,
    Stage,
    StageContext,
    map_column,
)
from entbench.engine.stats import Stats, counted
from entbench.errors import DataError
from entbench.gc_pause import gc_paused
from entbench.readers.compressed_blocks import iter_decompressed_blocks
from entbench.readers.dumps import (
    StreamTruncated,
    byte_ranges,
    detect_compression,
    iter_lines,
    read_range,
    sniff_json_dump,
)
from entbench.readers.gzip_index import load_gzip_index, read_indexed_range, worth_indexing
from entbench.readers.prefetch import InlineBlocks, Prefetched, usable_cpus
from entbench.readers.wikidata_entities import DecodeConfig, EntityDecoder, LineRejected
from entbench.schemas import wikidata as schema

#: Bytes the native scanner reads between progress updates.
NATIVE_PIECE_BYTES = 4 << 20


@dataclass(frozen=True)
class WikidataScanParams(Params):
    """Parameters of a Wikidata scan. `sites = ["*"]` keeps every sitelink (slower to decode)."""

    languages: Annotated[
        tuple[str, ...],
        Meta(min_length=1, description="languages whose labels, descriptions and aliases are kept"),
    ] = ("en", "zh")
    sites: Annotated[
        tuple[str, ...],
        Meta(description='sites whose sitelinks are kept; `["*"]` keeps every site (slower)'),
    ] = ("enwiki", "zhwiki")
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 256 MB of uncompressed JSON"),
    ] = 0

    def decode_config(self) -> DecodeConfig:
        """The decoder configuration these parameters ask for."""
        sites = None if "*" in self.sites else self.sites
        return DecodeConfig(languages=self.languages, sites=sites)


#: Every rejected line with its offset and reason; named so that Parquet readers of the directory skip it.
REJECTS_FILE = "_rejects.jsonl"


class WikidataScan(Stage[WikidataScanParams]):
    """Scan one Wikidata JSON dump source into the normalized tables."""

    name = "wikidata"
    version = 3  # 2: outranked_type_claims; 3: `_rejects.jsonl` (sidecars start with `_`)
    layer = "normalized"
    default_num_shards = 1
    shard_key = "id"
    description = (
        "Wikidata JSON dump -> entities, aliases, truthy_claims, outranked_type_claims, sitelinks, redirects"
    )
    #: `build --limit N` cuts, and `--dry-run` samples, this stage's dump as one of this kind.
    source_kind = "wikidata-json"
    progress_unit = "B"
    progress_items = "entities"

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.sources = (source,)

    # --- declaration -------------------------------------------------------------------------
    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How much the dump held."""
        kept = counted(stats, "entities_written")
        return f"the {self.sources[0]} dump holds {kept:,} entit{'y' if kept == 1 else 'ies'}"

    def outputs(self, params: WikidataScanParams) -> list[Output]:
        """The five normalized tables."""
        return [
            Output("entities", schema.entities_schema(params.languages), ("id", "source_offset")),
            Output("aliases", schema.ALIASES, ("id", "language", "ordinal")),
            Output("truthy_claims", schema.TRUTHY_CLAIMS, ("subject", "property", "ordinal")),
            Output("sitelinks", schema.SITELINKS, ("id", "site")),
            Output(
                "outranked_type_claims",
                schema.OUTRANKED_TYPE_CLAIMS,
                ("subject", "property", "ordinal"),
                may_be_empty=True,
            ),
            Output("redirects", schema.REDIRECTS, ("from_id", "source_offset"), may_be_empty=True),
        ]

    def map_schemas(self, params: WikidataScanParams) -> dict[str, pa.Schema]:
        """Output schemas plus the source line offset, which the reducer needs to drop duplicates."""
        result = {}
        for output in self.outputs(params):
            if OFFSET_COLUMN in output.schema.names or output.name in ("entities", "redirects"):
                result[output.name] = output.schema
            else:
                result[output.name] = output.schema.append(
                    pa.field(OFFSET_COLUMN, pa.int64(), nullable=False)
                )
        return result

    def resolve_num_shards(self, params: WikidataScanParams, sources: Mapping[str, SourceInfo]) -> int:
        """`num_shards` if given, else about one shard per 256 MB of decompressed JSON."""
        requested = getattr(params, "num_shards", 0)
        if requested:
            return int(requested)
        src = sources[self.sources[0]]
        compression = detect_compression(src.path)
        return max(1, math.ceil(src.size * EXPANSION[compression] / AUTO_SHARD_INPUT_BYTES))

    def spill_bytes_estimate(self, ctx: StageContext[WikidataScanParams]) -> int | None:
        """About a quarter of the decompressed JSON (measured: 20% with two languages and sites)."""
        src = ctx.sources[self.sources[0]]
        return int(src.size * EXPANSION[detect_compression(src.path)] * SPILL_SHARE)

    # --- map ---------------------------------------------------------------------------------
    def progress_total(self, ctx: StageContext[WikidataScanParams]) -> int | None:
        """Progress is measured in bytes of the file on disk (compressed bytes for .gz/.bz2)."""
        return ctx.sources[self.sources[0]].size

    def map_tasks(self, ctx: StageContext[WikidataScanParams]) -> Iterator[MapTask]:
        """Byte ranges of an uncompressed dump or, for `.gz` with a saved seek index and several
        workers, ranges of the decompressed stream; otherwise blocks of the decompressed stream."""
        src = ctx.sources[self.sources[0]]
        fmt = sniff_json_dump(src.path)
        chunk = task_bytes(ctx, src.size * EXPANSION[fmt.compression])
        if fmt.compression == "none":
            for start, end in byte_ranges(src.size, chunk):
                yield MapTask(f"r{start:015d}", {"start": start, "end": end})
            return
        index_sha256 = None
        if fmt.compression == "gzip" and ctx.options.workers > 1 and worth_indexing(src.size, chunk):
            # A run that began on sequential blocks finishes on them (its spills are reused).
            if not any((Path(ctx.workdir) / "_map").glob("b*.done.json")):
                gz_index = load_gzip_index(src.path, src.sha256)
                if gz_index is not None:
                    trailer = gz_index.trailer.hex()
                    for start, end, compressed in gz_index.ranges(src.size, chunk):
                        range_meta = {
                            "start": start,
                            "end": end,
                            "index": gz_index.path,
                            "index_offset": gz_index.data_offset,
                            "points": gz_index.task_points(start, end),
                            "trailer": trailer,
                            "compressed_delta": compressed,
                        }
                        yield MapTask(f"g{start:015d}", range_meta)
                    return
            index_sha256 = src.sha256  # no usable index: this full read leaves one
        consumed = 0
        index = 0
        decompressed = iter_decompressed_blocks(
            src.path, fmt.compression, chunk, threads=max(1, ctx.options.workers), index_sha256=index_sha256
        )
        # Decompression runs a couple of blocks ahead in a thread (it releases the GIL), so even
        # `--workers 1` parses one block while the next is decompressed; on a single CPU the
        # thread would only take turns with the parser, so the blocks are read in line.
        blocks = Prefetched(decompressed, depth=2) if usable_cpus() > 1 else InlineBlocks(decompressed)
        # A block's share of the compressed file (progress bar and `input_progress_bytes`) is
        # estimated from its decompressed length, and an empty closing task takes the remainder:
        # decoders report different compressed positions (isal, rapidgzip with 1 or N threads),
        # and a build resumed with another worker count must record the same stats.
        expansion = EXPANSION[fmt.compression]
        end = 0
        # Each block is handed out once the next one (or the clean end) is read: the last block of a
        # cut stream ends in a partial line, and the error must name the cut stream, not that line.
        pending: MapTask | None = None
        try:
            try:
                for offset, block, _position in blocks:
                    if pending is not None:
                        yield pending
                    share = min(src.size - consumed, len(block) // expansion)
                    consumed += share
                    end = offset + len(block)
                    pending = MapTask(f"b{index:08d}", {"offset": offset, "compressed_delta": share}, block)
                    index += 1
                if pending is not None:
                    yield pending
                yield MapTask(f"b{index:08d}", {"offset": end, "compressed_delta": src.size - consumed}, b"")
            except StreamTruncated as exc:
                raise exc.data_error(src.label) from exc
        finally:
            blocks.close()

    def on_map_done(
        self, ctx: StageContext[WikidataScanParams], done: Mapping[str, Any], progress: ProgressFn
    ) -> None:
        """Advance the bar over tasks finished by an earlier run."""
        stats = done["stats"]
        progress(int(stats.get("input_progress_bytes", 0)), int(stats.get("entities_decoded", 0)))

    def map(
        self, ctx: StageContext[WikidataScanParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Decode the task's lines and route their rows to shard buckets."""
        with gc_paused():  # the task's rows are acyclic: nothing for the GC to free
            return self._map(ctx, task, sink, progress)

    def _map(
        self, ctx: StageContext[WikidataScanParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        src = ctx.sources[self.sources[0]]
        stats = Stats()
        rejects: list[dict[str, Any]] = []
        if task.payload is not None:
            base, block = int(task.meta["offset"]), task.payload
            report_bytes = False
        elif "index" in task.meta:
            base, block = read_indexed_range(src.path, dict(task.meta))
            report_bytes = False  # progress counts compressed bytes: `compressed_delta` at the end
        else:
            base, block = read_range(src.path, int(task.meta["start"]), int(task.meta["end"]))
            report_bytes = True
        config = ctx.params.decode_config()
        decoder = EntityDecoder(config)
        rows = ScanRows(ctx.params.languages, ctx.params.sites, ctx.num_shards, decoder)
        native = (
            NativeRows(ctx.params.languages, config.sites, ctx.num_shards, sink.shards_per_group)
            if native_enabled(config)
            else None
        )

        def decode_line(offset: int, line: bytes, stripped: bytes) -> None:
            """The reference path for one entity line (every line, or the native scanner's fallbacks)."""
            try:
                decoded = decoder.decode(stripped)
            except LineRejected as exc:
                if exc.reason in TRUNCATION_REASONS and runs_to_the_end(offset - base, line, block):
                    raise DataError(
                        f"the dump ends in the middle of an entity ({exc.detail}): it is truncated; "
                        "download it again",
                        path=src.label,
                        offset=offset,
                    ) from None
                rejects.append(reject_record(src.label, offset, exc.reason, exc.detail, line))
                stats.add("rejected_total")
                stats.add(f"rejected_{exc.reason}")
                return
            if decoded.slow_path:
                stats.add("slow_path_lines")
            if decoded.unsupported_values:
                stats.add("unsupported_datavalues", decoded.unsupported_values)
            if len(decoded.entities) > 1:
                stats.add("extra_wrapped_entities", len(decoded.entities) - 1)
            if not decoded.entities:
                stats.add("redirect_only_lines")
            for ent in decoded.entities:
                rows.add_entity(ent, offset)
            for from_id, to_id in decoded.redirects:
                rows.add_redirect(from_id, to_id, offset)

        def entity_count() -> int:
            return rows.entity_count + (native.entity_count if native is not None else 0)

        reported = base
        entities_reported = 0

        def report(position: int) -> None:
            """Advance the bar every 4 MB of an uncompressed range (compressed: once, at the end)."""
            nonlocal reported, entities_reported
            if report_bytes and position - reported >= (4 << 20):
                progress(position - reported, entity_count() - entities_reported)
                reported, entities_reported = position, entity_count()

        if native is not None:
            for start, end in pieces(block, NATIVE_PIECE_BYTES):
                lines, opens, closes, fallbacks = native.scan(block, base, start, end)
                # Only counters that occurred, as on the reference path: a manifest's stats must
                # not depend on which path read the lines.
                for key, count in (
                    ("lines_total", lines),
                    ("framing_open", opens),
                    ("framing_close", closes),
                ):
                    if count:
                        stats.add(key, count)
                for offset, line_start, line_end in fallbacks:
                    line = bytes(block[line_start:line_end])
                    stripped = line.strip()
                    decode_line(offset, line, stripped[:-1] if stripped.endswith(b",") else stripped)
                report(base + end)
        else:
            # Lines as bytes for the reference decoder: the copy is noise next to decoding them.
            for offset, line in iter_lines(bytes(block), base):
                stripped = line.strip()
                if not stripped:
                    continue
                if stripped in (b"[", b"\xef\xbb\xbf["):
                    stats.add("framing_open")
                    continue
                if stripped == b"]":
                    stats.add("framing_close")
                    continue
                if stripped.endswith(b","):
                    stripped = stripped[:-1]
                stats.add("lines_total")
                decode_line(offset, line, stripped)
                report(offset)
        stats.add("entities_decoded", entity_count())
        stats.add("redirects_seen", rows.redirect_count)
        emit_tables(sink, [rows.tables(), native.tables() if native is not None else {}])
        if report_bytes:
            done_units = base + len(block) - reported
            stats.add("input_progress_bytes", len(block))
        else:
            done_units = int(task.meta["compressed_delta"])
            stats.add("input_progress_bytes", done_units)
        progress(done_units, entity_count() - entities_reported)
        write_task_rejects(Path(ctx.workdir) / "_map" / f"{task.task_id}.rejects.jsonl", rejects)
        return stats

    def check_map_stats(self, ctx: StageContext[WikidataScanParams], stats: Stats, map_dir: Path) -> None:
        """Stop as soon as more lines were rejected than `--max-bad-lines` allows."""
        bad = stats.get("rejected_total", 0)
        limit = ctx.options.max_bad_lines
        if bad <= limit:
            return
        src = ctx.sources[self.sources[0]]
        first = first_reject(map_dir)
        reason = "unknown"
        if first is not None:
            reason = first["reason"] + (f" ({first['detail'][:120]})" if first["detail"] else "")
        raise DataError(
            f"{bad} bad line(s), more than --max-bad-lines {limit}; first: {reason}; "
            f"see rejects in {map_dir}",
            path=src.label,
            offset=int(first["offset"]) if first else None,
        )

    # --- reduce ------------------------------------------------------------------------------
    def reduce(
        self, ctx: StageContext[WikidataScanParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Keep one revision per entity id (highest lastrevid, then latest line); drop the others' rows.

        Only the ids are read to find out: a shard without duplicates (a dump of current entities)
        leaves every table as mapped, so a large one is sorted on disk instead of held."""
        stats = Stats()
        ids = map_column(tables, "entities", "id")
        if not len(ids) or pc.count_distinct(ids).as_py() == len(ids):
            stats.add("entities_written", len(ids))
            return {}, stats
        del ids
        # Duplicate ids (a dump of several revisions): the shard's tables are deduped in memory.
        entities, dropped = dedupe_entities(tables["entities"])
        stats.add("duplicate_ids", len(dropped))
        dup_rejects = [
            reject_record(
                ctx.sources[self.sources[0]].label,
                off,
                "duplicate_id",
                f"{ident} superseded by the revision at offset {kept}",
                b"",
            )
            for ident, off, kept in dropped
        ]
        write_rejects(Path(ctx.workdir) / "_scratch" / f"duplicates-{shard:05d}.jsonl", dup_rejects)
        keep_offsets = pa.array(sorted(set(entities.column("source_offset").to_pylist())), pa.int64())
        out: dict[str, pa.Table] = {}
        for name, table in tables.items():  # every per-entity table carries its line's offset
            if name != "entities" and OFFSET_COLUMN in table.column_names:
                out[name] = table.filter(pc.is_in(table.column(OFFSET_COLUMN), value_set=keep_offsets))
        out["entities"] = entities
        stats.add("entities_written", entities.num_rows)
        return out, stats

    def finalize(
        self, ctx: StageContext[WikidataScanParams], directory: Path, stats: Stats
    ) -> dict[str, Any]:
        """Write `_rejects.jsonl` (all rejected lines, by offset) and the framing warning."""
        rejects: list[dict[str, Any]] = []
        # The rejects of this run's map tasks only: a run killed and resumed with another
        # --chunk-mb leaves the first run's task files behind, and their lines are in these too.
        map_dir = directory / "_map"
        task_ids: list[str] = json.loads((map_dir / "_TASKS.json").read_text(encoding="utf-8"))
        task_rejects = [map_dir / f"{task_id}.rejects.jsonl" for task_id in sorted(task_ids)]
        for path in [p for p in task_rejects if p.exists()] + sorted(
            (directory / "_scratch").glob("duplicates-*.jsonl")
        ):
            with open(path, encoding="utf-8") as f:
                rejects.extend(json.loads(line) for line in f if line.strip())
        rejects.sort(key=lambda r: (r["offset"], r["reason"]))
        write_rejects(directory / REJECTS_FILE, rejects)
        extra: dict[str, Any] = {"files": [REJECTS_FILE], "rejects_lines": len(rejects)}
        if stats.get("framing_open") and not stats.get("framing_close"):
            extra["missing_closing_bracket"] = 1
            # Not an error (Wikidata's own 2017 head ends so), but a download cut at a line boundary
            # looks just like it: say so where the user looks, not only in a counter.
            src = ctx.sources[self.sources[0]]
            print(
                f"entbench: warning: {src.label}: the JSON array opened with `[` has no closing `]`: "
                "the dump may be cut at a line boundary (entities after the cut would be missing); "
                "check its size against the published one",
                file=sys.stderr,
            )
        return extra
