"""A read-only view of one built target: its stage directories, manifests and shard files.

This is the only module of `entbench.cards` that reads a build. It reads what `entbench build`
wrote (`<out>/targets/<TARGET>.json`, each stage's `_MANIFEST.json`) and aggregates shards with
DuckDB (one thread, columns pruned), so a card over a full-size build reads a few columns, never
whole tables into memory.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.cards.model import PublishedTable
from entbench.engine import registry
from entbench.engine.build_out import listing_file
from entbench.engine.duck import connect, parquet_view
from entbench.engine.manifest import load_manifest
from entbench.engine.stage import side_file_name
from entbench.errors import UserError

if TYPE_CHECKING:  # annotations only: DuckDB is imported where a connection opens (`engine.duck`)
    import duckdb

#: Written next to a Wikipedia scan's shards: the dump's `<siteinfo>` (dbname, language, namespaces).
SITEINFO = side_file_name("siteinfo")  # the Wikipedia scan's side file


class BuildView:
    """The stages of `target` in the build directory `out`, upstream first."""

    def __init__(self, out: str | Path, target: str) -> None:
        self.out = Path(out)
        self.target = target
        listing = listing_file(self.out, target)
        if not listing.is_file():
            raise UserError(
                f"{self.out}: target {target!r} was not built here (no {listing}); "
                f"run `entbench build {target} --out {self.out}` first"
            )
        try:
            doc = json.loads(listing.read_text(encoding="utf-8"))
            stage_paths: dict[str, str] = dict(doc["stages"])
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{listing}: not a target listing ({exc})") from exc
        manifests: dict[str, dict[str, Any]] = {}
        for name, rel in sorted(stage_paths.items()):
            directory = self.out / rel
            if not directory.is_dir():
                raise UserError(f"{listing} names {directory}, which does not exist; rebuild the target")
            manifests[name] = load_manifest(directory)
        # The stages a target has can follow its sources (one scan per dump of a series).
        registry.configure_sources({source for m in manifests.values() for source in m.get("sources", {})})
        spec = registry.targets().get(target)
        #: The target's final stages (what users consume); every stage when the target is unknown.
        self.final: tuple[str, ...] = spec.stages if spec else tuple(sorted(stage_paths))
        self.description = spec.description if spec else ""
        known = registry.stage_names()
        if spec and all(name in known for name in stage_paths):
            order = [s.stage_name for s in registry.stage_order(spec.stages)]
            order += sorted(set(stage_paths) - set(order))
        else:
            order = sorted(stage_paths)
        self.order: tuple[str, ...] = tuple(name for name in order if name in stage_paths)
        self.dirs: dict[str, Path] = {name: self.out / stage_paths[name] for name in self.order}
        self.manifests: dict[str, dict[str, Any]] = {name: manifests[name] for name in self.order}
        #: Set by `entbench publish`: where each final (stage, table) is in the published folder; the
        #: card then gives those paths, relative to itself, instead of the build's.
        self.published: dict[tuple[str, str], PublishedTable] = {}
        self._con: duckdb.DuckDBPyConnection | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None

    # --- manifests -------------------------------------------------------------------------------
    def stats(self, stage: str) -> Mapping[str, Any]:
        """The manifest stats of `stage` (empty if the stage is not part of this build)."""
        manifest = self.manifests.get(stage)
        return manifest["stats"] if manifest else {}

    def tables(self, stage: str) -> list[str]:
        """Output table names of `stage`, sorted."""
        return sorted(self.manifests[stage]["outputs"])

    def rows(self, stage: str, table: str) -> int:
        """Rows of a table, from its manifest."""
        return int(self.manifests[stage]["outputs"][table]["rows"])

    def files(self, stage: str, table: str) -> list[str]:
        """Absolute shard paths of a table, in shard order."""
        shards = self.manifests[stage]["outputs"][table]["shards"]
        return [str(self.dirs[stage] / s["file"]) for s in shards]

    def find(self, table: str, *, columns: Sequence[str] = ()) -> str | None:
        """The first stage (upstream first) with an output `table` having all `columns`, if any."""
        for stage in self.order:
            output = self.manifests[stage]["outputs"].get(table)
            if output is None:
                continue
            names = {f["name"] for f in output["schema"]}
            if all(c in names for c in columns):
                return stage
        return None

    def extra_file(self, stage: str, name: str) -> Path | None:
        """An extra file a stage's manifest lists (e.g. `_DATASET_CARD.md`), if present."""
        if name in self.manifests.get(stage, {}).get("files", {}):
            path = self.dirs[stage] / name
            return path if path.is_file() else None
        return None

    def siteinfo(self, stage: str) -> dict[str, Any] | None:
        """The `<siteinfo>` a Wikipedia scan recorded (`_siteinfo.json`: dbname, language, …), if
        `stage` is one."""
        path = self.extra_file(stage, SITEINFO)
        if path is None:
            return None
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def wiki_languages(self) -> list[str]:
        """Languages of the Wikipedia dumps the build read, from their scans' `_siteinfo.json`."""
        languages = []
        for stage in self.order:
            path = self.extra_file(stage, SITEINFO)
            if path is None:
                continue
            try:
                language = json.loads(path.read_text(encoding="utf-8")).get("language")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(language, str) and language and language not in languages:
                languages.append(language)
        return languages

    def sources(self) -> dict[str, dict[str, Any]]:
        """Every source dump of the target's stages: name -> path, size, sha256 (as recorded)."""
        found: dict[str, dict[str, Any]] = {}
        for stage in self.order:
            for name, info in self.manifests[stage]["sources"].items():
                found.setdefault(name, dict(info))
        return dict(sorted(found.items()))

    def labels(self, qids: Sequence[str], languages: Sequence[str] = ("en",)) -> dict[str, str]:
        """Labels of `qids` from the build's Wikidata scan (first language that has one), for cards
        that show entities: a QID alone says nothing to a reader."""
        wanted = sorted({q for q in qids if q})
        for language in languages:
            column = f"label_{language.replace('-', '_')}"
            stage = self.find("entities", columns=("id", column)) if column.isidentifier() else None
            if stage is None or not wanted:
                continue
            listed = ", ".join("'" + q.replace("'", "''") + "'" for q in wanted)
            rows = self.query(
                f"SELECT id, {column} FROM e WHERE id IN ({listed}) AND {column} IS NOT NULL",
                {"e": (stage, "entities")},
            )
            found = {str(q): str(label) for q, label in rows}
            return found | self.labels([q for q in wanted if q not in found], languages[1:])
        return {}

    # --- aggregation -----------------------------------------------------------------------------
    def query(self, sql: str, views: Mapping[str, tuple[str, str]]) -> list[tuple[Any, ...]]:
        """Run `sql` with each name in `views` bound to a (stage, table) as a DuckDB view."""
        con = self._connection()
        for name, (stage, table) in views.items():
            parquet_view(con, name, self.files(stage, table))
        return con.execute(sql).fetchall()

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con, self._scratch = _card_connection()
        return self._con

    def close(self) -> None:
        """Release the DuckDB connection."""
        if self._con is not None:
            self._con.close()
            self._con = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None


def _card_connection() -> tuple[duckdb.DuckDBPyConnection, tempfile.TemporaryDirectory[str]]:
    """A DuckDB connection with one worker's share: cards run right after a build, often next to
    other work on the machine; spills go to a temporary directory to remove with the connection."""
    scratch = tempfile.TemporaryDirectory(prefix="entbench-card-")
    return connect(scratch=Path(scratch.name), workers=1, tasks=1), scratch


class BuildQuery:
    """One DuckDB connection over tables of several targets of one build (`BuildView`s), for what
    compares benchmarks with each other (`cards.cross_leakage`)."""

    def __init__(self) -> None:
        self._con, self._scratch = _card_connection()

    def bind(self, name: str, view: BuildView, stage: str, table: str) -> None:
        """Make `name` a view over a table of `view`'s target."""
        parquet_view(self._con, name, view.files(stage, table))

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Run `sql` (temporary tables it creates stay until `close`), fetching every row."""
        return self._con.execute(sql).fetchall()

    def close(self) -> None:
        """Release the connection and its scratch directory."""
        self._con.close()
        self._scratch.cleanup()
