"""Stage `entity_diff`: E_known and E_new from two dumps (Hansel §3.1; spec §2.2).

"Known Entities (E_known) refer to Wikidata entities in 2018-08-13 dump. [...] New Entities
(E_new) refer to Wikidata entities in 2021-03-15 dump that do not exist in E_known." (Hansel §3.1)

Spec §2.2: E_known = items of the old dump passing the filter (spec §2.1). E_new = items of the
new dump passing the filter whose id does not occur in the old dump at all, neither as an entity
nor as a redirect stub (`new_means = not-in-old-dump`, default); the paper's literal wording,
`not-in-known` (preset `literal`), instead admits new-dump entities that were in the old dump
but filtered out there. Ids whose entity was redirected or deleted between the dumps, and the new
dump's redirect stubs, are listed in `id_changes` and counted, never mixed into either set.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

from msgspec import Meta

from entbench.builders.kb.stages.query import (
    SNAPSHOT_STAGES,
    IdRange,
    QueryStage,
    count,
    count_by,
    id_ranges,
    in_range_sql,
    kb_params_check,
    register_snapshots,
    require_languages,
)
from entbench.engine.duck import parquet_view
from entbench.engine.stage import Output, Params, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import kb as schema
from entbench.schemas.base import column_suffix

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

NOT_IN_OLD_DUMP = "not-in-old-dump"
NOT_IN_KNOWN = "not-in-known"


@dataclass(frozen=True)
class EntityDiffParams(Params):
    """Parameters of `entity_diff`. `labels_from`: which dump's labels/descriptions `kb_entities`
    shows for an entity present in both (`new` or `old`; the other dump fills in otherwise)."""

    PRESETS: ClassVar[dict[str, dict[str, object]]] = {
        "hansel": {"new_means": NOT_IN_OLD_DUMP},
        "literal": {"new_means": NOT_IN_KNOWN},
    }

    preset: Annotated[
        str,
        Meta(
            description=(
                "`hansel` (E_new = not in the old dump) or `literal` (the paper's wording: not in "
                "E_known, so an item filtered out of the old dump can be new)"
            )
        ),
    ] = "hansel"
    new_means: Annotated[
        str,
        Meta(description="the rule above, set directly: `not-in-old-dump` or `not-in-known`"),
    ] = NOT_IN_OLD_DUMP
    languages: Annotated[
        tuple[str, ...],
        Meta(description="languages of the labels and descriptions shown"),
    ] = ("en", "zh")
    labels_from: Annotated[
        str,
        Meta(description="which dump's labels an entity in both dumps shows (`new` or `old`)"),
    ] = schema.NEW
    num_shards: Annotated[
        int,
        Meta(description="output shards; 0 = about one per 64 MB of the two scans' `entities`"),
    ] = 0

    def __post_init__(self) -> None:
        kb_params_check(
            self,
            {
                "preset": tuple(self.PRESETS),
                "new_means": (NOT_IN_OLD_DUMP, NOT_IN_KNOWN),
                "labels_from": (schema.NEW, schema.OLD),
            },
        )
        if len(set(self.languages)) != len(self.languages):
            raise ValueError(f"languages repeat: {list(self.languages)}")
        super().__post_init__()


class EntityDiff(QueryStage[EntityDiffParams]):
    """E_known ∪ E_new with labels (`kb_entities`) and the ids that changed (`id_changes`)."""

    name = "entity_diff"
    version = 2  # 2: `new_dump_kept_already_<reason>` (was `…_dropped_…`: the card read it as rows lost)
    inputs = ("internal_filter", "wikidata_old", "wikidata_new")
    description = "E_known / E_new from the old and new dumps"

    def outputs(self, params: EntityDiffParams) -> list[Output]:
        """`kb_entities` (labels in the configured languages) and `id_changes`."""
        return [
            Output("kb_entities", schema.kb_entities_schema(params.languages), ("qid",)),
            Output("id_changes", schema.ID_CHANGES, ("qid",), may_be_empty=True),
        ]

    def check_upstream(self, ctx: StageContext[EntityDiffParams]) -> None:
        """Both scans must have kept the requested label languages."""
        require_languages(ctx, ctx.params.languages)

    def run_queries(
        self, con: duckdb.DuckDBPyConnection, ctx: StageContext[EntityDiffParams]
    ) -> tuple[Iterator[tuple[str, str]], Stats]:
        """The two sets, their labels and the id changes, range of ids by range."""
        register_snapshots(con, ctx, ("entities", "redirects"))
        parquet_view(con, "kept", ctx.inputs["internal_filter"].files("kept"))
        stats = Stats()
        files = [f for stage in SNAPSHOT_STAGES.values() for f in ctx.inputs[stage].files("entities")]
        return self._diff(con, ctx.params, files, stats), stats

    def _diff(
        self,
        con: duckdb.DuckDBPyConnection,
        params: EntityDiffParams,
        files: Sequence[str],
        stats: Stats,
    ) -> Iterator[tuple[str, str]]:
        """Every statement below reads the ids of one range (`query.id_ranges`) of every relation:
        an id's membership in either set, its change and its texts depend on that id's rows alone.
        A range's rows are streamed out before the next range's tables are built."""
        ids_sql = "SELECT id FROM old_entities UNION ALL SELECT id FROM new_entities"
        rows = count(con, "SELECT count(*) FROM old_entities") + count(
            con, "SELECT count(*) FROM new_entities"
        )
        # Both dumps' ids are a range's rows here: half of them per dump keeps a range's size that
        # of `internal_filter`'s (one dump at a time), times 4 (`query.PARTITION_ROWS` says why).
        for ids in id_ranges(con, ids_sql, rows // 2, files, scale=4):
            yield from self._diff_range(con, params, stats, ids)

    def _diff_range(
        self, con: duckdb.DuckDBPyConnection, params: EntityDiffParams, stats: Stats, ids: IdRange
    ) -> Iterator[tuple[str, str]]:
        """`_diff`'s statements over the ids of `ids`."""
        for name, (relation, column) in _RANGED.items():
            where = in_range_sql(column, ids)
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM {relation} WHERE {where}")
        con.execute("CREATE TEMP TABLE known AS SELECT qid FROM r_kept WHERE snapshot = 'old'")
        con.execute("CREATE TEMP TABLE kept_new AS SELECT qid FROM r_kept WHERE snapshot = 'new'")
        if params.new_means == NOT_IN_OLD_DUMP:
            excluded = "SELECT id AS qid FROM r_old_entities UNION SELECT from_id AS qid FROM r_old_redirects"
        else:
            excluded = "SELECT qid FROM known"
        con.execute(f"CREATE TEMP TABLE excluded AS {excluded}")
        con.execute("CREATE TEMP TABLE new_set AS SELECT qid FROM kept_new ANTI JOIN excluded USING (qid)")
        stats.add("known_entities", count(con, "SELECT count(*) FROM known"))
        stats.add("new_entities", count(con, "SELECT count(*) FROM new_set"))
        stats.add("new_dump_kept", count(con, "SELECT count(*) FROM kept_new"))
        reason = "in_old_dump" if params.new_means == NOT_IN_OLD_DUMP else "in_known"
        stats.add(
            f"new_dump_kept_already_{reason}",  # not a drop: these are E_known (the card lists drops)
            count(con, "SELECT count(*) FROM kept_new SEMI JOIN excluded USING (qid)"),
        )
        # DuckDB holds temporary tables in memory: what only the counts above read goes before the
        # labelled entities are joined.
        con.execute("DROP TABLE kept_new")
        con.execute("DROP TABLE excluded")
        # `id_changes` first: its joins over both dumps' ids need not sit beside the labelled entities.
        for statement in _ID_CHANGES_SQL:
            con.execute(statement)
        first, second = ("new", "old") if params.labels_from == schema.NEW else ("old", "new")
        text_columns = [
            f"{kind}_{column_suffix(lang)}" for kind in ("label", "description") for lang in params.languages
        ]
        texts = "".join(f", e.{c}" for c in text_columns)
        con.execute(
            "CREATE TEMP TABLE kb_ids AS SELECT qid, true AS in_known, false AS in_new FROM known "
            "UNION ALL SELECT qid, false AS in_known, true AS in_new FROM new_set"
        )
        # `kb_ids` holds both sets now and `id_changes` has read `known`: neither sits beside the
        # labelled entities' join.
        con.execute("DROP TABLE known")
        con.execute("DROP TABLE new_set")
        # Each entity's texts come from the `labels_from` dump if it has the entity, else from the
        # other one. Two joins, each against the KB's ids alone: one query joining both dumps
        # built a hash table over the first dump's texts of every KB entity. Views, not a table:
        # their rows are read once, streamed into the shards (`QueryStage.map`), one view after the
        # other (a UNION ALL of both would build every join's hash table before its first row).
        con.execute(
            "CREATE TEMP VIEW kb_entities_first AS "
            f"SELECT k.qid, k.in_known, k.in_new{texts} FROM kb_ids AS k "
            f"JOIN r_{first}_entities AS e ON e.id = k.qid"
        )
        con.execute(
            "CREATE TEMP VIEW kb_entities_second AS "
            f"SELECT k.qid, k.in_known, k.in_new{texts} FROM "
            f"(SELECT * FROM kb_ids AS k ANTI JOIN r_{first}_entities AS f ON f.id = k.qid) AS k "
            f"LEFT JOIN r_{second}_entities AS e ON e.id = k.qid"
        )
        for change, n in count_by(con, "SELECT change, count(*) FROM id_changes GROUP BY change").items():
            stats.add(f"ids_{change}", n)
        for change, n in count_by(
            con, "SELECT change, count(*) FROM id_changes WHERE in_known GROUP BY change"
        ).items():
            stats.add(f"known_ids_{change}", n)
        yield "id_changes", "id_changes"
        yield "kb_entities", "kb_entities_first"
        yield "kb_entities", "kb_entities_second"
        for view in ("kb_entities_first", "kb_entities_second", *_RANGED):
            con.execute(f"DROP VIEW {view}")
        con.execute("DROP TABLE kb_ids")
        con.execute("DROP TABLE id_changes")


#: The views each range's statements read (`EntityDiff._diff_range`): name -> (the relation, its
#: id column). The scans write each shard sorted by id, so a range's filter skips the row groups
#: outside it.
_RANGED: dict[str, tuple[str, str]] = {
    "r_kept": ("kept", "qid"),
    "r_old_entities": ("old_entities", "id"),
    "r_new_entities": ("new_entities", "id"),
    "r_old_redirects": ("old_redirects", "from_id"),
    "r_new_redirects": ("new_redirects", "from_id"),
}


#: Entities of the old dump that became redirects or vanished in the new one, and the new dump's
#: redirect stubs for ids that were no entity in the old dump. Several statements, each joining
#: against one dump's ids: as one query, DuckDB held the hash tables of the new dump's ids, the old
#: dump's and the known ids at once (~38 MiB at its peak on the 1 GB world, ~11 at 256 MB).
_ID_CHANGES_SQL = (
    "CREATE TEMP TABLE new_redirect AS "
    "SELECT from_id, min(to_id) AS to_id FROM r_new_redirects GROUP BY from_id",
    """CREATE TEMP TABLE changed_ids AS
SELECT o.id AS qid,
       CASE WHEN r.from_id IS NOT NULL THEN 'redirected' ELSE 'deleted' END AS change,
       r.to_id AS to_qid
FROM r_old_entities AS o
LEFT JOIN new_redirect AS r ON r.from_id = o.id
WHERE o.id NOT IN (SELECT id FROM r_new_entities)""",
    """INSERT INTO changed_ids
SELECT r.from_id AS qid, 'redirect_stub' AS change, r.to_id AS to_qid
FROM new_redirect AS r
WHERE r.from_id NOT IN (SELECT id FROM r_old_entities)""",
    """CREATE TEMP TABLE id_changes AS
SELECT c.qid, c.change, c.to_qid, k.qid IS NOT NULL AS in_known
FROM changed_ids AS c LEFT JOIN known AS k ON k.qid = c.qid""",
    "DROP TABLE changed_ids",
    "DROP TABLE new_redirect",
)
