"""What a dataset card is made of: sections of Markdown text and chart specifications.

Sections are plain data, built by functions that read a build (`cards.build_view`); turning them
into a README and PNG files is the writer's job (`cards.writer`, `cards.plots`), so a section can
be tested by its content and a chart that fails to draw never loses the text around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ChartStyle = Literal["bar", "barh", "hist", "line"]


@dataclass(frozen=True)
class Chart:
    """One PNG plot: bars per label, one series or several side by side.

    `style`: "bar" (vertical bars), "barh" (horizontal bars, for long labels such as property
    names, largest first from the top), "hist" (touching bars of an integer histogram), "line"
    (one line per series over the labels in order, e.g. a cumulative curve; never a log axis).
    `counts`: the values count things (rows, mentions, entities), so the value axis has integer
    ticks only; False for shares and other real numbers.
    """

    file: str  # PNG file name inside the card directory
    title: str
    labels: tuple[str, ...]
    series: tuple[tuple[str, tuple[float, ...]], ...]  # (legend name, one value per label)
    xlabel: str = ""
    ylabel: str = ""
    style: ChartStyle = "bar"
    counts: bool = True

    def __post_init__(self) -> None:
        if not self.file.endswith(".png") or "/" in self.file:
            raise ValueError(f"chart file must be a bare .png name, got {self.file!r}")
        for name, values in self.series:
            if len(values) != len(self.labels):
                raise ValueError(f"series {name!r}: {len(values)} values for {len(self.labels)} labels")

    @property
    def empty(self) -> bool:
        """No label, or every value zero: nothing worth drawing."""
        return not self.labels or all(v == 0 for _, values in self.series for v in values)

    @property
    def bars(self) -> int:
        """Bars with a nonzero value: a chart of one bar says nothing a sentence would not."""
        return sum(1 for _, values in self.series for v in values if v != 0)


@dataclass(frozen=True)
class Invocation:
    """How a build was asked for (`entbench build` arguments), for the card's rebuild command.

    `config` is None when the bundled fixture config was used; paths are as the user wrote them.
    """

    config: str | None
    sources: tuple[str, ...]  # NAME=PATH overrides
    params: tuple[str, ...]  # STAGE.KEY=VALUE overrides
    out: str
    limit: int | None = None  # `--limit N`: a trial build from the first N of each dump

    @property
    def demo(self) -> bool:
        """Whether this built the bundled demo world (neither a config nor a source given)."""
        return self.config is None and not self.sources

    def to_json(self) -> dict[str, object]:
        """`card.json` form."""
        doc: dict[str, object] = {
            "config": self.config,
            "sources": list(self.sources),
            "params": list(self.params),
            "out": self.out,
        }
        if self.limit is not None:  # a trial build (`--limit N`) only
            doc["limit"] = self.limit
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> Invocation:
        """Inverse of `to_json` (raises KeyError/TypeError on a malformed document)."""
        config = doc["config"]
        sources, params = doc["sources"], doc["params"]
        if not isinstance(sources, list) or not isinstance(params, list):
            raise TypeError("sources and params must be lists")
        limit = doc.get("limit")
        return cls(
            config=None if config is None else str(config),
            sources=tuple(str(s) for s in sources),
            params=tuple(str(p) for p in params),
            out=str(doc["out"]),
            limit=limit if isinstance(limit, int) else None,
        )


@dataclass(frozen=True)
class Content:
    """What a target's tables hold, by the licence each kind of content carries (`cards.licence`).

    Each field says, in a few words for the card, which content of that kind is in the tables;
    an empty field means none. `wikipedia`: text taken from Wikipedia articles (plain text,
    sentences, link anchors, titles); `wikidata`: Wikidata content (ids, labels, descriptions,
    claims, sitelinks); `other`: anything else (a corpus, task files), under its own terms.
    """

    wikipedia: str = ""
    wikidata: str = ""
    other: str = ""


@dataclass(frozen=True)
class PublishedTable:
    """Where `entbench publish` put a final table in a Hugging Face dataset folder: the config and
    split it is, its Parquet files as a glob relative to the folder (`data/<config>/<split>-*.parquet`)."""

    config: str
    split: str

    @property
    def glob(self) -> str:
        """The table's files, relative to the published folder."""
        return f"data/{self.config}/{self.split}-*.parquet"


Block = str | Chart  # Markdown text, or a chart to draw and embed at that place


@dataclass(frozen=True)
class Section:
    """A titled part of the card (`## title`), in reading order."""

    title: str
    blocks: tuple[Block, ...] = ()

    def charts(self) -> list[Chart]:
        """The charts of this section, in order."""
        return [b for b in self.blocks if isinstance(b, Chart)]


@dataclass
class CardResult:
    """What writing a card produced, and what went wrong without stopping it."""

    directory: str
    readme: str
    plots_written: list[str] = field(default_factory=list)
    plots_skipped_empty: list[str] = field(default_factory=list)
    plots_single_bar: list[str] = field(default_factory=list)  # said in a sentence instead
    plots_failed: dict[str, str] = field(default_factory=dict)  # file -> error
    sections_failed: dict[str, str] = field(default_factory=dict)  # section -> error
    plot_keys: dict[str, str] = field(default_factory=dict)  # file -> `cards.plot_reuse.chart_key`

    @property
    def failures(self) -> int:
        """Plots and sections that raised (each is noted in the card and in card.json)."""
        return len(self.plots_failed) + len(self.sections_failed)

    def to_json(self) -> dict[str, object]:
        """The counts recorded in `card.json` (file names relative to the card directory)."""
        return {
            "plots_written": sorted(self.plots_written),
            "plots_skipped_empty": sorted(self.plots_skipped_empty),
            "plots_single_bar": sorted(self.plots_single_bar),
            "plots_failed": dict(sorted(self.plots_failed.items())),
            "sections_failed": dict(sorted(self.sections_failed.items())),
            "plot_keys": dict(sorted(self.plot_keys.items())),
        }
