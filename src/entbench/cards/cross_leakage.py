"""Leakage across benchmarks: what one benchmark's evaluation data shares with another's training data.

Each benchmark audits its own splits (Mem-*, `cards.leakage`), but a user who trains on one
benchmark and tests on another (WikiEnt sentences from WikiReading test articles; Hansel training
mentions of entities in another set's test) needs the overlap between the two. For every ordered
pair of benchmarks built in one directory, this compares the evaluation data of the first (its
evaluation splits, or all of it where it has no split) with the training data of the second (its
train split, or all of it) on what both tables carry:

* **documents**: Wikipedia page ids, compared only within one wiki (the `dbname` of the dumps'
  `<siteinfo>`: page ids of enwiki and zhwiki are unrelated numbers; ids of two dumps of one wiki
  are the same pages);
* **entities**: Wikidata QIDs;
* **(mention, entity) pairs**: the mention text as the table holds it (WikiEnt lowercases it,
  Hansel writes Simplified Chinese) with its entity.

Each comparison counts the distinct keys on both sides, the keys shared, and the evaluation rows
carrying a shared key, with examples. What each benchmark's tables hold is declared once, where
its pipeline registers the target (`register_target(…, audited=…)`, `engine.registry.AuditedTable`);
the command is `entbench audit leakage` (through `entbench.api`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.cards.build_view import SITEINFO, BuildQuery, BuildView
from entbench.engine import registry
from entbench.engine.registry import AuditedTable
from entbench.engine.summary import built_targets
from entbench.errors import UserError

FORMAT = "entbench.leakage/1"
#: The roles of a benchmark's tables (`AuditedTable.role`).
TRAIN: Final = "train"
EVALUATION: Final = "evaluation"
ALL: Final = "all"
KINDS = ("documents", "entities", "pairs")
#: Shared keys listed per comparison.
EXAMPLES = 5
#: Languages an example entity's label is looked up in, first found.
LABEL_LANGUAGES = ("en", "zh")


@dataclass
class Side:
    """The distinct keys of one kind on one side of a comparison (a temporary table of the query),
    and for documents the wiki whose pages they are."""

    table: str
    wiki: str = ""


@dataclass
class Measure:
    """One kind compared for one (evaluated part, other benchmark) pair."""

    comparable: bool
    reason: str = ""
    evaluated: int = 0
    against: int = 0
    shared: int = 0
    evaluated_rows: int = 0
    wiki: str = ""
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The measure as the JSON report writes it."""
        if not self.comparable:
            return {"comparable": False, "reason": self.reason}
        doc: dict[str, Any] = {
            "comparable": True,
            "evaluated": self.evaluated,
            "against": self.against,
            "shared": self.shared,
            "evaluated_rows": self.evaluated_rows,
            "examples": self.examples,
        }
        if self.wiki:
            doc["wiki"] = self.wiki
        return doc


@dataclass
class Overlap:
    """An evaluation table of one benchmark against the training data of another."""

    evaluated: str
    table: str
    rows: int
    against: str
    against_tables: list[str]
    against_role: str
    measures: dict[str, Measure | None]

    def to_json(self) -> dict[str, Any]:
        """The comparison as the JSON report writes it (a kind one side lacks is null)."""
        return {
            "evaluated": self.evaluated,
            "table": self.table,
            "rows": self.rows,
            "against": self.against,
            "against_tables": self.against_tables,
            "against_role": self.against_role,
            **{kind: (m.to_json() if m is not None else None) for kind, m in self.measures.items()},
        }


@dataclass
class Benchmark:
    """A benchmark found in the build, with its parts and their sizes."""

    target: str
    parts: list[AuditedTable]
    rows: dict[str, int]
    wiki: str

    def evaluation(self) -> list[AuditedTable]:
        """Its evaluation splits, or every part when it has no split."""
        split = [p for p in self.parts if p.role == EVALUATION]
        return split or [p for p in self.parts if p.role == ALL]

    def training(self) -> list[AuditedTable]:
        """Its train split, or every part when it has no split."""
        split = [p for p in self.parts if p.role == TRAIN]
        return split or [p for p in self.parts if p.role == ALL]

    def training_role(self) -> str:
        """`train` when it has a train split, else `all`."""
        return TRAIN if any(p.role == TRAIN for p in self.parts) else ALL


@dataclass
class LeakageReport:
    """What `entbench audit leakage` reports."""

    build: str
    benchmarks: list[Benchmark]
    not_audited: list[tuple[str, str]]
    overlaps: list[Overlap]

    def to_json(self) -> dict[str, Any]:
        """The `--json` report (`entbench.leakage/1`)."""
        return {
            "format": FORMAT,
            "build": self.build,
            "benchmarks": [
                {
                    "target": b.target,
                    "wiki": b.wiki or None,
                    "tables": [
                        {"table": p.name, "role": p.role, "rows": b.rows[p.name], "kinds": list(_kinds(p))}
                        for p in b.parts
                    ],
                }
                for b in self.benchmarks
            ],
            "not_audited": [{"target": t, "reason": r} for t, r in self.not_audited],
            "overlaps": [o.to_json() for o in self.overlaps],
        }

    def to_json_text(self) -> str:
        """The JSON report as text (UTF-8 characters as they are)."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"


def _kinds(part: AuditedTable) -> Iterator[str]:
    if part.documents:
        yield "documents"
    if part.entities:
        yield "entities"
    if part.pair:
        yield "pairs"


def audit_leakage(out: str | Path) -> LeakageReport:
    """Compare every benchmark built in `out` with every other one (module docstring)."""
    root = Path(out)
    targets = built_targets(root) if (root / "targets").is_dir() else []
    if not targets:
        raise UserError(f"{out}: no target was built there (no targets/*.json); run entbench build first")
    views: dict[str, BuildView] = {}
    not_audited: list[tuple[str, str]] = []
    query = BuildQuery()
    try:
        for target in targets:
            spec = registry.targets().get(target)
            if spec is None or spec.audited is None:
                not_audited.append((target, "not benchmarks: no evaluation or training data of their own"))
                continue
            views[target] = BuildView(root, target)
        benchmarks = [_benchmark(views[t]) for t in sorted(views)]
        for b in benchmarks:
            if not b.parts:
                not_audited.append((b.target, "no table with documents, entities or mentions in this build"))
        benchmarks = [b for b in benchmarks if b.parts]
        overlaps = _Comparer(query, views, benchmarks).overlaps()
    finally:
        query.close()
        for view in views.values():
            view.close()
    return LeakageReport(str(out), benchmarks, sorted(not_audited), overlaps)


def _benchmark(view: BuildView) -> Benchmark:
    """The benchmark `view` holds: its declared parts, each kind kept where its columns exist."""
    declared = registry.get_target(view.target).audited or _enteval_parts(view)
    parts = []
    for part in declared:
        if part.stage not in view.manifests or part.table not in view.manifests[part.stage]["outputs"]:
            continue
        columns = {f["name"] for f in view.manifests[part.stage]["outputs"][part.table]["schema"]}
        documents = part.documents if set(part.documents) <= columns and part.wiki_stage in view.dirs else ()
        entities = part.entities if set(part.entities) <= columns else ()
        pair = part.pair if part.pair and set(part.pair) <= columns else None
        kept = replace(part, documents=documents, entities=entities, pair=pair)
        if any(_kinds(kept)):
            parts.append(kept)
    rows = {p.name: view.rows(p.stage, p.table) for p in parts}
    wikis = {_wiki(view, p.wiki_stage) for p in parts if p.documents}
    return Benchmark(view.target, parts, rows, min(wikis) if wikis else "")


def _enteval_parts(view: BuildView) -> tuple[AuditedTable, ...]:
    """EntEval's tasks name entities matched to articles (`<task>.matches`): the documents each
    task's descriptions come from. The tasks have no common split, so each is all data."""
    return tuple(
        AuditedTable(stage, "matches", ALL, ("page_id",), "wikipedia")
        for stage in view.order
        if "matches" in view.manifests[stage]["outputs"]
    )


def _wiki(view: BuildView, stage: str) -> str:
    """The wiki a Wikipedia scan read: its `<siteinfo>` dbname (else its dump's sha256)."""
    path = view.extra_file(stage, SITEINFO)
    if path is not None:
        try:
            dbname = json.loads(path.read_text(encoding="utf-8")).get("dbname")
        except (OSError, ValueError, AttributeError):
            dbname = None
        if isinstance(dbname, str) and dbname:
            return dbname
    sources = view.manifests[stage].get("sources", {})
    digests = sorted(str(info.get("sha256", ""))[:12] for info in sources.values())
    return "dump " + "+".join(digests)


class _Comparer:
    """Materialises every part's distinct keys once, then compares them pair by pair."""

    def __init__(self, query: BuildQuery, views: dict[str, BuildView], benchmarks: list[Benchmark]) -> None:
        self.query = query
        self.views = views
        self.benchmarks = benchmarks
        self.sides: dict[tuple[str, str, str], Side] = {}  # (target, part name, kind)
        self.training: dict[tuple[str, str], Side] = {}  # (target, kind)
        self.bound: dict[tuple[str, str], str] = {}  # (target, part name) -> view name
        for b in benchmarks:
            for part in b.parts:
                self._materialise(b, part)
            for kind in KINDS:
                parts = [p for p in b.training() if (b.target, p.name, kind) in self.sides]
                if parts:
                    self.training[(b.target, kind)] = self._union(b.target, kind, parts)

    def _materialise(self, b: Benchmark, part: AuditedTable) -> None:
        name = f"t{len(self.bound)}"
        self.bound[(b.target, part.name)] = name
        self.query.bind(name, self.views[b.target], part.stage, part.table)
        selects = {
            "documents": [f'SELECT "{c}" AS k FROM {name}' for c in part.documents],
            "entities": [f'SELECT "{c}" AS k FROM {name}' for c in part.entities],
            "pairs": [f'SELECT "{part.pair[0]}" AS m, "{part.pair[1]}" AS e FROM {name}']
            if part.pair
            else [],
        }
        for kind, parts in selects.items():
            if not parts:
                continue
            table = f"{name}_{kind}"
            not_null = "m IS NOT NULL AND e IS NOT NULL" if kind == "pairs" else "k IS NOT NULL"
            union = " UNION ALL ".join(parts)
            self.query.query(
                f"CREATE TEMP TABLE {table} AS SELECT DISTINCT * FROM ({union}) WHERE {not_null}"
            )
            wiki = _wiki(self.views[b.target], part.wiki_stage) if kind == "documents" else ""
            self.sides[(b.target, part.name, kind)] = Side(table, wiki)

    def _union(self, target: str, kind: str, parts: list[AuditedTable]) -> Side:
        sides = [self.sides[(target, p.name, kind)] for p in parts]
        if len(sides) == 1:
            return sides[0]
        table = f"train{len(self.training)}_{kind}"
        self.query.query(
            f"CREATE TEMP TABLE {table} AS " + " UNION ".join(f"SELECT * FROM {s.table}" for s in sides)
        )
        return Side(table, sides[0].wiki)

    def overlaps(self) -> list[Overlap]:
        """Every evaluation part of every benchmark against every other benchmark's training data."""
        found = []
        for a in self.benchmarks:
            for part in a.evaluation():
                for b in self.benchmarks:
                    if b.target == a.target:
                        continue
                    measures = {kind: self._measure(a, part, b, kind) for kind in KINDS}
                    if not any(m is not None and m.comparable for m in measures.values()):
                        continue  # nothing in common to compare (zhwiki pages against enwiki pages)
                    found.append(
                        Overlap(
                            a.target,
                            part.name,
                            a.rows[part.name],
                            b.target,
                            [p.name for p in b.training()],
                            b.training_role(),
                            measures,
                        )
                    )
        return found

    def _measure(self, a: Benchmark, part: AuditedTable, b: Benchmark, kind: str) -> Measure | None:
        mine = self.sides.get((a.target, part.name, kind))
        theirs = self.training.get((b.target, kind))
        if mine is None or theirs is None:
            return None
        if kind == "documents" and mine.wiki != theirs.wiki:
            return Measure(False, f"pages of {mine.wiki} against pages of {theirs.wiki}")
        keys = "m, e" if kind == "pairs" else "k"
        shared = f"{mine.table}_x_{theirs.table}"
        self.query.query(
            f"CREATE TEMP TABLE {shared} AS "
            f"SELECT * FROM {mine.table} SEMI JOIN {theirs.table} USING ({keys})"
        )
        return Measure(
            True,
            evaluated=self._count(mine.table),
            against=self._count(theirs.table),
            shared=self._count(shared),
            evaluated_rows=self._rows_with(a, part, kind, shared),
            wiki=mine.wiki,
            examples=self._examples(a, part, b, kind, shared),
        )

    def _count(self, table: str) -> int:
        return int(self.query.query(f"SELECT count(*) FROM {table}")[0][0])

    def _rows_with(self, a: Benchmark, part: AuditedTable, kind: str, shared: str) -> int:
        """Rows of the evaluated table carrying a shared key."""
        name = self.bound[(a.target, part.name)]
        if kind == "pairs":
            assert part.pair is not None
            m, e = part.pair
            sql = (
                f'SELECT count(*) FROM {name} AS t SEMI JOIN {shared} AS s ON t."{m}" = s.m AND t."{e}" = s.e'
            )
        else:
            columns = part.documents if kind == "documents" else part.entities
            hit = " OR ".join(f'"{c}" IN (SELECT k FROM {shared})' for c in columns)
            sql = f"SELECT count(*) FROM {name} WHERE {hit}"
        return int(self.query.query(sql)[0][0])

    def _examples(
        self, a: Benchmark, part: AuditedTable, b: Benchmark, kind: str, shared: str
    ) -> list[dict[str, Any]]:
        """The first shared keys (page id, QID number or mention order), with titles or labels (an
        entity's from either benchmark's Wikidata dump)."""
        view = self.views[a.target]
        if kind == "documents":
            ids = [int(r[0]) for r in self.query.query(f"SELECT k FROM {shared} ORDER BY k LIMIT {EXAMPLES}")]
            titles = _titles(view, part.wiki_stage, ids)
            return [{"page_id": i, "title": titles.get(i)} for i in ids]
        if kind == "entities":
            order = "TRY_CAST(substr(k, 2) AS BIGINT), k"
            qids = [
                str(r[0])
                for r in self.query.query(f"SELECT k FROM {shared} ORDER BY {order} LIMIT {EXAMPLES}")
            ]
            labels = view.labels(qids, LABEL_LANGUAGES)
            labels |= self.views[b.target].labels([q for q in qids if q not in labels], LABEL_LANGUAGES)
            return [{"qid": q, "label": labels.get(q)} for q in qids]
        pairs = self.query.query(f"SELECT m, e FROM {shared} ORDER BY m, e LIMIT {EXAMPLES}")
        return [{"mention": str(m), "qid": str(e)} for m, e in pairs]


def _titles(view: BuildView, wiki_stage: str, ids: list[int]) -> dict[int, str]:
    """Page titles of `ids` from the Wikipedia scan `wiki_stage`."""
    if not ids or "pages" not in view.manifests.get(wiki_stage, {}).get("outputs", {}):
        return {}
    listed = ", ".join(str(i) for i in ids)
    rows = view.query(
        f"SELECT page_id, title FROM p WHERE page_id IN ({listed})", {"p": (wiki_stage, "pages")}
    )
    return {int(i): str(t) for i, t in rows}
