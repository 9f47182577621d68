"""Synthetic Wikidata JSON dump in the real `latest-all.json` layout, for the scan benchmark.

The layout is the one of the official dumps (spec §1): a `[` line, one entity JSON per line ending
in `,` (the last one without), a `]` line. Lines are serialised as Wikibase's PHP `json_encode`
writes them: compact, non-ASCII as `\\uXXXX` (surrogate pairs beyond the BMP), `/` as `\\/`, and
floats like `1.0e-5`.

What the lines hold, so that a parser does the same work per byte as on a real dump
(performance.md: mean line ~15 KB with a long tail):

* labels, descriptions and aliases in many languages and scripts (~170 language codes),
  sitelinks to many wikis with occasional badges;
* statements with references (shared between statements, as real reference hashes are) and
  qualifiers, ranks preferred/normal/deprecated, somevalue/novalue snaks;
* every datavalue type: `wikibase-entityid` (items, properties, lexemes, forms, senses, and
  2014-2016-style references carrying only `numeric-id`), `string` (string, external-id, url,
  commonsMedia, math, musical-notation, tabular-data, geo-shape), `time` (precisions 3-11, BC years,
  Julian calendar), `quantity` (unitless, and with units and bounds), `globecoordinate` (null
  precision too) and `monolingualtext`;
* items, properties and a few lexemes; empty maps written as `[]` as PHP does;
* a P279 (subclass of) hierarchy whose longest chain has `DEPTH_LEVELS - 1` >= 15 edges, with a
  few cycles; P31 from every item into it; deprecated P279 edges that truthy selection must ignore.

The JSON text is assembled directly (no dicts, no `json.dumps` except to escape free text): the
generator must write a few hundred MB in seconds for `bench/run.py --quick`. The layout comes from
`random.Random(seed)` and each block of `BLOCK_ENTITIES` lines from its own `Random(f"{seed}:{i}")`,
so blocks render in parallel (`--jobs`) and a seed and an entity count give identical bytes
whatever the number of processes; `--gzip` output is reproducible too (no timestamp or file name
in the gzip header).

    python bench/gen_wikidata.py --entities 20000 --out /tmp/wd.json [--gzip] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from bisect import bisect
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, cast

from wd_vocab import (
    ALL_PIDS,
    BADGES,
    CAP_WORDS,
    COORD_PRECISIONS,
    DATATYPE_OF,
    DEEP_TIME_YEARS,
    EARTH,
    EXTRA_SITES,
    GREGORIAN,
    ITEM_CUM_WEIGHTS,
    ITEM_PIDS,
    JULIAN,
    KIND_OF,
    LANGS,
    MOON,
    QUALIFIERS,
    REFERENCE_PROPS,
    REFERENCE_SHAPES,
    SCRIPT_OF,
    TABLES,
    TIME_CUM_WEIGHTS,
    TIME_PRECISIONS,
    UNITS,
    WORDS,
)

#: Bumped whenever the bytes for a given (seed, entities) change; cached dumps are keyed by it.
GENERATOR_VERSION = 1
#: Levels of the P279 hierarchy: level 0 are roots, so the longest chain has DEPTH_LEVELS-1 edges.
DEPTH_LEVELS = 20
#: What every class is an instance of ("class", Q16889133; not itself in the dump).
CLASS_OF_CLASSES = 16889133
#: Distinct references to draw from (real dumps share a reference, and its hash, across statements).
REFERENCE_POOL = 4096
ENTITY_KINDS = frozenset(["item", "class", "property", "lexeme", "form", "sense"])


def js(text: str) -> str:
    """A JSON string literal as the dumps write it: ASCII-only, `/` escaped."""
    return json.dumps(text).replace("/", "\\/")


@dataclass
class GenStats:
    """What a generated dump contains (counts), so tests and the harness can check coverage."""

    entities: int = 0
    items: int = 0
    classes: int = 0
    properties: int = 0
    lexemes: int = 0
    json_bytes: int = 0
    line_bytes: list[int] = field(default_factory=list, repr=False)
    value_types: Counter[str] = field(default_factory=Counter)
    datatypes: Counter[str] = field(default_factory=Counter)
    snaktypes: Counter[str] = field(default_factory=Counter)
    ranks: Counter[str] = field(default_factory=Counter)
    time_precisions: Counter[int] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)

    def merge(self, other: GenStats) -> None:
        """Add the counts of a block rendered elsewhere (line sizes are tracked by the writer)."""
        for name in ("items", "classes", "properties", "lexemes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("value_types", "datatypes", "snaktypes", "ranks", "time_precisions", "features"):
            getattr(self, name).update(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary, with the distribution of line sizes in bytes."""
        sizes = sorted(self.line_bytes)

        def pct(q: float) -> int:
            return sizes[min(len(sizes) - 1, int(q * len(sizes)))] if sizes else 0

        return {
            "generator_version": GENERATOR_VERSION,
            "entities": self.entities,
            "items": self.items,
            "classes": self.classes,
            "properties": self.properties,
            "lexemes": self.lexemes,
            "json_bytes": self.json_bytes,
            "line_bytes": {
                "mean": round(sum(sizes) / len(sizes)) if sizes else 0,
                "p50": pct(0.5),
                "p90": pct(0.9),
                "p99": pct(0.99),
                "max": sizes[-1] if sizes else 0,
            },
            "value_types": dict(sorted(self.value_types.items())),
            "datatypes": dict(sorted(self.datatypes.items())),
            "snaktypes": dict(sorted(self.snaktypes.items())),
            "ranks": dict(sorted(self.ranks.items())),
            "time_precisions": {str(k): v for k, v in sorted(self.time_precisions.items())},
            "features": dict(sorted(self.features.items())),
        }


@dataclass(frozen=True)
class Layout:
    """Which ids exist and what they are; fixed before any line is written."""

    class_ids: tuple[int, ...]  # Q numbers of the P279 hierarchy, in level order
    class_level: dict[int, int]
    class_parents: dict[int, tuple[int, ...]]  # truthy P279 edges, cycle-closing ones included
    item_ids: tuple[int, ...]  # Q numbers of ordinary items
    property_ids: tuple[str, ...]  # P ids written as property entities
    lexeme_ids: tuple[int, ...]  # L numbers
    cycle_edges: tuple[tuple[int, int], ...]  # (ancestor, descendant) edges that close a cycle


def make_layout(rng: random.Random, entities: int) -> Layout:
    """Choose ids for classes, items, properties and lexemes, and the P279 edges between classes.

    Each class at level d > 0 has one or two parents at level d-1, so the longest chain has
    `DEPTH_LEVELS - 1` edges; a few ancestor -> descendant edges close cycles (real Wikidata has
    some, performance.md), which a type-closure stage must survive.
    """
    n_props = min(len(ALL_PIDS), max(3, entities // 50))
    n_lex = max(2, entities // 1000)
    n_classes = max(DEPTH_LEVELS + 2, entities // 25)
    n_items = max(1, entities - n_props - n_lex - n_classes)
    numbers: list[int] = []
    current = 0
    for _ in range(n_classes + n_items):
        current += 1 + int(rng.expovariate(1 / 12))  # gaps, so ids have mixed lengths like real ones
        numbers.append(current)
    class_ids = tuple(numbers[:n_classes])
    level = {q: i * DEPTH_LEVELS // n_classes for i, q in enumerate(class_ids)}
    by_level: dict[int, list[int]] = {}
    for q in class_ids:
        by_level.setdefault(level[q], []).append(q)
    parents: dict[int, tuple[int, ...]] = {}
    for q in class_ids:
        upper = by_level.get(level[q] - 1, [])
        k = 2 if rng.random() < 0.2 and len(upper) > 1 else 1
        parents[q] = tuple(sorted(rng.sample(upper, k))) if upper else ()
    cycles: list[tuple[int, int]] = []
    deep = [q for q in class_ids if level[q] >= 3]
    for _ in range(max(2, n_classes // 200)):
        below = rng.choice(deep)
        ancestor = below
        for _ in range(rng.randint(1, level[below])):
            ancestor = parents[ancestor][0]
        if below in parents[ancestor]:
            continue
        cycles.append((ancestor, below))  # the ancestor is now a subclass of its own descendant
        parents[ancestor] = (*parents[ancestor], below)
    lexeme_ids = tuple(sorted(rng.sample(range(1, 50 * n_lex + 2), n_lex)))
    return Layout(
        class_ids, level, parents, tuple(numbers[n_classes:]), ALL_PIDS[:n_props], lexeme_ids, tuple(cycles)
    )


class Gen:
    """Renders entities as JSON text; all randomness comes from `rng`."""

    def __init__(
        self,
        rng: random.Random,
        layout: Layout,
        stats: GenStats,
        references: tuple[list[str], list[list[tuple[str, str]]]] | None = None,
    ) -> None:
        self.rng = rng
        self.rnd = rng.random
        self.bits = rng.getrandbits
        self.layout = layout
        self.stats = stats
        self.all_q = layout.class_ids + layout.item_ids
        self.max_q = self.all_q[-1]
        self.references: list[str] = []
        self.reference_snaks: list[list[tuple[str, str]]] = []  # (value type, datatype) per reference
        self.reference_picks = [0] * REFERENCE_POOL
        if references is not None:
            self.references, self.reference_snaks = references
        else:
            for _ in range(REFERENCE_POOL):
                self._add_reference()

    # --- small values -----------------------------------------------------------------------
    def pick(self, seq: tuple[Any, ...] | list[Any]) -> Any:
        return seq[int(self.rnd() * len(seq))]

    def name(self, words: int = 0) -> str:
        rnd = self.rnd
        n = words or (1 + int(rnd() * 3))
        return " ".join(CAP_WORDS[int(rnd() * 4096)] for _ in range(n))

    def hexhash(self) -> str:
        return f"{self.bits(160):040x}"

    def entity_ref(self, kind: str) -> str:
        rnd = self.rnd
        if kind in ("item", "class"):
            if kind == "class":
                q = self.pick(self.layout.class_ids)
            elif rnd() < 0.7:
                q = self.pick(self.all_q)
            else:
                q = 1 + int(rnd() * self.max_q * 3)  # an entity outside this dump
            if rnd() < 0.04:
                self.stats.features["numeric_id_only_refs"] += 1
                return f'{{"entity-type":"item","numeric-id":{q}}}'  # 2014-2016 style: no "id"
            return f'{{"entity-type":"item","numeric-id":{q},"id":"Q{q}"}}'
        if kind == "property":
            p = self.pick(self.layout.property_ids)
            return f'{{"entity-type":"property","numeric-id":{p[1:]},"id":"{p}"}}'
        lex = self.pick(self.layout.lexeme_ids)
        if kind == "lexeme":
            return f'{{"entity-type":"lexeme","numeric-id":{lex},"id":"L{lex}"}}'
        if kind == "form":
            return f'{{"entity-type":"form","id":"L{lex}-F{1 + int(rnd() * 3)}"}}'
        return f'{{"entity-type":"sense","id":"L{lex}-S{1 + int(rnd() * 2)}"}}'

    def time(self, retrieved: bool = False) -> str:
        rnd = self.rnd
        precision = 11 if retrieved else TIME_PRECISIONS[bisect(TIME_CUM_WEIGHTS, rnd() * 100)]
        self.stats.time_precisions[precision] += 1
        if retrieved:
            year = 2012 + int(rnd() * 14)
        elif precision == 3:
            year = -self.pick(DEEP_TIME_YEARS)  # deep time, e.g. -13798000000-00-00T00:00:00Z
        elif rnd() < 0.08:
            year = -(1 + int(rnd() * 3000))  # BC
        elif precision <= 8:
            year = 1 + int(rnd() * 2025)
        else:
            year = 1500 + int(rnd() * 526)
        if year < 0:
            self.stats.features["bc_times"] += 1
        month = 1 + int(rnd() * 12) if precision >= 10 else 0
        day = 1 + int(rnd() * 28) if precision >= 11 else 0
        calendar = JULIAN if year < 1582 and rnd() < 0.7 else GREGORIAN
        return (
            f'{{"time":"{"-" if year < 0 else "+"}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z",'
            f'"timezone":0,"before":0,"after":0,"precision":{precision},"calendarmodel":"{calendar}"}}'
        )

    def quantity(self, kind: str) -> str:
        rnd = self.rnd
        if kind == "count":
            return f'{{"amount":"+{int(100 / (1.0 - rnd()) ** 0.8)}","unit":"1"}}'
        digits = int(rnd() * 4)
        amount = round(-50 + rnd() * 9050, digits)
        unit = self.pick(UNITS[kind])
        if rnd() < 0.4:
            self.stats.features["quantity_bounds"] += 1
            delta = round(abs(amount) * 0.01 + 0.5, 2)
            return (
                f'{{"amount":"{amount:+}","unit":"{unit}","upperBound":"{amount + delta:+.{digits + 2}f}",'
                f'"lowerBound":"{amount - delta:+.{digits + 2}f}"}}'
            )
        return f'{{"amount":"{amount:+}","unit":"{unit}"}}'

    def coord(self) -> str:
        rnd = self.rnd
        precision = self.pick(COORD_PRECISIONS)
        if precision == "null":
            self.stats.features["coord_null_precision"] += 1
        globe = EARTH if rnd() < 0.97 else MOON
        return (
            f'{{"latitude":{round(-90 + rnd() * 180, 6)!r},"longitude":{round(-180 + rnd() * 360, 6)!r},'
            f'"altitude":null,"precision":{precision},"globe":"{globe}"}}'
        )

    def string(self, kind: str) -> str:
        r = int(self.rnd() * 10**9)
        if kind == "digits":
            return f'"{r}"'
        if kind == "url":
            return js(f"https://www.{WORDS[r % 4096]}.org/{WORDS[r // 7 % 4096]}/{r}")
        if kind == "freebase":
            return f'"\\/m\\/0{r:x}"'
        if kind == "kg":
            return f'"\\/g\\/11{r:x}"'
        if kind == "gnd":
            return f'"{r % 10**8}-{r % 10}"'
        if kind == "lccn":
            return f'"n{r % 10**8:08d}"'
        if kind == "isni":
            return f'"0000 000{r % 10} {r % 10000:04d} {r // 7 % 10000:04d}"'
        if kind == "doi":
            return js(f"10.{1000 + r % 9000}/{WORDS[r % 4096]}.{r % 100000}")
        if kind == "imdb":
            return f'"tt{r % 10**7:07d}"'
        if kind == "bnf":
            return f'"{r % 10**8:08d}x"'
        if kind == "media":
            return js(f"{self.name()} {r % 1000}.jpg")
        if kind == "math":
            return js("\\frac{" + WORDS[r % 4096] + "}{2} = \\sqrt{x}")
        if kind == "music":
            return js("\\relative c' { c d e f | g1 }")
        if kind == "tabular":
            return js(f"Data:{CAP_WORDS[r % 4096]}/{WORDS[r // 7 % 4096]}.tab")
        if kind == "geoshape":
            return js(f"Data:{CAP_WORDS[r % 4096]}.map")
        if kind == "ordinal":
            return f'"{1 + r % 40}"'
        if kind == "catalog":
            return js(f"{CAP_WORDS[r % 4096]} {r % 10000}")
        return js(self.name())  # commonscat, name

    def value(self, kind: str) -> tuple[str, str]:
        """(datavalue type, value JSON) for a property of the given kind."""
        if kind in ENTITY_KINDS:
            return "wikibase-entityid", self.entity_ref(kind)
        if kind in ("time", "retrieved"):
            return "time", self.time(kind == "retrieved")
        if kind == "count" or kind in UNITS:
            return "quantity", self.quantity(kind)
        if kind == "coord":
            return "globecoordinate", self.coord()
        if kind == "mono":
            lang = LANGS[int(self.rnd() * 40)]
            text = js(self.name().translate(TABLES[SCRIPT_OF[lang]]))
            return "monolingualtext", f'{{"text":{text},"language":"{lang}"}}'
        return "string", self.string(kind)

    # --- snaks, references, statements -----------------------------------------------------------
    def snak(self, prop: str) -> str:
        """A main or qualifier snak (with its hash); 2% are somevalue/novalue."""
        datatype = DATATYPE_OF[prop]
        stats = self.stats
        stats.datatypes[datatype] += 1
        r = self.rnd()
        if r < 0.98:
            vtype, value = self.value(KIND_OF[prop])
            stats.value_types[vtype] += 1
            stats.snaktypes["value"] += 1
            return (
                f'{{"snaktype":"value","property":"{prop}","hash":"{self.hexhash()}",'
                f'"datavalue":{{"value":{value},"type":"{vtype}"}},"datatype":"{datatype}"}}'
            )
        snaktype = "somevalue" if r < 0.99 else "novalue"
        stats.snaktypes[snaktype] += 1
        return (
            f'{{"snaktype":"{snaktype}","property":"{prop}","hash":"{self.hexhash()}",'
            f'"datatype":"{datatype}"}}'
        )

    def _add_reference(self) -> None:
        props = self.pick(REFERENCE_SHAPES)
        parts = []
        kinds = []
        for prop in props:
            datatype, kind = REFERENCE_PROPS[prop]
            vtype, value = self.value(kind)
            kinds.append((vtype, datatype))
            parts.append(
                f'"{prop}":[{{"snaktype":"value","property":"{prop}",'
                f'"datavalue":{{"value":{value},"type":"{vtype}"}},"datatype":"{datatype}"}}]'
            )
        order = ",".join(f'"{p}"' for p in props)
        self.references.append(
            f'{{"hash":"{self.hexhash()}","snaks":{{{",".join(parts)}}},"snaks-order":[{order}]}}'
        )
        self.reference_snaks.append(kinds)

    def statement(
        self, ident: str, prop: str, rank: str, richness: float, mainsnak: str | None = None
    ) -> str:
        rnd = self.rnd
        snak = mainsnak if mainsnak is not None else self.snak(prop)
        quals = ""
        if rnd() < min(0.5, 0.12 * richness) or rank == "deprecated":
            qprops = list(dict.fromkeys(self.pick(QUALIFIERS)[0] for _ in range(1 + int(rnd() * 3))))
            if rank == "deprecated":
                qprops = list(dict.fromkeys(["P2241", *qprops]))  # reason for deprecated rank
            body = ",".join(f'"{q}":[{self.snak(q)}]' for q in qprops)
            order = ",".join(f'"{q}"' for q in qprops)
            quals = f',"qualifiers":{{{body}}},"qualifiers-order":[{order}]'
            self.stats.features["qualified_statements"] += 1
        refs = ""
        n_refs = min(4, int(self.rng.expovariate(1.0) * min(richness, 1.6)))
        if n_refs:
            chosen = [int(rnd() * REFERENCE_POOL) for _ in range(n_refs)]
            for i in chosen:
                self.reference_picks[i] += 1
            refs = f',"references":[{",".join(self.references[i] for i in chosen)}]'
        g = f"{self.bits(128):032X}"
        self.stats.ranks[rank] += 1
        return (
            f'{{"mainsnak":{snak},"type":"statement"{quals},'
            f'"id":"{ident}${g[:8]}-{g[8:12]}-{g[12:16]}-{g[16:20]}-{g[20:]}","rank":"{rank}"{refs}}}'
        )

    def claim_group(self, ident: str, prop: str, count: int, richness: float) -> str:
        """`"P":[...]` with `count` statements and realistic ranks (spec §1 truthiness)."""
        rnd = self.rnd
        ranks = ["normal"] * count
        if count > 1 and rnd() < 0.25:
            ranks[int(rnd() * count)] = "preferred"
        if rnd() < 0.06:
            ranks[int(rnd() * count)] = "deprecated"  # may leave a property with no truthy value
        return f'"{prop}":[{",".join(self.statement(ident, prop, rank, richness) for rank in ranks)}]'

    def edge_group(self, ident: str, prop: str, targets: list[int], richness: float, extra: str = "") -> str:
        """`"P":[...]` of normal-rank item-valued statements to fixed targets (hierarchy edges)."""
        statements = []
        for t in targets:
            self.stats.datatypes["wikibase-item"] += 1
            self.stats.snaktypes["value"] += 1
            self.stats.value_types["wikibase-entityid"] += 1
            snak = (
                f'{{"snaktype":"value","property":"{prop}","hash":"{self.hexhash()}","datavalue":{{"value":'
                f'{{"entity-type":"item","numeric-id":{t},"id":"Q{t}"}},"type":"wikibase-entityid"}},'
                f'"datatype":"wikibase-item"}}'
            )
            statements.append(self.statement(ident, prop, "normal", richness, mainsnak=snak))
        if extra:
            statements.append(extra)
        return f'"{prop}":[{",".join(statements)}]'

    # --- terms and sitelinks ------------------------------------------------------------------------
    def languages(self, n: int) -> list[str]:
        n = min(n, len(LANGS))
        head = min(n, max(1, int(n * 0.6)))
        langs = list(LANGS[:head]) + self.rng.sample(LANGS[head:], n - head)
        if langs[0] == "en" and self.rnd() < 0.08:
            langs.pop(0)  # plenty of items have no English label
        return langs

    def localized(self, text: str, langs: list[str]) -> dict[str, str]:
        """`text` in the script of each language, as escaped JSON literals (one per script)."""
        by_script: dict[str, str] = {}
        out = {}
        for lang in langs:
            script = SCRIPT_OF[lang]
            literal = by_script.get(script)
            if literal is None:
                local = text.translate(TABLES[script])
                if script == "hani" and self.rnd() < 0.05:
                    local += chr(0x20000 + int(self.rnd() * 0xA6D6))  # CJK Ext. B: a surrogate pair
                    self.stats.features["non_bmp_text"] += 1
                literal = by_script[script] = js(local)
            out[lang] = literal
        return out

    def terms(self, base: str, richness: float) -> tuple[str, list[str], dict[str, str]]:
        """The `labels`, `descriptions`, `aliases` members; also the label languages and literals."""
        rnd = self.rnd
        langs = self.languages(max(1, int(12 * richness + self.rng.expovariate(1 / 6))))
        labels = self.localized(base, langs)
        description = " ".join(WORDS[int(rnd() * 4096)] for _ in range(2 + int(rnd() * 5)))
        desc_langs = langs[: max(1, int(len(langs) * (0.3 + 0.7 * rnd())))]
        descriptions = self.localized(description, desc_langs)
        alias_parts = []
        for lang in langs[: int(len(langs) * 0.4 * rnd())]:
            table = TABLES[SCRIPT_OF[lang]]
            aliases = ",".join(
                f'{{"language":"{lang}","value":{js(self.name().translate(table))}}}'
                for _ in range(1 + int(rnd() * 3))
            )
            alias_parts.append(f'"{lang}":[{aliases}]')
        label_text = ",".join(f'"{k}":{{"language":"{k}","value":{v}}}' for k, v in labels.items())
        desc_text = ",".join(f'"{k}":{{"language":"{k}","value":{v}}}' for k, v in descriptions.items())
        alias_text = f"{{{','.join(alias_parts)}}}" if alias_parts else self.empty_map()
        members = f'"labels":{{{label_text}}},"descriptions":{{{desc_text}}},"aliases":{alias_text}'
        return members, langs, labels

    def empty_map(self) -> str:
        """An empty map as PHP writes it (`[]`) half of the time, else `{}` (spec §1 quirk)."""
        if self.rnd() < 0.5:
            self.stats.features["empty_map_as_list"] += 1
            return "[]"
        return "{}"

    def sitelinks(self, langs: list[str], labels: dict[str, str], richness: float) -> str:
        rnd = self.rnd
        n = min(len(langs), int(5 * richness + self.rng.expovariate(1 / 3)))
        if n == 0:
            return self.empty_map()
        parts = []
        for lang in langs[:n]:
            site = lang.replace("-", "_") + "wiki"
            badges = f'"{self.pick(BADGES)}"' if rnd() < 0.03 else ""
            parts.append(f'"{site}":{{"site":"{site}","title":{labels[lang]},"badges":[{badges}]}}')
        if rnd() < 0.2:
            site = self.pick(EXTRA_SITES)
            parts.append(f'"{site}":{{"site":"{site}","title":{labels[langs[0]]},"badges":[]}}')
        return f"{{{','.join(parts)}}}"

    # --- entities -------------------------------------------------------------------------------
    def richness(self) -> float:
        """Per-entity size factor: lognormal with a long tail, as real line sizes are."""
        r = math.exp(self.rng.gauss(0.0, 0.8))
        if self.rnd() < 0.002:
            r *= 15  # the few huge entities (countries, famous people)
        return min(r, 60.0)

    def revision(self) -> int:
        return 1_000_000_000 + int(self.rnd() * 10**9)

    def item(self, q: int, *, is_class: bool) -> str:
        rnd = self.rnd
        ident = f"Q{q}"
        richness = self.richness()
        terms, langs, labels = self.terms(self.name(), richness)
        groups = []
        if is_class:
            groups.append(self.edge_group(ident, "P31", [CLASS_OF_CLASSES], richness))
            parents = list(self.layout.class_parents[q])
            if parents:
                extra = ""
                if rnd() < 0.15:  # a deprecated extra parent: in the dump, never truthy
                    extra = self.statement(ident, "P279", "deprecated", richness)
                    self.stats.features["deprecated_p279"] += 1
                groups.append(self.edge_group(ident, "P279", parents, richness, extra))
            self.stats.classes += 1
        else:
            groups.append(self.claim_group(ident, "P31", 1 if rnd() < 0.85 else 2, richness))
        n_props = max(1, int(2.6 * richness + self.rng.expovariate(1 / 2)))
        for prop in dict.fromkeys(self.rng.choices(ITEM_PIDS, cum_weights=ITEM_CUM_WEIGHTS, k=n_props)):
            count = 1 if rnd() < 0.75 else min(300, 2 + int(richness / (1.0 - rnd()) ** 0.6))
            groups.append(self.claim_group(ident, prop, count, richness))
        self.stats.items += 1
        return (
            f'{{"type":"item","id":"{ident}",{terms},"claims":{{{",".join(groups)}}},'
            f'"sitelinks":{self.sitelinks(langs, labels, richness)},"lastrevid":{self.revision()}}}'
        )

    def property_entity(self, pid: str) -> str:
        richness = self.richness()
        terms, _, _ = self.terms(self.name(2).lower(), richness)
        groups = [
            self.claim_group(pid, "P31", 1, richness),
            self.claim_group(pid, "P1659", 1 + int(self.rnd() * 3), richness),
            self.claim_group(pid, "P1855", 1, richness),
        ]
        self.stats.properties += 1
        return (
            f'{{"type":"property","datatype":"{DATATYPE_OF.get(pid, "string")}","id":"{pid}",{terms},'
            f'"claims":{{{",".join(groups)}}},"lastrevid":{self.revision()}}}'
        )

    def lexeme(self, lex: int) -> str:
        rnd = self.rnd
        ident = f"L{lex}"
        lemma = WORDS[int(rnd() * 4096)]
        langs = ["en"] + (["de"] if rnd() < 0.3 else [])
        lemmas = ",".join(f'"{g}":{{"language":"{g}","value":"{lemma}"}}' for g in langs)
        forms = []
        for i in range(1, 2 + int(rnd() * 3)):
            reps = ",".join(f'"{g}":{{"language":"{g}","value":"{lemma}{"s" * (i - 1)}"}}' for g in langs)
            feature = "Q110786" if i == 1 else "Q146786"
            forms.append(
                f'{{"id":"{ident}-F{i}","representations":{{{reps}}},'
                f'"grammaticalFeatures":["{feature}"],"claims":{self.empty_map()}}}'
            )
        senses = []
        for i in range(1, 2 + int(rnd() * 2)):
            gloss = " ".join(WORDS[int(rnd() * 4096)] for _ in range(4))
            claims = self.claim_group(f"{ident}-S{i}", "P5137", 1, 1.0)
            senses.append(
                f'{{"id":"{ident}-S{i}","glosses":{{"en":{{"language":"en","value":"{gloss}"}}}},'
                f'"claims":{{{claims}}}}}'
            )
        claims = f"{{{self.claim_group(ident, 'P5830', 1, 1.0)}}}" if rnd() < 0.5 else self.empty_map()
        self.stats.lexemes += 1
        return (
            f'{{"type":"lexeme","id":"{ident}","lemmas":{{{lemmas}}},"lexicalCategory":"Q1084",'
            f'"language":"Q1860","claims":{claims},"forms":[{",".join(forms)}],'
            f'"senses":[{",".join(senses)}],"lastrevid":{self.revision()}}}'
        )

    def finish(self) -> None:
        """Count the snaks of the shared references once per use."""
        for picks, kinds in zip(self.reference_picks, self.reference_snaks, strict=True):
            if picks:
                for vtype, datatype in kinds:
                    self.stats.value_types[vtype] += picks
                    self.stats.datatypes[datatype] += picks
                    self.stats.snaktypes["value"] += picks


#: Entities rendered per block; each block has its own RNG, so blocks can be rendered in parallel
#: and the bytes do not depend on the number of processes.
BLOCK_ENTITIES = 200


def plan(layout: Layout) -> list[tuple[str, Any]]:
    """The dump's entities in file order: classes and items by id with properties interleaved,
    lexemes last (as in `latest-all.json`)."""
    qs = [("class", q) for q in layout.class_ids] + [("item", q) for q in layout.item_ids]
    every = max(1, len(qs) // max(1, len(layout.property_ids)))
    props = list(layout.property_ids)
    order: list[tuple[str, Any]] = []
    for i, entry in enumerate(qs):
        if i % every == 0 and props:
            order.append(("property", props.pop(0)))
        order.append(entry)
    order += [("property", pid) for pid in props]
    order += [("lexeme", lex) for lex in layout.lexeme_ids]
    return order


@lru_cache(maxsize=2)
def _shared(seed: int, entities: int) -> tuple[Layout, tuple[list[str], list[list[tuple[str, str]]]]]:
    """The layout and the reference pool: the same in every process (cached per process)."""
    layout = make_layout(random.Random(seed), entities)
    pool = Gen(random.Random(f"{seed}:references"), layout, GenStats())
    return layout, (pool.references, pool.reference_snaks)


def render_block(task: tuple[int, int, int, list[tuple[str, Any]]]) -> tuple[list[str], GenStats]:
    """Render one block of the plan: `(seed, entities, block index, entries)` -> lines and stats."""
    seed, entities, index, entries = task
    layout, references = _shared(seed, entities)
    stats = GenStats()
    gen = Gen(random.Random(f"{seed}:{index}"), layout, stats, references)
    lines = []
    for kind, ident in entries:
        if kind == "property":
            lines.append(gen.property_entity(ident))
        elif kind == "lexeme":
            lines.append(gen.lexeme(ident))
        else:
            lines.append(gen.item(ident, is_class=kind == "class"))
    gen.finish()
    return lines, stats


def iter_lines(entities: int, seed: int, stats: GenStats | None = None, jobs: int = 1) -> Iterator[str]:
    """The dump's entity lines (JSON text, no comma) in file order, rendered by `jobs` processes."""
    stats = stats if stats is not None else GenStats()
    order = plan(_shared(seed, entities)[0])
    tasks = [
        (seed, entities, i, order[start : start + BLOCK_ENTITIES])
        for i, start in enumerate(range(0, len(order), BLOCK_ENTITIES))
    ]
    if jobs <= 1 or len(tasks) == 1:
        results: Iterator[tuple[list[str], GenStats]] = map(render_block, tasks)
        for lines, block_stats in results:
            stats.merge(block_stats)
            yield from lines
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for lines, block_stats in pool.map(render_block, tasks):
            stats.merge(block_stats)
            yield from lines


def write_dump(out: BinaryIO, entities: int, seed: int, jobs: int = 1) -> GenStats:
    """Write the whole dump to `out`; returns what it contains."""
    stats = GenStats()
    chunks: list[str] = ["[\n"]
    size = 0
    written = 2
    pending: str | None = None
    for line in iter_lines(entities, seed, stats, jobs):
        stats.entities += 1
        stats.line_bytes.append(len(line) + 2)
        if pending is not None:
            chunks.append(pending)
            chunks.append(",\n")
            size += len(pending) + 2
            if size > (8 << 20):
                out.write("".join(chunks).encode("ascii"))
                written += size
                chunks, size = [], 0
        pending = line
    if pending is not None:
        chunks.append(pending)
        chunks.append("\n")  # the last entity line has no comma
        size += len(pending) + 1
    chunks.append("]\n")
    out.write("".join(chunks).encode("ascii"))
    stats.json_bytes = written + size + 2
    return stats


def open_output(path: Path, *, gzip: bool) -> BinaryIO:
    """A writer for `path`; gzip output (isal, level 2) has no timestamp or name, so it is reproducible."""
    raw = open(path, "wb")  # noqa: SIM115 - closed by `close_output`
    if not gzip:
        return raw
    from isal import igzip

    return cast(BinaryIO, igzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=2, mtime=0))  # type: ignore[no-untyped-call]


def close_output(out: BinaryIO) -> None:
    """Close a writer from `open_output` (and the file under a gzip wrapper)."""
    raw = getattr(out, "fileobj", None)
    out.close()
    if raw is not None:
        raw.close()


def generate(
    path: str | Path, entities: int, seed: int = 1, *, gzip: bool = False, jobs: int = 1
) -> GenStats:
    """Write a synthetic dump of `entities` entities to `path` (gzip-compressed if `gzip`), rendered
    by `jobs` processes (the bytes do not depend on `jobs`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.partial")  # concurrent runs do not collide
    out = open_output(tmp, gzip=gzip)
    try:
        stats = write_dump(out, entities, seed, jobs)
    finally:
        close_output(out)
    tmp.replace(path)
    return stats


def gzip_file(src: str | Path, dst: str | Path) -> int:
    """Compress `src` to `dst` reproducibly (isal level 2, mtime 0); returns the compressed size."""
    dst = Path(dst)
    tmp = dst.with_name(f"{dst.name}.{os.getpid()}.partial")
    out = open_output(tmp, gzip=True)
    try:
        with open(src, "rb") as f:
            while block := f.read(16 << 20):
                out.write(block)
    finally:
        close_output(out)
    tmp.replace(dst)
    return dst.stat().st_size


def main(argv: list[str] | None = None) -> int:
    """CLI: write a dump and print a summary of its content as JSON on stderr."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entities", type=int, default=20000, help="entity lines to write (default 20000)")
    parser.add_argument("--out", required=True, help="output path (e.g. wd.json or wd.json.gz)")
    parser.add_argument("--gzip", action="store_true", help="gzip-compress the output")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: all CPUs)")
    args = parser.parse_args(argv)
    if args.entities < 1:
        parser.error("--entities must be at least 1")
    stats = generate(args.out, args.entities, args.seed, gzip=args.gzip, jobs=args.jobs)
    print(json.dumps(stats.to_json(), indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
