"""A series of Wikidata dumps in date order: how its sources are named and what a period is.

Dump `i` is the source `wikidata_i`, numbered from 0 (the oldest) without gaps, given as
`--source wikidata_0=… --source wikidata_1=…` or as a list in a config file (`wikidata = [a, b,
c]`, `engine.config`). Period `i` (1 ≤ i < N) is the interval between dumps `i-1` and `i`: its
new entities are the ids dump `i` holds and keeps (`series_filter`) and that earlier dumps lack
(`series_new`, `new_means`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from entbench.errors import UserError

if TYPE_CHECKING:  # the pipeline imports this module: keep it light
    from entbench.engine.stage import StageContext

#: Sources `wikidata_0`, `wikidata_1`, … (a scan stage of the same name reads each).
SOURCE_PREFIX = "wikidata_"
#: A series has at least two dumps: one period.
MIN_DUMPS = 2
_NUMBERED = re.compile(r"wikidata_(0|[1-9][0-9]*)")


def dump_source(index: int) -> str:
    """The source (and scan stage) name of dump `index`."""
    return f"{SOURCE_PREFIX}{index}"


def dump_sources(count: int) -> tuple[str, ...]:
    """The source names of a series of `count` dumps, oldest first."""
    return tuple(dump_source(i) for i in range(count))


def series_length(source_names: Collection[str]) -> int:
    """How many dumps a build's sources make a series of: up to the highest `wikidata_<i>` given,
    and at least `MIN_DUMPS`, so that a gap or a single dump is named as a missing source."""
    numbers = [int(m.group(1)) for name in source_names if (m := _NUMBERED.fullmatch(name))]
    return max(MIN_DUMPS, max(numbers, default=-1) + 1)


def dump_index(source: str) -> int:
    """`i` of the source name `wikidata_i` (a ValueError for any other name)."""
    match = _NUMBERED.fullmatch(source)
    if match is None:
        raise ValueError(f"not a series dump source: {source!r}")
    return int(match.group(1))


def period_label(period: int) -> str:
    """How cards and stats name period `i`: the dumps it lies between."""
    return f"{period - 1}→{period}"


def require_dump_params(ctx: StageContext, dumps: Sequence[str], name: str, wanted: Sequence[str]) -> None:
    """UserError unless every scan of `dumps` kept each of `wanted` in its parameter `name`
    (`languages` or `sites`; a `sites` list holding `*` keeps every site), naming every scan short
    of one and the `--param` that fixes it."""
    fixes = []
    for dump in dumps:
        kept = list(ctx.inputs[dump].params.get(name, []))
        missing = [value for value in wanted if value not in kept]
        if missing and not (name == "sites" and "*" in kept):
            fixes.append(f"--param {dump}.{name}={','.join([*kept, *missing])}")
    if fixes:
        raise UserError(
            f"{ctx.stage} needs {name} {list(wanted)} of every dump, which {len(fixes)} scan(s) did "
            f"not keep; rebuild them with {' '.join(fixes)}"
        )
