"""What the EntEval task stages share: the one-shard stage shape, and descriptions by name.

A task stage reads its source files (parameters, `builders.enteval.stages.sources`) and writes the lines of
its loader-format files as the table `lines` (`file`, `line`, `text`); the `enteval_tasks` stage
writes them out as files. Stages that attach Wikipedia descriptions to entity names also write
`matches`: every name, how it matched an article and with what score (`enteval.titles`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

import pyarrow as pa
from msgspec import Meta
from typing_extensions import TypeVar

from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.stages.sources import SourceLines, TaskParams
from entbench.builders.enteval.titles import SCORERS, Match, TitleMatcher, TitleTarget, title_key
from entbench.builders.enteval.tsv import clean
from entbench.engine.duck import stage_connection
from entbench.engine.stage import Output, SourceInfo, Stage, StageContext
from entbench.engine.stats import Stats
from entbench.schemas import enteval as schema

#: A task stage's parameters type.
TP = TypeVar("TP", bound=TaskParams, default=Any)

#: title_qid statuses whose `page_id` is the article a title leads to.
RESOLVED = ("sitelink", "redirect", "no_sitelink")
#: What a task does with a name no article matches: drop its group or pair, or use the name itself.
Unmatched = Literal["drop", "name"]


@dataclass
class TaskOutput:
    """A task's file lines (file -> lines in order) and its name matches."""

    lines: dict[str, list[str]] = field(default_factory=dict)
    matches: list[Match] = field(default_factory=list)


def check_scorer(scorer: str) -> None:
    """Check the title-matching scorer of ESR, ERT and NED against `SCORERS` (the other matching
    parameters' bounds and choices are declared by their types)."""
    if scorer not in SCORERS:
        raise ValueError(f"scorer must be one of {', '.join(SCORERS)}")


@dataclass(frozen=True)
class TitleMatchParams(TaskParams):
    """Parameters of a task that attaches descriptions to entity names by fuzzy title matching
    (ESR's KORE and WikiSRS, ERT): declared once here, inherited by each."""

    lowercase: Annotated[
        bool,
        Meta(description="lowercase descriptions"),
    ] = True
    min_score: Annotated[
        float,
        Meta(ge=0, le=100, description="least fuzzy score of a title match"),
    ] = 90.0
    scorer: Annotated[
        str,
        Meta(description="the fuzzy scorer (rapidfuzz)"),
    ] = "ratio"
    unmatched: Annotated[
        Unmatched,
        Meta(description="`drop` the group or pair of an unmatched name, or use the `name` itself"),
    ] = "drop"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_scorer(self.scorer)


class TaskStage(Stage[TP]):
    """One EntEval task: a one-shard stage whose work is `build`. Skipped when not configured."""

    layer = "benchmarks"
    default_num_shards = 1
    shard_key = "file"
    progress_unit = "task"
    progress_items = "lines"
    #: The task's name in `enteval_tasks.tasks`, and every file it writes (relative to task_path).
    task: ClassVar[str] = ""
    files: ClassVar[tuple[str, ...]] = ()
    writes_matches: ClassVar[bool] = False

    def outputs(self, params: TP) -> list[Output]:
        """`lines`, and `matches` for tasks that match names to articles."""
        outputs = [Output("lines", schema.TASK_LINES, ("file", "line"))]
        if self.writes_matches:
            outputs.append(Output("matches", schema.MATCHES, ("name",)))
        return outputs

    def resolve_num_shards(self, params: TP, sources: Mapping[str, SourceInfo]) -> int:
        """Always one shard: task files are small and written whole."""
        return 1

    def shard(self, ctx: StageContext[TP], shard: int) -> tuple[dict[str, pa.Table], Stats]:
        """Build the task, or count it as skipped when its sources are not named."""
        params = ctx.params
        stats = Stats()
        if not params.configured:
            stats.add("skipped_no_source")
            return {}, stats
        output = self.build(ctx, params, stats)
        unknown = set(output.lines) - set(self.files)
        assert not unknown, f"{self.stage_name} wrote undeclared files {sorted(unknown)}"
        tables = {"lines": lines_table(output.lines)}
        for name, lines in output.lines.items():
            stats.add(f"lines_{name}", len(lines))
        if self.writes_matches:
            tables["matches"] = matches_table(output.matches)
            for match in output.matches:
                stats.add(f"names_{match.method}")
        return tables, stats

    def build(self, ctx: StageContext[TP], params: TP, stats: Stats) -> TaskOutput:
        """Read the task's sources and return its file lines."""
        raise NotImplementedError

    def read(self, params: TaskParams, source_field: str) -> SourceLines:
        """A source file's lines."""
        return SourceLines(params.source_path(source_field))


def lines_table(lines: Mapping[str, Sequence[str]]) -> pa.Table:
    """The `lines` table of a task."""
    rows: dict[str, list[Any]] = {"file": [], "line": [], "text": []}
    for name in sorted(lines):
        for number, text in enumerate(lines[name]):
            rows["file"].append(name)
            rows["line"].append(number)
            rows["text"].append(text)
    return pa.table(rows, schema=schema.TASK_LINES)


def matches_table(matches: Iterable[Match]) -> pa.Table:
    """The `matches` table: one row per distinct name."""
    unique = {m.name: m for m in matches}
    rows = [
        {
            "name": m.name,
            "method": m.method,
            "score": m.score,
            "page_id": m.page_id,
            "title": m.title,
            "best_title": m.best_title,
            "best_score": m.best_score,
        }
        for m in (unique[n] for n in sorted(unique))
    ]
    return pa.Table.from_pylist(rows, schema=schema.MATCHES)


def parse(source: SourceLines, parser: Any, *args: Any) -> Any:
    """Run a parser over a source's lines, turning its `SourceError` into a `DataError`."""
    try:
        result = parser(iter(source), *args)
        return list(result) if not isinstance(result, list) else result
    except SourceError as exc:
        raise source.error(exc) from exc


class Describer:
    """Wikipedia descriptions for entity names, through the `enteval.titles` matching ladder.

    Reads the `wikient_descriptions` and `title_qid` stages of the build; `describe(name)` is the
    matched article's description (lowercased when asked), or with `unmatched="name"` the name
    itself for a name without an article, else None.
    """

    def __init__(
        self,
        ctx: StageContext,
        names: Iterable[str],
        *,
        min_score: float,
        scorer: str,
        lowercase: bool,
        unmatched: str = "drop",
    ) -> None:
        wanted = sorted(set(names))
        self._lowercase = lowercase
        self._unmatched = unmatched
        descriptions = ctx.inputs["wikient_descriptions"].files("descriptions")
        con = stage_connection(ctx, tasks=ctx.num_shards)
        try:
            con.execute(
                "CREATE TEMP TABLE articles AS SELECT page_id, title FROM read_parquet($files)",
                {"files": descriptions},
            )
            keys = sorted({title_key(n) for n in wanted})
            exact: dict[str, TitleTarget] = {}
            if keys:
                rows = con.execute(
                    "SELECT t.title, a.page_id, a.title, t.hops "
                    "FROM read_parquet($titles) t "
                    "JOIN articles a ON a.page_id = t.page_id "
                    f"WHERE t.title IN (SELECT unnest($keys)) AND t.status IN {RESOLVED}",
                    {"titles": ctx.inputs["title_qid"].files("title_qid"), "keys": keys},
                ).fetchall()
                exact = {
                    str(key): TitleTarget(int(pid), str(title), int(hops)) for key, pid, title, hops in rows
                }
            # Every article title is needed only when some name has no exact or redirect match.
            everything_exact = all(title_key(n) in exact for n in wanted)
            articles = (
                [] if everything_exact else con.execute("SELECT title, page_id FROM articles").fetchall()
            )
            matcher = TitleMatcher(
                exact, ((str(t), int(p)) for t, p in articles), min_score=min_score, scorer=scorer
            )
            self.matches = {name: matcher.match(name) for name in wanted}
            matched = sorted({m.page_id for m in self.matches.values() if m.page_id is not None})
            self._text: dict[int, str] = {}
            if matched:
                self._text = {
                    int(pid): str(text)
                    for pid, text in con.execute(
                        "SELECT page_id, description "
                        "FROM read_parquet($files) WHERE page_id IN (SELECT unnest($pages))",
                        {"files": descriptions, "pages": matched},
                    ).fetchall()
                }
        finally:
            con.close()

    def describe(self, name: str) -> str | None:
        """The description words of a name's article, joined by spaces (see the class docstring)."""
        match = self.matches[name]
        if match.page_id is None:
            if self._unmatched == "name" and clean(name):
                text = clean(name.replace("_", " "))
                return text.lower() if self._lowercase else text
            return None
        text = self._text[match.page_id]
        return text.lower() if self._lowercase else text
