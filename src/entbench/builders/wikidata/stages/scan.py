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
    dedupe_entities,
    pieces,
)
from entbench.engine.dump_scan import (
    TRUNCATION_REASONS,
    DumpScan,
    reject_record,
    write_rejects,
)
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    StageContext,
    map_column,
)
from entbench.engine.stats import Stats, counted
from entbench.errors import DataError
from entbench.gc_pause import gc_paused
from entbench.readers.compressed.blocks import iter_decompressed_blocks
from entbench.readers.compressed.dumps import iter_lines, iter_range_pieces, sniff_json_dump
from entbench.readers.compressed.gzip_index import iter_indexed_range, load_gzip_index, worth_indexing
from entbench.readers.wikidata_entities import DecodeConfig, EntityDecoder, LineRejected
from entbench.schemas import wikidata as schema

#: Bytes the native scanner reads at a time (and between progress updates of a byte range).
NATIVE_PIECE_BYTES = 4 << 20
#: A map task hands its rows to the sink once the lines they come from hold this many bytes: four
#: pieces, so that a task of the largest block decompressed here (`MAX_BLOCK_TASK_BYTES`) still
#: builds its tables once (each emit builds and spills every table of every shard anew).
EMIT_BYTES = 16 << 20


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


class WikidataScan(DumpScan[WikidataScanParams]):
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
    progress_items = "entities"
    expansion = EXPANSION
    auto_shard_bytes = AUTO_SHARD_INPUT_BYTES
    items_stat = "entities_decoded"
    always_write_rejects = True
    #: Two map tasks' emits (16 MB of JSON is ~18 MB of rows): a shard of a 160 MB-of-JSON dump
    #: sorts its claims (27 MB) whole, 0.30 s CPU against 0.40 s through two runs of 16 MB, a tenth
    #: of the whole scan (bench/run.py, pinned to one CPU); its mappers hold about as much.
    sort_memory_bytes = 2 * EMIT_BYTES

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

    def spill_bytes_estimate(self, ctx: StageContext[WikidataScanParams]) -> int | None:
        """About a quarter of the decompressed JSON (measured: 20% with two languages and sites)."""
        return int(self.input_bytes(self.dump(ctx)) * SPILL_SHARE)

    # --- map ---------------------------------------------------------------------------------
    def map_tasks(self, ctx: StageContext[WikidataScanParams]) -> Iterator[MapTask]:
        """Byte ranges of an uncompressed dump or, for `.gz` with a saved seek index and several
        workers, ranges of the decompressed stream; otherwise blocks of the decompressed stream."""
        src = self.dump(ctx)
        fmt = sniff_json_dump(src.path)
        chunk = self.task_bytes(ctx)
        if fmt.compression == "none":
            yield from self.range_tasks(src.size, chunk, {})
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
        decompressed = iter_decompressed_blocks(
            src.path,
            fmt.compression,
            self.block_task_bytes(ctx),
            threads=max(1, ctx.options.workers),
            index_sha256=index_sha256,
        )
        yield from self.block_tasks(ctx, decompressed, compression=fmt.compression)

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
        rejects = self.rejects(ctx, stats)
        report_bytes = task.payload is None and "index" not in task.meta
        config = ctx.params.decode_config()
        decoder = EntityDecoder(config)
        use_native = native_enabled(config)
        # Rows go to the sink every `EMIT_BYTES` of lines: a task holds that much input's rows (and,
        # read from a file, one piece of its input), whatever its size.
        rows = ScanRows(ctx.params.languages, ctx.params.sites, ctx.num_shards, decoder)
        native: NativeRows | None = None
        emitted_entities = redirects = unemitted = 0

        def entity_count() -> int:
            return emitted_entities + rows.entity_count + (native.entity_count if native is not None else 0)

        def emit() -> None:
            """Hand the rows gathered since the last call to the sink; start anew."""
            nonlocal rows, native, emitted_entities, redirects, unemitted
            emitted_entities = entity_count()
            redirects += rows.redirect_count
            emit_tables(sink, [rows.tables(), native.tables() if native is not None else {}])
            rows = ScanRows(ctx.params.languages, ctx.params.sites, ctx.num_shards, decoder)
            native = None
            unemitted = 0

        def decode_line(offset: int, line: bytes, stripped: bytes, last: bool) -> None:
            """The reference path for one entity line (every line, or the native scanner's fallbacks);
            `last`: the line runs to the end of the stream without a newline."""
            try:
                decoded = decoder.decode(stripped)
            except LineRejected as exc:
                if exc.reason in TRUNCATION_REASONS and last:
                    raise DataError(
                        f"the dump ends in the middle of an entity ({exc.detail}): it is truncated; "
                        "download it again",
                        path=src.label,
                        offset=offset,
                    ) from None
                rejects.add(offset, exc.reason, exc.detail, line)
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

        first = reported = None
        entities_reported = 0
        position = 0
        for buffer, buffer_base, start, end in self._pieces(src.path, task):
            if first is None:
                first = reported = buffer_base + start
            if use_native and native is None:
                native = NativeRows(ctx.params.languages, config.sites, ctx.num_shards, sink.shards_per_group)
            open_tail = buffer[end - 1] != 0x0A  # only the stream's last piece ends without a newline
            if native is not None:
                lines, opens, closes, fallbacks = native.scan(buffer, buffer_base, start, end)
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
                    line = bytes(buffer[line_start:line_end])
                    stripped = line.strip()
                    last = open_tail and line_end >= end
                    decode_line(offset, line, stripped[:-1] if stripped.endswith(b",") else stripped, last)
            else:
                # Lines as bytes for the reference decoder: the copy is noise next to decoding them.
                piece_base = buffer_base + start
                for offset, line in iter_lines(bytes(buffer[start:end]), piece_base):
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
                    last = open_tail and offset - piece_base + len(line) >= end - start
                    decode_line(offset, line, stripped, last)
            unemitted += end - start
            if unemitted >= EMIT_BYTES:
                emit()
            position = buffer_base + end
            assert reported is not None
            if report_bytes and position - reported >= NATIVE_PIECE_BYTES:
                # The bar moves every piece of an uncompressed range (compressed: once, at the end).
                progress(position - reported, entity_count() - entities_reported)
                reported, entities_reported = position, entity_count()
        emit()
        entities = entity_count()
        stats.add("entities_decoded", entities)
        stats.add("redirects_seen", redirects)
        if report_bytes:
            read = position - first if first is not None else 0
            done_units = position - reported if reported is not None else 0
            stats.add("input_progress_bytes", read)
        else:
            done_units = int(task.meta["compressed_delta"])
            stats.add("input_progress_bytes", done_units)
        progress(done_units, entities - entities_reported)
        rejects.write(ctx, task)
        return stats

    @staticmethod
    def _pieces(path: str, task: MapTask) -> Iterator[tuple[bytes | bytearray, int, int, int]]:
        """The task's lines in pieces of about `NATIVE_PIECE_BYTES`, each ending after a newline
        (but the stream's last): (buffer, stream offset of buffer[0], start, end) for buffer[start:end].

        A block handed to the task is cut in place; a range of a file is read (and decompressed)
        one piece at a time into one reused buffer, so the task never holds the whole range."""
        if task.payload is not None:
            block, base = task.payload, int(task.meta["offset"])
            for start, end in pieces(block, NATIVE_PIECE_BYTES):
                yield block, base, start, end
            return
        if "index" in task.meta:
            ranged = iter_indexed_range(path, dict(task.meta), NATIVE_PIECE_BYTES)
        else:
            start, end = int(task.meta["start"]), int(task.meta["end"])
            ranged = iter_range_pieces(path, start, end, NATIVE_PIECE_BYTES)
        for offset, buffer, length in ranged:
            yield buffer, offset, 0, length

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
        extra = self.finalize_rejects(directory, sorted((directory / "_scratch").glob("duplicates-*.jsonl")))
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
