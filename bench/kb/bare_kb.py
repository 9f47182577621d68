"""The kb target's work as bare DuckDB queries: the baseline of the knowledge-base benchmark.

    python bench/kb/bare_kb.py --old STAGE_DIR --new STAGE_DIR --out DIR [--threads N]

Reads the normalized Parquet shards of two `entbench build` scan stages (`wikidata_old`,
`wikidata_new`) and computes what the five kb stages compute (spec §2.1–2.4, Hansel defaults):
filter decisions with their counts, E_known/E_new with labels and id changes, the downward P279
closure from the four coarse roots, coarse types with conflict counts, and TopSnaks with
per-entity lists and coverage. Like the stages, every step reads its inputs from Parquet and
writes its outputs to Parquet (zstd), one DuckDB connection with the same thread count. What it
leaves out is exactly entbench's machinery: fingerprints, the map spill, routing rows to shards,
sorting and checking each shard, manifests.

Prints one JSON object: seconds per step and rows per output table. Only DuckDB is imported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb

FILTER_CLASSES = (
    "Q4167836", "Q24046192", "Q20010800", "Q11266439", "Q11753321", "Q19842659", "Q21528878",
    "Q17362920", "Q14204246", "Q21025364", "Q17442446", "Q26267864", "Q4663903", "Q15184295",
    "Q4167410", "Q13406463",
)  # fmt: skip
ROOTS = {"PER": "Q215627", "LOC": "Q618123", "ORG": "Q43229", "EVENT": "Q1656682"}
SITE = "zhwiki"
K = 10_000
SNAPSHOTS = ("old", "new")


def qlist(values: tuple[str, ...] | list[str]) -> str:
    """A DuckDB list literal of strings."""
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def shards(stage_dir: Path, table: str) -> str:
    """The shard files of a scan table as a read_parquet() list."""
    return qlist(sorted(str(p) for p in (stage_dir / table).glob("part-*.parquet")))


def copy(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> int:
    """Write a query's rows to Parquet (zstd); returns the row count."""
    con.execute(f"COPY ({query}) TO '{path}' (FORMAT parquet, COMPRESSION zstd)")
    return int(con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0])


def views(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], tables: tuple[str, ...]) -> None:
    """Views `<snapshot>_<table>` over the scans' shards."""
    names = {"entities": "entities", "claims": "truthy_claims", "sitelinks": "sitelinks"}
    names["redirects"] = "redirects"
    for snap in SNAPSHOTS:
        for t in tables:
            files = shards(dirs[snap], names[t])
            con.execute(f"CREATE OR REPLACE VIEW {snap}_{t} AS SELECT * FROM read_parquet({files})")


def closure(edges: str, roots: tuple[str, ...] | list[str]) -> str:
    """Downward P279 closure (root, cls), exact on cycles (UNION)."""
    return f"""
        WITH RECURSIVE d(root, cls) AS (
            SELECT r, r FROM unnest({qlist(list(roots))}) AS t(r)
            UNION
            SELECT d.root, e.child FROM d JOIN {edges} AS e ON e.parent = d.cls
        ) SELECT root, cls FROM d"""


def step_filter(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], out: Path) -> dict[str, int]:
    """Filter decisions per dump, their counts, kept and removed rows."""
    views(con, dirs, ("entities", "claims", "sitelinks"))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE site_ok AS
        SELECT DISTINCT id FROM new_sitelinks WHERE site = '{SITE}'""")
    counts: dict[str, int] = {}
    for s in SNAPSHOTS:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {s}_tc AS SELECT subject, property, item FROM {s}_claims
            WHERE property IN ('P31', 'P279') AND item IS NOT NULL""")
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {s}_edges AS
            SELECT DISTINCT subject AS child, item AS parent FROM {s}_tc
            WHERE property = 'P279' AND starts_with(subject, 'Q') AND starts_with(item, 'Q')""")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {s}_fc AS {closure(f'{s}_edges', FILTER_CLASSES)}")
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {s}_dec AS
            WITH h AS (
                SELECT c.subject AS qid, bool_or(c.property = 'P31') AS p31, list(DISTINCT f.root) AS classes
                FROM {s}_tc AS c JOIN {s}_fc AS f ON f.cls = c.item GROUP BY c.subject
            )
            SELECT e.id AS qid,
                   CASE WHEN e.type <> 'item' THEN 'not_item'
                        WHEN h.qid IS NOT NULL AND h.p31 THEN 'instance_of_internal'
                        WHEN h.qid IS NOT NULL THEN 'subclass_of_internal'
                        WHEN so.id IS NULL THEN 'no_site' END AS reason,
                   CASE WHEN e.type = 'item' THEN h.classes END AS classes
            FROM {s}_entities AS e LEFT JOIN h ON h.qid = e.id LEFT JOIN site_ok AS so ON so.id = e.id""")
        for reason, n in con.execute(f"SELECT reason, count(*) FROM {s}_dec GROUP BY reason").fetchall():
            counts[f"{s}_{reason}"] = n
        per_class = con.execute(f"""
            SELECT c, count(*) FROM (SELECT unnest(classes) AS c FROM {s}_dec WHERE reason IS NOT NULL)
            GROUP BY c""").fetchall()
        counts.update({f"{s}_class_{cls}": n for cls, n in per_class})
    kept = " UNION ALL ".join(
        f"SELECT '{s}' AS snapshot, qid FROM {s}_dec WHERE reason IS NULL" for s in SNAPSHOTS
    )
    removed = " UNION ALL ".join(
        f"""SELECT '{s}' AS snapshot, qid, reason, classes FROM {s}_dec
            WHERE reason IS NOT NULL AND reason <> 'no_site'"""
        for s in SNAPSHOTS
    )
    return {
        "kept": copy(con, kept, out / "kept.parquet"),
        "removed": copy(con, removed, out / "removed.parquet"),
    }


def step_diff(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], out: Path) -> dict[str, int]:
    """E_known, E_new (not in the old dump), labels from the new dump, id changes."""
    views(con, dirs, ("entities", "redirects"))
    con.execute(f"CREATE OR REPLACE VIEW kept AS SELECT * FROM read_parquet('{out / 'kept.parquet'}')")
    con.execute("CREATE OR REPLACE TEMP TABLE known AS SELECT qid FROM kept WHERE snapshot = 'old'")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE new_set AS SELECT qid FROM kept WHERE snapshot = 'new'
        AND qid NOT IN (SELECT id FROM old_entities UNION SELECT from_id FROM old_redirects)""")
    text = ", ".join(
        f"CASE WHEN n.id IS NOT NULL THEN n.{c} ELSE o.{c} END AS {c}"
        for c in ("label_en", "label_zh", "description_en", "description_zh")
    )
    kb = f"""
        SELECT k.qid, k.in_known, k.in_new, {text}
        FROM (SELECT qid, true AS in_known, false AS in_new FROM known
              UNION ALL SELECT qid, false, true FROM new_set) AS k
        LEFT JOIN new_entities AS n ON n.id = k.qid LEFT JOIN old_entities AS o ON o.id = k.qid"""
    changes = """
        WITH r AS (SELECT from_id, min(to_id) AS to_id FROM new_redirects GROUP BY from_id),
        c AS (
            SELECT o.id AS qid,
                   CASE WHEN r.from_id IS NOT NULL THEN 'redirected' ELSE 'deleted' END AS change,
                   r.to_id AS to_qid
            FROM old_entities AS o LEFT JOIN r ON r.from_id = o.id
            WHERE o.id NOT IN (SELECT id FROM new_entities)
            UNION ALL
            SELECT from_id, 'redirect_stub', to_id FROM r WHERE from_id NOT IN (SELECT id FROM old_entities)
        )
        SELECT c.*, k.qid IS NOT NULL AS in_known FROM c LEFT JOIN known AS k USING (qid)"""
    return {
        "kb_entities": copy(con, kb, out / "kb_entities.parquet"),
        "id_changes": copy(con, changes, out / "id_changes.parquet"),
    }


def step_type_closure(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], out: Path) -> dict[str, int]:
    """P279 closed downward from the four roots, per dump."""
    views(con, dirs, ("claims",))
    parts = []
    for s in SNAPSHOTS:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {s}_p279 AS
            SELECT DISTINCT subject AS child, item AS parent FROM {s}_claims
            WHERE property = 'P279' AND item IS NOT NULL
              AND starts_with(subject, 'Q') AND starts_with(item, 'Q')""")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {s}_tcl AS {closure(f'{s}_p279', list(ROOTS.values()))}")
        con.execute(f"SELECT root, count(*) FROM {s}_tcl GROUP BY root").fetchall()
        parts.append(f"SELECT '{s}' AS snapshot, root, cls AS class FROM {s}_tcl")
    return {"type_closure": copy(con, " UNION ALL ".join(parts), out / "type_closure.parquet")}


def step_coarse(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], out: Path) -> dict[str, int]:
    """Roots reached through P31 in each entity's own dump; label by precedence; conflict counts."""
    views(con, dirs, ("claims",))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE kb AS
        SELECT qid, CASE WHEN in_known THEN 'old' ELSE 'new' END AS snapshot
        FROM read_parquet('{out / "kb_entities.parquet"}')""")
    con.execute(f"CREATE OR REPLACE VIEW tcl AS SELECT * FROM read_parquet('{out / 'type_closure.parquet'}')")
    reach = " UNION ALL ".join(
        f"""SELECT DISTINCT p.subject AS qid, t.root
            FROM (SELECT DISTINCT subject, item FROM {s}_claims
                  WHERE property = 'P31' AND item IS NOT NULL
                    AND starts_with(subject, 'Q') AND starts_with(item, 'Q')) AS p
            SEMI JOIN kb ON kb.qid = p.subject AND kb.snapshot = '{s}'
            JOIN tcl AS t ON t.snapshot = '{s}' AND t.class = p.item"""
        for s in SNAPSHOTS
    )
    case = " ".join(f"WHEN list_contains(roots, '{q}') THEN '{label}'" for label, q in ROOTS.items())
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE coarse AS
        SELECT qid, CASE {case} ELSE 'OTHER' END AS coarse, roots FROM (
            SELECT kb.qid, coalesce(r.roots, []::VARCHAR[]) AS roots FROM kb LEFT JOIN (
                SELECT qid, list(root ORDER BY TRY_CAST(substr(root, 2) AS BIGINT)) AS roots
                FROM ({reach}) GROUP BY qid
            ) AS r USING (qid))""")
    con.execute("SELECT coarse, count(*) FROM coarse GROUP BY coarse").fetchall()
    con.execute("SELECT roots, count(*) FROM coarse WHERE len(roots) > 1 GROUP BY roots").fetchall()
    return {"coarse_types": copy(con, "SELECT * FROM coarse", out / "coarse_types.parquet")}


def step_top_snaks(con: duckdb.DuckDBPyConnection, dirs: dict[str, Path], out: Path) -> dict[str, int]:
    """Snak counts over E_known, the top K, per-entity lists, coverage."""
    views(con, dirs, ("claims",))
    kb = f"read_parquet('{out / 'kb_entities.parquet'}')"
    con.execute(f"CREATE OR REPLACE TEMP TABLE known AS SELECT qid FROM {kb} WHERE in_known")
    con.execute(f"CREATE OR REPLACE TEMP TABLE new_set AS SELECT qid FROM {kb} WHERE in_new")
    for name, snap, ents in (("ks", "old", "known"), ("ns", "new", "new_set")):
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {name} AS
            SELECT DISTINCT c.subject AS qid, c.property, c.item AS value
            FROM {snap}_claims AS c SEMI JOIN {ents} AS e ON e.qid = c.subject
            WHERE c.item IS NOT NULL AND starts_with(c.item, 'Q')""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE top AS SELECT * FROM (
            SELECT CAST(row_number() OVER (ORDER BY n DESC, TRY_CAST(substr(property, 2) AS BIGINT),
                        TRY_CAST(substr(value, 2) AS BIGINT), property, value) - 1 AS INTEGER) AS rank,
                   property, value, n AS entity_count
            FROM (SELECT property, value, count(*) AS n FROM ks GROUP BY ALL)
        ) WHERE rank < {K}""")
    lists = " UNION ALL ".join(
        f"""SELECT e.qid, coalesce(s.snaks, []::INTEGER[]) AS snaks FROM {ents} AS e LEFT JOIN (
                SELECT x.qid, list(t.rank ORDER BY t.rank) AS snaks
                FROM {name} AS x JOIN top AS t ON t.property = x.property AND t.value = x.value
                GROUP BY x.qid
            ) AS s ON s.qid = e.qid"""
        for name, ents in (("ks", "known"), ("ns", "new_set"))
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE entity_snaks AS {lists}")
    for ents in ("known", "new_set"):
        con.execute(f"SELECT count(*) FROM entity_snaks SEMI JOIN {ents} USING (qid) WHERE len(snaks) > 0")
        con.fetchall()
    return {
        "top_snaks": copy(con, "SELECT * FROM top", out / "top_snaks.parquet"),
        "entity_snaks": copy(con, "SELECT * FROM entity_snaks", out / "entity_snaks.parquet"),
    }


STEPS = (
    ("internal_filter", step_filter),
    ("entity_diff", step_diff),
    ("type_closure", step_type_closure),
    ("coarse_types", step_coarse),
    ("top_snaks", step_top_snaks),
)


def main(argv: list[str] | None = None) -> int:
    """Run every step; print seconds per step and rows per table as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the wikidata_old stage directory")
    parser.add_argument("--new", type=Path, required=True, help="the wikidata_new stage directory")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "duckdb").mkdir(exist_ok=True)
    dirs = {"old": args.old, "new": args.new}
    seconds: dict[str, float] = {}
    rows: dict[str, int] = {}
    for name, step in STEPS:
        t0 = time.perf_counter()
        # One connection per step, as each stage opens its own.
        con = duckdb.connect(
            config={
                "threads": args.threads,
                "temp_directory": str(args.out / "duckdb"),
                "preserve_insertion_order": False,
            }
        )
        rows |= step(con, dirs, args.out)
        con.close()
        seconds[name] = round(time.perf_counter() - t0, 3)
    print(json.dumps({"seconds": seconds, "total_seconds": round(sum(seconds.values()), 3), "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
