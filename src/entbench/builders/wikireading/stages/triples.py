"""Stage `wikireading_triples`: truthy statements -> one answer set per (item, property) (spec §6).

One map task per row group of a `wikidata` shard's truthy claims (`engine.inputs`: a subject
range, so a task holds at most 65,536 statements whatever the dump). Each reads those claims, the
sitelinks and entity types of the same subjects, looks up the labels its values and properties
need in *every* entity shard (DuckDB reads only the id, label and datatype columns, filtered to
the ids wanted), consolidates the statements with
`entbench.builders.wikireading.answers.consolidate`, and routes the rows by `qid`.

The funnel is counted: `instances_considered` = `dropped_no_sitelink` +
`dropped_property_without_label` + `dropped_no_renderable_value` + `instances_usable`, with
value-level reasons under `values_dropped_<reason>`. Rows of items with a sitelink are kept even
when they cannot be instances (with their `drop_reason`), so that `wikireading_instances` can
count, among items that do have an article, what labels and values cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Meta

from entbench.builders.wikireading.answers import PartialPolicy, consolidate
from entbench.builders.wikireading.values import (
    DEFAULT_DATATYPES,
    CoarseTime,
    RenderOptions,
    effective_datatype,
)
from entbench.engine.duck import stage_connection
from entbench.engine.inputs import Span, span_tasks
from entbench.engine.stage import (
    BucketSink,
    MapTask,
    Output,
    Params,
    ProgressFn,
    Stage,
    StageContext,
)
from entbench.engine.stats import Stats, counted
from entbench.errors import UserError
from entbench.schemas import wikireading as schema
from entbench.schemas.base import column_suffix
from entbench.schemas.wikidata import SNAK_VALUE_FIELDS

_CLAIM_COLUMNS = ["subject", "property", "ordinal", *(f.name for f in SNAK_VALUE_FIELDS)]


@dataclass(frozen=True)
class TriplesParams(Params):
    """`site`: the wiki whose articles are the documents; `language`: of item and property labels
    (a `label_<language>` column the Wikidata scan must have); `datatypes`: property datatypes
    rendered (spec §6 names these eight); `coarse_time`: "year" or "drop" for times coarser than
    a millennium; `on_partial`: "keep" or "drop" an instance some of whose values cannot be
    rendered."""

    site: Annotated[
        str,
        Meta(description="the wiki whose articles are the documents"),
    ] = "enwiki"
    language: Annotated[
        str,
        Meta(description="language of item and property labels (the Wikidata scan must keep it)"),
    ] = "en"
    datatypes: Annotated[
        tuple[str, ...],
        Meta(min_length=1, description="property datatypes rendered"),
    ] = DEFAULT_DATATYPES
    coarse_time: Annotated[
        CoarseTime,
        Meta(description="times coarser than a millennium: rendered as a `year` or `drop`ped"),
    ] = "year"
    on_partial: Annotated[
        PartialPolicy,
        Meta(description="an instance some of whose values cannot be rendered: `keep` (the rest) or `drop`"),
    ] = "keep"
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 8 MB of the scan's `truthy_claims`"),
    ] = 0

    def render_options(self) -> RenderOptions:
        """The value-rendering options these parameters ask for."""
        return RenderOptions(frozenset(self.datatypes), self.coarse_time)


class WikiReadingTriples(Stage[TriplesParams]):
    """Truthy statements of items with a sitelink -> (qid, property, label, answers, title, reason)."""

    name = "wikireading_triples"
    # 2: numbers as plain decimals without trailing zeros ("1.5", "0.00001"); the `datatype` column
    version = 2
    layer = "derived"
    inputs = ("wikidata",)
    default_num_shards = 0
    shard_key = "qid"
    description = "truthy statements -> one answer set per (item, property) with a sitelink"
    progress_unit = "task"
    progress_items = "instances"

    def coverage(self, stats: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """Why (item, property) pairs of the Wikidata dump did not become answer sets."""
        considered = counted(stats, "instances_considered")
        site, language = params.get("site", "enwiki"), params.get("language", "en")
        if not considered:
            return f"no item of the Wikidata dump has both a truthy statement and a sitelink to {site}"
        said = [f"{considered:,} (item, property) pairs of items with a sitelink to {site}"]
        unlabeled = counted(stats, "dropped_property_without_label")
        if unlabeled:
            said.append(
                f"{unlabeled:,} of them dropped because the dump gives their property no {language} "
                "label (a partial dump usually lacks the property entities, P…)"
            )
        unrenderable = counted(stats, "dropped_no_renderable_value")
        if unrenderable:
            said.append(f"{unrenderable:,} with no value WikiReading renders")
        return ", ".join(said)

    def outputs(self, params: TriplesParams) -> list[Output]:
        """One table, sorted by (qid, property)."""
        return [Output("triples", schema.TRIPLES, ("qid", "property"))]

    def shard_inputs(self, params: TriplesParams) -> tuple[tuple[str, str], ...]:
        """Sized from the Wikidata scan's truthy statements."""
        return (("wikidata", "truthy_claims"),)

    def map_tasks(self, ctx: StageContext[TriplesParams]) -> Iterator[MapTask]:
        """One task per span of a Wikidata shard's truthy statements (a subject range), after
        checking the scan kept the site and language."""
        params = ctx.params
        upstream = ctx.inputs["wikidata"]
        scan_params = upstream.params
        sites = scan_params.get("sites", [])
        if "*" not in sites and params.site not in sites:
            raise UserError(
                f"wikireading_triples.site={params.site} but the wikidata scan kept only sites "
                f"{sites}; add it with --param wikidata.sites=...,{params.site}"
            )
        if params.language not in scan_params.get("languages", []):
            raise UserError(
                f"wikireading_triples.language={params.language} but the wikidata scan kept only "
                f"labels in {scan_params.get('languages')}; add it with --param wikidata.languages=..."
            )
        # One row group (65,536 statements) a task: the statements become Python dicts, ~2 KB each,
        # so their count, not their few bytes of Parquet, is what a task holds.
        yield from span_tasks(upstream.files("truthy_claims"), 1, key="subject")

    def map(
        self, ctx: StageContext[TriplesParams], task: MapTask, sink: BucketSink, progress: ProgressFn
    ) -> Stats:
        """Consolidate one subject range's statements and route the rows by qid."""
        params = ctx.params
        upstream = ctx.inputs["wikidata"]
        span = Span.from_meta(task.meta)
        stats = Stats()
        claims = pq.read_table(
            upstream.files("truthy_claims")[span.file],
            columns=_CLAIM_COLUMNS,
            filters=span.key_filters("subject"),
        ).sort_by([("subject", "ascending"), ("property", "ascending"), ("ordinal", "ascending")])
        entities = pq.read_table(
            upstream.files("entities")[span.file], columns=["id", "type"], filters=span.key_filters("id")
        )
        sitelinks = pq.read_table(
            upstream.files("sitelinks")[span.file],
            columns=["id", "site", "title"],
            filters=span.key_filters("id"),
        )
        sitelinks = sitelinks.filter(pc.equal(sitelinks.column("site"), params.site))
        titles = dict(
            zip(sitelinks.column("id").to_pylist(), sitelinks.column("title").to_pylist(), strict=True)
        )
        items = {
            i
            for i, t in zip(
                entities.column("id").to_pylist(), entities.column("type").to_pylist(), strict=True
            )
            if t == "item"
        }
        labels, datatypes = _lookup_labels(ctx, upstream.files("entities"), claims, params.language, task)
        rows = _consolidate_shard(claims, items, titles, labels, datatypes, params, stats)
        table = pa.Table.from_pylist(rows, schema=schema.TRIPLES)
        sink.emit_by_key("triples", table, "qid", ctx.num_shards)
        progress(1, len(rows))
        return stats


def _lookup_labels(
    ctx: StageContext, entity_files: list[str], claims: pa.Table, language: str, task: MapTask
) -> tuple[dict[str, str], dict[str, str]]:
    """Labels of every property, item value and unit the claims mention, and property datatypes."""
    column = f"label_{column_suffix(language)}"
    if column not in pq.read_schema(entity_files[0]).names:
        raise UserError(
            f"the wikidata entities have no {column} column; add {language} to wikidata.languages"
        )
    wanted = pc.unique(
        pa.chunked_array(
            [
                claims.column("property").combine_chunks(),
                claims.column("item").combine_chunks().drop_null(),
                claims.column("unit").combine_chunks().drop_null(),
            ]
        ).combine_chunks()
    )
    ids = pa.table({"id": wanted})
    con = stage_connection(ctx, tasks=int(task.meta["tasks"]))  # one per map task
    try:
        con.register("wanted", ids)
        result = con.sql(
            f'SELECT e.id, e."{column}" AS label, e.datatype FROM read_parquet(?) e '
            "SEMI JOIN wanted w ON e.id = w.id",
            params=[entity_files],
        ).to_arrow_table()
    finally:
        con.close()
    labels: dict[str, str] = {}
    datatypes: dict[str, str] = {}
    for ident, label, datatype in zip(
        result.column("id").to_pylist(),
        result.column("label").to_pylist(),
        result.column("datatype").to_pylist(),
        strict=True,
    ):
        if label:
            labels[ident] = label
        if datatype:
            datatypes[ident] = datatype
    return labels, datatypes


def _consolidate_shard(
    claims: pa.Table,
    items: set[str],
    titles: Mapping[str, str],
    labels: Mapping[str, str],
    datatypes: Mapping[str, str],
    params: TriplesParams,
    stats: Stats,
) -> list[dict[str, Any]]:
    """Group the (already sorted) claims by (subject, property) and build the triples' rows."""
    options = params.render_options()
    on_partial = params.on_partial
    rows: list[dict[str, Any]] = []
    records = claims.to_pylist()
    no_sitelink_items: set[str] = set()
    for (subject, prop), grouped in itertools.groupby(records, key=lambda r: (r["subject"], r["property"])):
        group = list(grouped)
        if subject not in items:
            stats.add("claim_groups_of_non_items")
            continue
        stats.add("instances_considered")
        if subject not in titles:
            stats.add("dropped_no_sitelink")
            no_sitelink_items.add(subject)
            continue
        label = labels.get(prop)
        answers: tuple[str, ...] = ()
        reason: str | None = None
        if not label:
            reason = "property_without_label"
        else:
            answer_set = consolidate(group, labels, options, datatypes.get(prop), on_partial)
            for value_reason, n in answer_set.dropped.items():
                stats.add(f"values_dropped_{value_reason}", n)
            for note, n in answer_set.notes.items():
                stats.add(f"values_{note}", n)
            if answer_set.duplicates:
                stats.add("values_duplicate_merged", answer_set.duplicates)
            answers = answer_set.answers
            if not answers:
                reason = "no_renderable_value"
            elif answer_set.dropped:
                stats.add("instances_partial")
        stats.add(f"dropped_{reason}" if reason else "instances_usable")
        rows.append(
            {
                "qid": subject,
                "property": prop,
                "property_label": label or None,
                "answers": list(answers),
                "datatype": _datatype(group, datatypes.get(prop)),
                "site_title": titles[subject],
                "drop_reason": reason,
            }
        )
    stats.add("items_without_sitelink", len(no_sitelink_items))
    stats.add("items_with_instances", len({r["qid"] for r in rows if r["drop_reason"] is None}))
    return rows


def _datatype(snaks: list[dict[str, Any]], property_datatype: str | None) -> str | None:
    """The datatype of a property's values: the first statement's that says (or implies) one."""
    for snak in snaks:
        datatype = effective_datatype(snak, property_datatype)
        if datatype is not None:
            return datatype
    return None
