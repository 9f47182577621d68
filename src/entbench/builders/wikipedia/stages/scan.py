"""The Wikipedia dump scan: pages-articles XML -> normalized `pages` and `links` (spec §3).

Map tasks are blocks of whole `<page>` elements (see `readers.mediawiki.xml_dump` for how a dump is cut:
byte ranges of plain XML, bz2 streams of a multistream dump via its index, or page-aligned
blocks of a sequentially decompressed `.bz2`/`.gz`). Each task parses its pages (the fast page
reader, or mwxml with `ENTBENCH_XML_READER=mwxml`: the same pages), renders the wikitext
(`readers.wikitext.render`) and routes rows to shards by `page_id`. Every page ends up as a row or as a
count under `dropped_namespace_<ns>`, or, when it cannot be read (`malformed_xml`, `malformed_page`),
a reject in `_rejects.jsonl` counted under `rejected_<reason>`, up to `--max-bad-lines`
(`engine.dump_scan`); every `[[…]]` is counted by kind (`links_article` are the
rows of `links`; `links_file`, `links_category`, … are not article links).

Parameters: `namespaces` (default `[0]`: articles and their redirects), `language` (default: the
dump's `xml:lang`; it picks the namespace aliases, the link trail and whether `-{…}-` conversion
markup is read), `zh_variants` (which variant `-{zh-cn:…;zh-tw:…}-` shows; Simplified first),
`disambiguation_templates`. `_siteinfo.json` (namespaces, dbname, language) is written next to
the shards for downstream stages (`title_qid` resolves namespaces with it).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
from msgspec import Meta

from entbench.engine.dump_scan import DumpScan
from entbench.engine.executors.base import on_release
from entbench.engine.shards import shard_of
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    StageContext,
    map_column,
    map_rows,
    write_side_file,
)
from entbench.engine.stats import Stats, counted
from entbench.gc_pause import gc_paused
from entbench.readers.compressed.blocks import iter_decompressed_blocks
from entbench.readers.compressed.dumps import detect_compression
from entbench.readers.mediawiki.multistream import iter_streams
from entbench.readers.mediawiki.page_ranges import page_range
from entbench.readers.mediawiki.xml_dump import (
    BadPage,
    RawPage,
    SiteInfo,
    check_dump_tail,
    check_multistream_end,
    iter_page_blocks,
    iter_pages_or_bad,
    multistream_index_path,
    page_pieces,
    parse_siteinfo,
    read_header,
    read_plain_tail,
    read_stream_offsets,
)
from entbench.readers.wikitext.markup import CONVERTER_LANGUAGES, DEFAULT_ZH_VARIANTS
from entbench.readers.wikitext.render import (
    DEFAULT_DISAMBIGUATION_TEMPLATES,
    Link,
    RenderConfig,
    redirect_target,
    render,
)
from entbench.readers.wikitext.titles import normalize_title
from entbench.schemas import wikipedia as schema

#: Decompressed/compressed size ratio of XML dumps when a dump's own cannot be measured
#: (`DumpScan.expansion_of` measures it on the dump's start).
EXPANSION = {"none": 1, "gzip": 4, "bz2": 5}
#: Target decompressed XML bytes per output shard when `num_shards` is 0 (auto).
AUTO_SHARD_INPUT_BYTES = 512 << 20
#: Decompressed XML a map task parses and hands to the sink at a time: its memory bound (a task
#: covers up to --chunk-mb, and a dump of a few GB gives tasks of that size).
PIECE_BYTES = 4 << 20
SEQ_COLUMN = "_seq"  # (block offset, page index) of a row: breaks ties between duplicate page ids


@dataclass(frozen=True)
class WikipediaScanParams(Params):
    """Parameters of the Wikipedia scan (see the module docstring)."""

    namespaces: Annotated[
        tuple[int, ...],
        Meta(min_length=1, description="namespaces whose pages are kept (0: articles)"),
    ] = (0,)
    language: Annotated[
        str,
        Meta(
            description=(
                "the wiki's language; empty: from the dump's `<mediawiki xml:lang>` (set it when a "
                "dump's header names another wiki's, as DBpedia's zh page does)"
            )
        ),
    ] = ""
    zh_variants: Annotated[
        tuple[str, ...],
        Meta(description="the order in which `-{…}-` variants are preferred on Chinese wikis"),
    ] = DEFAULT_ZH_VARIANTS
    disambiguation_templates: Annotated[
        tuple[str, ...],
        Meta(
            description=(
                "templates that flag a page as a disambiguation page; by default the common enwiki "
                "and zhwiki names"
            )
        ),
    ] = DEFAULT_DISAMBIGUATION_TEMPLATES
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 512 MB of uncompressed XML"),
    ] = 0


def page_shard(page_id: int, num_shards: int) -> int:
    """The shard of a page: xxh64 of the decimal page id (as `shard_of` does for entity ids)."""
    return shard_of(str(page_id), num_shards)


def site_for(params: WikipediaScanParams, header: bytes, path: str) -> SiteInfo:
    """The dump's site info, with the language overridden by the `language` parameter if set."""
    site = parse_siteinfo(header, path)
    if params.language:
        site = dataclasses.replace(site, language=params.language)
    return site


def render_config(params: WikipediaScanParams, site: SiteInfo) -> RenderConfig:
    """How to render this wiki's wikitext."""
    return RenderConfig(
        table=site.namespace_table(),
        conversion=site.language.split("-")[0] in CONVERTER_LANGUAGES,
        variants=params.zh_variants,
    )


#: Render configs kept across the map tasks a process runs: their caches of classified link targets
#: and folded template names pay off over a whole dump (a new config per task classified every
#: target again, half the classifications of a 64 MB scan). The caches are bounded (`RenderConfig`),
#: and dropped when the process ends the map phase (`on_release`): a one-worker build runs every
#: later stage in this process, and held the cache (~100 MB on a 256 MB dump) through all of them.
_RENDER_CONFIGS: dict[tuple[WikipediaScanParams, SiteInfo], RenderConfig] = {}
on_release(_RENDER_CONFIGS.clear)


def shared_render_config(params: WikipediaScanParams, site: SiteInfo) -> RenderConfig:
    """`render_config`, one per (params, site) in this process."""
    key = (params, site)
    config = _RENDER_CONFIGS.get(key)
    if config is None:
        if len(_RENDER_CONFIGS) >= 4:
            _RENDER_CONFIGS.clear()
        config = _RENDER_CONFIGS[key] = render_config(params, site)
    return config


class WikipediaScan(DumpScan[WikipediaScanParams]):
    """Scan one MediaWiki XML dump into `pages` and `links`."""

    name = "wikipedia"
    # 2: a removed template takes the quote marks enclosing it (no stray apostrophes); 3: inline
    # templates keep their text, no link trail crosses a template, image captions over lines and
    # external links around wikilinks leave no markup (issue 21)
    # 4: `_siteinfo.json` (sidecars start with `_`); 5: templates that show words are rendered
    # (`inline_templates.toml`), formulas show their TeX, no words glued where a template was,
    # zhwiki's `le`/`link-xx`/`tsl` are links, the whole interwiki map, template counts (issue 32)
    version = 5
    layer = "normalized"
    default_num_shards = 1
    shard_key = "page_id"
    description = "Wikipedia XML dump -> pages (plain text, flags), links (anchors at offsets)"
    #: `build --limit N` cuts, and `--dry-run` samples, this stage's dump as one of this kind.
    source_kind = "mediawiki-xml"
    progress_items = "pages"
    expansion = EXPANSION
    auto_shard_bytes = AUTO_SHARD_INPUT_BYTES
    items_stat = "pages_seen"
    record_noun = "page"
    side_files = ("siteinfo",)

    def __init__(self, source: str = "wikipedia") -> None:
        super().__init__(source)
        self.sources = (source,)

    # --- declaration -------------------------------------------------------------------------
    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """How much the dump held."""
        articles, redirects = counted(stats, "pages_article"), counted(stats, "pages_redirect")
        return (
            f"the {self.sources[0]} dump holds {articles:,} article(s) and {redirects:,} redirect(s) "
            f"with {counted(stats, 'links_written'):,} article link(s)"
        )

    def outputs(self, params: WikipediaScanParams) -> list[Output]:
        """`pages` and `links`."""
        return [
            Output("pages", schema.PAGES, ("page_id",)),
            Output("links", schema.LINKS, ("page_id", "ordinal")),
        ]

    def map_schemas(self, params: WikipediaScanParams) -> dict[str, pa.Schema]:
        """Output schemas plus `_seq`, which the reducer needs to drop duplicate page ids."""
        seq = pa.field(SEQ_COLUMN, pa.int64(), nullable=False)
        return {o.name: o.schema.append(seq) for o in self.outputs(params)}

    # --- map ---------------------------------------------------------------------------------
    def map_tasks(self, ctx: StageContext[WikipediaScanParams]) -> Iterator[MapTask]:
        """Blocks of whole pages: byte ranges, multistream streams, or decompressed blocks."""
        src = self.dump(ctx)
        header = read_header(src.path)
        head = {"header": header.decode("utf-8")}
        chunk = self.task_bytes(ctx)
        compression = detect_compression(src.path)
        if compression == "none":
            tail_offset, tail = read_plain_tail(src.path, src.size)
            check_dump_tail(tail, src.label, tail_offset)
            yield from self.range_tasks(src.size, chunk, head)
            return
        index = multistream_index_path(src.path) if compression == "bz2" else None
        if index is not None:
            offsets = read_stream_offsets(index, src.path)
            if offsets:
                check_multistream_end(src.path, src.label, offsets[-1], src.size)
            yield from _multistream_tasks(
                offsets, src.size, max(1, int(chunk / self.expansion_of(src))), head
            )
            return
        # One stream, decompressed here: `.bz2` by rapidgzip's bz2 reader with a thread per worker
        # (falling back to the stdlib's for the exact end of a damaged stream), `.gz` by isal
        # (`readers.compressed.blocks`), then cut into blocks of whole pages.
        decompressed = iter_decompressed_blocks(
            src.path, compression, chunk, threads=max(1, ctx.options.workers)
        )
        pages = iter_page_blocks(_BlockStream(decompressed), len(header), chunk, src.label)
        yield from self.block_tasks(ctx, pages, compression=compression, end=len(header), meta=lambda _: head)

    def map(
        self, ctx: StageContext[WikipediaScanParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Parse and render the task's pages; route `pages` and `links` rows to shard buckets."""
        with gc_paused():  # the task's rows are acyclic: nothing for the GC to free
            return self._map(ctx, task, sink, progress)

    def _map(
        self, ctx: StageContext[WikipediaScanParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        params = ctx.params
        src = ctx.sources[self.sources[0]]
        header = str(task.meta["header"]).encode("utf-8")
        pieces: Iterator[tuple[int, bytes]]
        if task.payload is not None:
            offset = int(task.meta["offset"])
            pieces = page_pieces((bytes(task.payload),), PIECE_BYTES, trim=False)  # bytes already: no copy
            units = int(task.meta["compressed_delta"])
        elif "mstart" in task.meta:
            offset = int(task.meta["mstart"])
            streams = iter_streams(src.path, offset, int(task.meta["mend"]), PIECE_BYTES)
            pieces = page_pieces(streams, PIECE_BYTES, trim=True)
            units = int(task.meta["mend"]) - int(task.meta["pstart"])
        else:
            offset, chunks = page_range(src.path, int(task.meta["start"]), int(task.meta["end"]), PIECE_BYTES)
            pieces = page_pieces(chunks, PIECE_BYTES, trim=False)
            units = int(task.meta["end"]) - int(task.meta["start"])
        site = site_for(params, header, src.label)
        rows = PageRows(params, site, ctx.num_shards)
        rejects = self.rejects(ctx, rows.stats)
        index = 0
        # A piece of pages at a time, its rows handed to the sink before the next is read: the
        # task's memory is a piece's, whatever the task's size (which grows with the dump up to
        # --chunk-mb). `_seq` still counts the task's pages, so rows and their order are the same.
        for start, piece in pieces:
            for page in iter_pages_or_bad(header, piece, offset + start):
                if isinstance(page, BadPage):
                    where, detail = page.offset, page.detail
                    if "mstart" in task.meta:  # pages of decompressed bz2 streams: name the streams' offset
                        where, detail = offset, f"{detail} (byte {page.offset - offset} of these streams)"
                    rejects.add(where, page.reason, detail, page.head)
                    continue
                rows.add(page, offset * 4096 + index)
                index += 1
            del piece
            rows.emit(sink)
        rows.stats.add("input_progress_bytes", units)
        progress(units, rows.stats.get("pages_seen", 0))
        rejects.write(ctx, task)
        return rows.stats

    # --- reduce ------------------------------------------------------------------------------
    def reduce(
        self, ctx: StageContext[WikipediaScanParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Keep one page per id (highest revision, then last in the dump) and only its links.

        Only the page ids are read to find out: a shard without duplicates (every dump of current
        pages) leaves both tables as mapped, so a large one is sorted on disk instead of held."""
        stats = Stats()
        ids = map_column(tables, "pages", "page_id")
        if len(ids) and pc.count_distinct(ids).as_py() != len(ids):
            pages, links = tables["pages"], tables["links"]
            pages, dropped = _dedupe_pages(pages)
            stats.add("dropped_duplicate_page_id", dropped)
            keep = pages.column(SEQ_COLUMN).combine_chunks()
            links = links.filter(pc.is_in(links.column(SEQ_COLUMN), value_set=keep))
            stats.add("pages_written", pages.num_rows)
            stats.add("links_written", links.num_rows)
            return {"pages": pages, "links": links}, stats
        stats.add("pages_written", len(ids))
        stats.add("links_written", map_rows(tables, "links"))
        return {}, stats

    def finalize(
        self, ctx: StageContext[WikipediaScanParams], directory: Path, stats: Stats
    ) -> dict[str, Any]:
        """Write `_siteinfo.json` (namespaces, dbname, language) for downstream stages, and
        `_rejects.jsonl` when pages could not be read."""
        params = ctx.params
        src = ctx.sources[self.sources[0]]
        site = site_for(params, read_header(src.path), src.label)
        write_side_file(directory, "siteinfo", site.to_json())
        return self.finalize_rejects(directory)


class _BlockStream:
    """`iter_decompressed_blocks`' blocks as a stream of bytes (what `iter_page_blocks` reads)."""

    def __init__(self, blocks: Iterator[tuple[int, bytearray]]) -> None:
        self._blocks = blocks
        self._data = b""
        self._pos = 0

    def read(self, n: int) -> bytes:
        """Up to `n` bytes; b"" at the end. A damaged stream raises `StreamTruncated`."""
        if self._pos >= len(self._data):
            block = next(self._blocks, None)
            if block is None:
                return b""
            self._data, self._pos = bytes(block[1]), 0  # a copy: the reader reuses its buffers
        out = self._data[self._pos : self._pos + n]
        self._pos += len(out)
        return out


def _multistream_tasks(
    offsets: list[int], size: int, group_bytes: int, head: Mapping[str, str]
) -> Iterator[MapTask]:
    """Consecutive bz2 streams grouped into tasks of about `group_bytes` compressed bytes."""
    bounds = [*offsets, size]
    start = bounds[0]
    progress_from = 0  # the first task also accounts for the header stream before it
    for i in range(1, len(bounds)):
        end = bounds[i]
        if end - start >= group_bytes or i == len(bounds) - 1:
            yield MapTask(f"m{start:015d}", {**head, "mstart": start, "mend": end, "pstart": progress_from})
            start = progress_from = end


def _dedupe_pages(pages: pa.Table) -> tuple[pa.Table, int]:
    ids = pages.column("page_id").to_pylist()
    revs = pages.column("revision_id").to_pylist()
    seqs = pages.column(SEQ_COLUMN).to_pylist()
    best: dict[int, int] = {}
    for i, ident in enumerate(ids):
        j = best.get(ident)
        if j is None or ((revs[i] or -1), seqs[i]) > ((revs[j] or -1), seqs[j]):
            best[ident] = i
    keep = sorted(best.values())
    return pages.take(pa.array(keep, pa.int64())), len(ids) - len(keep)


class PageRows:
    """Rows of one map task, per shard, kept column-wise and converted to Arrow in one go at the end.

    Links stay the renderer's `Link` tuples, appended a page at a time: no per-link Python work
    here; `emit` transposes them in C (`zip`).
    """

    def __init__(self, params: WikipediaScanParams, site: SiteInfo, num_shards: int) -> None:
        self.params = params
        self.num_shards = num_shards
        self.config = shared_render_config(params, site)
        self.namespaces = frozenset(params.namespaces)
        self.disambiguation = frozenset(t.casefold() for t in params.disambiguation_templates)
        self.shards = [_ShardRows() for _ in range(num_shards)]
        self.stats = Stats()

    def add(self, page: RawPage, seq: int) -> None:
        """Add one parsed page (a `RawPage`)."""
        stats = self.stats
        stats.add("pages_seen")
        if page.ns not in self.namespaces:
            stats.add(f"dropped_namespace_{page.ns}")
            return
        rows = self.shards[page_shard(page.page_id, self.num_shards)]
        table = self.config.table
        text: str = page.text
        target = page.redirect
        if target is None and text.lstrip().startswith("#"):
            target = redirect_target(text)
        if target is not None:
            stats.add("pages_redirect")
            rows.page(page, True, normalize_title(target, table), False, "", [], seq)
            return
        rendered = render(text, self.config)
        disambiguation = self.config.is_disambiguation(text, self.disambiguation)
        stats.add("pages_article")
        if disambiguation:
            stats.add("pages_disambiguation")
        if not rendered.text:
            stats.add("pages_empty_text")
        stats.merge(rendered.counts)
        rows.page(page, False, None, disambiguation, rendered.text, rendered.paragraph_starts, seq)
        links = rendered.links
        if links:
            n = len(links)
            rows.links.extend(links)
            rows.link_page_ids.extend(itertools.repeat(page.page_id, n))
            rows.link_ordinals.extend(range(n))
            rows.link_seqs.extend(itertools.repeat(seq, n))

    def emit(self, sink: BucketSink) -> None:
        """Hand every shard's rows gathered since the last call to the sink as Arrow tables."""
        seq = pa.field(SEQ_COLUMN, pa.int64(), nullable=False)
        page_schema, link_schema = schema.PAGES.append(seq), schema.LINKS.append(seq)
        for shard, rows in enumerate(self.shards):
            if rows.page_columns[0]:
                sink.emit("pages", shard, _to_table(rows.page_columns, page_schema))
            if rows.links:
                target, normalized, anchor, start, end, paragraph = zip(*rows.links, strict=True)
                columns = (rows.link_page_ids, rows.link_ordinals, target, normalized, anchor, start, end)
                sink.emit("links", shard, _to_table((*columns, paragraph, rows.link_seqs), link_schema))
        self.shards = [_ShardRows() for _ in range(self.num_shards)]


class _ShardRows:
    """One shard's rows of a map task: page columns in `schema.PAGES` order (+ `_seq`), links."""

    __slots__ = ("link_ordinals", "link_page_ids", "link_seqs", "links", "page_columns")

    def __init__(self) -> None:
        self.page_columns: tuple[list[Any], ...] = tuple([] for _ in range(len(schema.PAGES) + 1))
        self.links: list[Link] = []
        self.link_page_ids: list[int] = []
        self.link_ordinals: list[int] = []
        self.link_seqs: list[int] = []

    def page(
        self,
        page: RawPage,
        is_redirect: bool,
        redirect: str | None,
        disambiguation: bool,
        text: str,
        paragraph_starts: list[int],
        seq: int,
    ) -> None:
        values = (page.page_id, page.title, page.ns, page.revision_id, is_redirect, redirect, disambiguation)
        for column, value in zip(self.page_columns, (*values, text, paragraph_starts, seq), strict=True):
            column.append(value)


def _to_table(columns: Sequence[Sequence[Any]], table_schema: pa.Schema) -> pa.Table:
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, table_schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=table_schema)
