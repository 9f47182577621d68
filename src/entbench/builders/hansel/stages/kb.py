"""Stage `hansel_kb`: the entity KB a linker encodes, one row per entity of E_known ∪ E_new.

Hansel's entity input is "the title and the first paragraph in Chinese Wikipedia" (§4.1), and its
annotators read "its entity description (first paragraph in Wikipedia) and the original Wikipedia
link" (§3.3). Each entity of `entity_diff.kb_entities` gets its sitelink title on `site` (the new
dump's sitelink, else the old dump's; by default the scanned wiki's `dbname`, `hansel.site`), that
page's first paragraph in the wiki scan (`hansel.kb`), both converted to Simplified with
`converter` on a Chinese wiki (as `hansel` converts its texts; no conversion on any other), the
article URL, its Wikidata label, description and aliases in `language` (by default the wiki's;
from the dump `entity_diff` takes labels from, else the other one), its coarse type and its set
(`known` or `new`). The kb's `internal_filter.site` must admit the site (`check_kb_site`). An
entity without a sitelink, whose page is not in the dump, is a redirect there, or has no text
keeps its label and description and an empty `text`; `text_status` says which.

Work: `map_tasks` writes the KB's sitelink titles to the stage's scratch directory once; one map
task reads the KB side (labels, aliases, types) in DuckDB, and one task per span of the scan's
`pages` cuts the first paragraph of every page a KB title names; both are routed by QID, and each
reducer joins its shard's entities with their paragraphs. Shards are sized from the scan's pages
and the KB (`num_shards` 0: about one per 32 MB of them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Annotated

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.hansel.context import to_simplified
from entbench.builders.hansel.kb import article_url, first_paragraph, text_status, wikipedia_host
from entbench.builders.hansel.site import WikiSite, check_kb_site, require_site, wiki_site
from entbench.engine.duck import parquet_view, stage_connection
from entbench.engine.inputs import Span, read_span, row_group_spans
from entbench.engine.stage import BucketSink, MapTask, Output, Params, ProgressFn, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.errors import UserError
from entbench.filters.mentions import Converter
from entbench.schemas import hansel as schema
from entbench.schemas.base import column_suffix
from entbench.typesys.qids import sql_string

#: Every KB entity's sitelink title, written once per build in the stage's scratch directory.
TITLES_FILE = "kb_titles.parquet"
#: The map tables: the KB side of each entity, and the first paragraph of each page a title names.
ENTITIES, PAGES = "_entities", "_pages"
_ENTITY_ROWS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("sitelink", pa.string()),  # the title as the sitelink writes it
        pa.field("label", pa.string()),
        pa.field("description", pa.string()),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),
        pa.field("type", pa.string()),
        pa.field("split", pa.string(), nullable=False),
    ]
)
_PAGE_ROWS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("page_id", pa.int64(), nullable=False),
        pa.field("is_redirect", pa.bool_(), nullable=False),
        pa.field("text", pa.string(), nullable=False),  # the first paragraph, Simplified
    ]
)
PAGE_COLUMNS = ("page_id", "title", "ns", "is_redirect", "text")
FETCH_ROWS = 1 << 16


@dataclass(frozen=True)
class HanselKbParams(Params):
    """`site`: the Wikipedia of titles, pages and URLs ('': the scanned wiki's `dbname`);
    `language`: of labels, descriptions and aliases ('': the wiki's language); `converter`:
    Traditional -> Simplified for titles and texts of a Chinese wiki (`opencc`, `hanziconv` as the
    Hansel paper converted, or `none`)."""

    site: Annotated[
        str,
        Meta(
            description=(
                "the Wikipedia whose titles, pages and URLs are used; empty: the scanned wiki's "
                "`<dbname>` (the kb's `internal_filter.site` must admit it)"
            )
        ),
    ] = ""
    language: Annotated[
        str,
        Meta(description="language of labels, descriptions and aliases; empty: the wiki's"),
    ] = ""
    converter: Annotated[
        Converter,
        Meta(
            description=(
                "converter of a Chinese wiki's titles and texts to Simplified: `opencc`, `hanziconv` "
                "(Hansel as published) or `none`; on any other wiki nothing is converted"
            )
        ),
    ] = "opencc"
    num_shards: Annotated[
        int,
        Meta(
            description="output shards; 0 = about one per 32 MB of the scan's `pages` and the KB's entities"
        ),
    ] = 0

    def __post_init__(self) -> None:
        if self.site:
            wikipedia_host(self.site)
        super().__post_init__()


@dataclass(eq=False)
class HanselKb(Stage[HanselKbParams]):
    """E_known ∪ E_new with the title, first paragraph and link a linker and its annotators read."""

    version = 2  # 2: site and language from the wiki's <siteinfo>; conversion on a Chinese wiki only
    layer = "benchmarks"
    default_num_shards = 0
    shard_key = "id"
    shard_input_bytes = 32 << 20
    description = "Hansel entity KB: E_known ∪ E_new with the wiki's title, first paragraph and URL"
    progress_unit = "task"
    progress_items = "entities"

    stage_name: str
    _: KW_ONLY
    wikipedia: str
    kb: str = "entity_diff"
    types: str = "coarse_types"
    old: str = "wikidata_old"
    new: str = "wikidata_new"
    kb_filter: str = "internal_filter"

    def __post_init__(self) -> None:
        self.inputs = (self.wikipedia, self.kb, self.types, self.old, self.new, self.kb_filter)

    def site(self, ctx: StageContext[HanselKbParams]) -> WikiSite:
        """The site and language of titles and labels: the parameters, else the wiki's."""
        params = ctx.params
        return wiki_site(ctx, self.wikipedia, site=params.site, language=params.language)

    def outputs(self, params: HanselKbParams) -> list[Output]:
        """One table, `kb`."""
        return [Output("kb", schema.KB, ("id",))]

    def shard_inputs(self, params: HanselKbParams) -> tuple[tuple[str, str], ...]:
        """Sized from the scan's pages (the texts) and the KB's entities."""
        return ((self.wikipedia, "pages"), (self.kb, "kb_entities"))

    def map_schemas(self, params: HanselKbParams) -> dict[str, pa.Schema]:
        """The KB side and the paragraph side of each entity."""
        return {ENTITIES: _ENTITY_ROWS, PAGES: _PAGE_ROWS}

    def map_tasks(self, ctx: StageContext[HanselKbParams]) -> Iterator[MapTask]:
        """Write the KB's sitelink titles once, then one task for the KB side and one per span of
        the scan's `pages`."""
        site = require_site(ctx, self.site(ctx))
        try:
            wikipedia_host(site)
        except ValueError as exc:  # the wiki's own dbname names no Wikipedia (a wiki of another kind)
            raise UserError(f"{ctx.stage}: {exc}; pass --param {ctx.stage}.site=SITE") from None
        for stage in (self.new, self.old):
            # Titles come from the scans' sitelinks: without the site's, every text would be empty.
            sites = ctx.inputs[stage].params.get("sites", [])
            if "*" not in sites and site not in sites:
                raise UserError(
                    f"{ctx.stage}.site={site!r} needs the {site} sitelinks, but {stage} kept "
                    f"only {sites}; rebuild it with --param {stage}.sites={','.join([*sites, site])}"
                )
        check_kb_site(ctx, self.kb_filter, site)
        if not (ctx.scratch / TITLES_FILE).exists():
            self._write_titles(ctx)
        spans = row_group_spans(ctx.inputs[self.wikipedia].files("pages"))
        yield MapTask("entities", {"side": ENTITIES})
        for span in spans:
            yield MapTask(f"pages{span.task_id}", {**span.meta(), "side": PAGES, "tasks": len(spans)})

    def _write_titles(self, ctx: StageContext[HanselKbParams]) -> None:
        site = self.site(ctx).site
        tmp = ctx.scratch / f".{TITLES_FILE}.tmp-{os.getpid()}"
        with stage_connection(ctx, tasks=1, ordered=False) as con:
            parquet_view(con, "kb", ctx.inputs[self.kb].files("kb_entities"))
            for dump, stage in (("new", self.new), ("old", self.old)):
                con.execute(
                    f"CREATE TEMP TABLE {dump}_titles AS SELECT id, min(title) AS title "
                    "FROM read_parquet($files) WHERE site = $site AND id IN (SELECT qid FROM kb) GROUP BY id",
                    {"files": ctx.inputs[stage].files("sitelinks"), "site": site},
                )
            reader = con.sql(
                "SELECT k.qid, coalesce(n.title, o.title) AS title FROM kb k "
                "LEFT JOIN new_titles n ON n.id = k.qid LEFT JOIN old_titles o ON o.id = k.qid "
                "WHERE coalesce(n.title, o.title) IS NOT NULL"
            ).to_arrow_reader(FETCH_ROWS)
            with pq.ParquetWriter(str(tmp), reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
        os.replace(tmp, ctx.scratch / TITLES_FILE)

    def map(
        self, ctx: StageContext[HanselKbParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """The KB side of every entity, or the first paragraphs of one span of pages."""
        if task.meta["side"] == ENTITIES:
            return self._map_entities(ctx, sink, progress)
        return self._map_pages(ctx, Span.from_meta(task.meta), int(task.meta["tasks"]), sink, progress)

    def _map_entities(
        self, ctx: StageContext[HanselKbParams], sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        language = self.site(ctx).language
        kb = ctx.inputs[self.kb]
        names = set(pq.read_schema(kb.files("kb_entities")[0]).names)
        suffix = column_suffix(language)
        label = f"k.label_{suffix}" if f"label_{suffix}" in names else "NULL"
        description = f"k.description_{suffix}" if f"description_{suffix}" in names else "NULL"
        # Aliases come from the dump `entity_diff` shows labels from, for an entity it holds.
        first, second = (
            (self.new, self.old) if kb.params.get("labels_from", "new") == "new" else (self.old, self.new)
        )
        rows = 0
        with stage_connection(ctx, tasks=1, ordered=False) as con:
            parquet_view(con, "k", kb.files("kb_entities"))
            parquet_view(con, "c", ctx.inputs[self.types].files("coarse_types"))
            for side, stage in (("first", first), ("second", second)):
                upstream = ctx.inputs[stage]
                con.execute(
                    f"CREATE TEMP TABLE {side}_ids AS SELECT id FROM read_parquet($files) "
                    "WHERE id IN (SELECT qid FROM k)",
                    {"files": upstream.files("entities")},
                )
                con.execute(
                    f"CREATE TEMP TABLE {side}_aliases AS "
                    "SELECT id, list(alias ORDER BY ordinal) AS aliases FROM read_parquet($files) "
                    "WHERE language = $language AND id IN (SELECT qid FROM k) GROUP BY id",
                    {"files": upstream.files("aliases"), "language": language},
                )
            query = (
                f"SELECT k.qid AS id, t.title AS sitelink, {label} AS label, {description} AS description, "
                "coalesce(CASE WHEN f.id IS NOT NULL THEN fa.aliases ELSE sa.aliases END, []::VARCHAR[]) "
                "AS aliases, "
                f"c.coarse AS type, CASE WHEN k.in_known THEN {sql_string(schema.KNOWN)} "
                f"ELSE {sql_string(schema.NEW)} END AS split "
                "FROM k LEFT JOIN c ON c.qid = k.qid LEFT JOIN read_parquet($titles) t ON t.qid = k.qid "
                "LEFT JOIN first_ids f ON f.id = k.qid LEFT JOIN first_aliases fa ON fa.id = k.qid "
                "LEFT JOIN second_aliases sa ON sa.id = k.qid"
            )
            reader = con.sql(query, params={"titles": str(ctx.scratch / TITLES_FILE)}).to_arrow_reader(
                FETCH_ROWS
            )
            for batch in reader:
                part = pa.Table.from_batches([batch]).cast(_ENTITY_ROWS)
                if part.column("type").null_count:
                    raise UserError(
                        f"{ctx.stage}: {self.types} has no coarse type for some entities of {self.kb}; "
                        "rebuild both from the same dumps"
                    )
                sink.emit_by_key(ENTITIES, part, "id", ctx.num_shards)
                rows += part.num_rows
        progress(1, rows)
        return Stats()

    def _map_pages(
        self,
        ctx: StageContext[HanselKbParams],
        span: Span,
        tasks: int,
        sink: BucketSink,
        progress: ProgressFn,
    ) -> Stats:
        params = ctx.params
        converter = self.site(ctx).converter(params.converter)
        stats = Stats()
        path = ctx.inputs[self.wikipedia].files("pages")[span.file]
        pages = read_span(path, span.row_groups, list(PAGE_COLUMNS))
        pages = pages.filter(pc.equal(pages.column("ns"), 0))
        with stage_connection(ctx, tasks=tasks, ordered=False) as con:
            con.register("span_pages", pages.select(["page_id", "title", "is_redirect"]))
            named = con.execute(
                "SELECT t.qid, p.page_id, p.is_redirect FROM span_pages p "
                "JOIN (SELECT qid, title FROM read_parquet($titles) WHERE title IN "
                "(SELECT title FROM span_pages)) t ON t.title = p.title ORDER BY t.qid, p.page_id",
                {"titles": str(ctx.scratch / TITLES_FILE)},
            ).fetchall()
        # Only the texts of the pages a title names become Python strings.
        wanted = pages.filter(
            pc.is_in(
                pages.column("page_id"), value_set=pa.array(sorted({p for _, p, _ in named}), pa.int64())
            )
        )
        texts = dict(
            zip(wanted.column("page_id").to_pylist(), wanted.column("text").to_pylist(), strict=True)
        )
        del pages, wanted
        ids, page_ids, redirects, paragraphs = [], [], [], []
        for qid, page_id, is_redirect in named:
            paragraph = "" if is_redirect else first_paragraph(texts[page_id])
            simplified, converged = to_simplified(paragraph, converter)
            stats.add("texts_not_converged", not converged)
            ids.append(qid)
            page_ids.append(page_id)
            redirects.append(bool(is_redirect))
            paragraphs.append(simplified)
        if ids:
            table = pa.Table.from_arrays(
                [pa.array(ids), pa.array(page_ids, pa.int64()), pa.array(redirects), pa.array(paragraphs)],
                schema=_PAGE_ROWS,
            )
            sink.emit_by_key(PAGES, table, "id", ctx.num_shards)
        progress(1, len(ids))
        return stats

    def reduce(
        self, ctx: StageContext[HanselKbParams], shard: int, tables: Mapping[str, pa.Table]
    ) -> tuple[dict[str, pa.Table], Stats]:
        """Join the shard's entities with the first paragraphs of their pages."""
        params = ctx.params
        site = self.site(ctx)
        converter = site.converter(params.converter)
        stats = Stats()
        pages: dict[str, tuple[int | None, bool, str]] = {}
        page_rows = tables[PAGES].sort_by([("id", "ascending"), ("page_id", "ascending")])
        for qid, page_id, is_redirect, text in zip(
            *(page_rows.column(c).to_pylist() for c in _PAGE_ROWS.names), strict=True
        ):
            if qid in pages:  # two pages of one title in a dump: the first page id is kept
                stats.add("duplicate_pages_dropped")
                continue
            pages[qid] = (page_id, is_redirect, text)
        del page_rows
        entities = tables[ENTITIES]
        columns: dict[str, list[object]] = {name: [] for name in schema.KB.names}
        for row in entities.to_pylist():
            sitelink = row["sitelink"]
            page_id, is_redirect, text = pages.get(row["id"], (None, False, ""))
            status = text_status(sitelink is not None, page_id is not None, is_redirect, text)
            title = None
            if sitelink is not None:
                title, converged = to_simplified(sitelink, converter)
                stats.add("titles_not_converged", not converged)
                stats.add("titles_changed_by_t2s", title != sitelink)
            stats.add(f"entities_{row['split']}")
            stats.add(f"text_{status}")
            values = {
                "id": row["id"],
                "title": title,
                "text": text if status == "page" else "",
                "url": None if sitelink is None else article_url(site.site, sitelink),
                "label": row["label"],
                "description": row["description"],
                "aliases": row["aliases"],
                "type": row["type"],
                "split": row["split"],
                "page_id": page_id,
                "text_status": status,
            }
            for name, value in values.items():
                columns[name].append(value)
        table = pa.Table.from_arrays([pa.array(columns[f.name], f.type) for f in schema.KB], schema=schema.KB)
        return {"kb": table}, stats
