"""Synthetic old/new Wikidata dump pair for the knowledge-base benchmark (issue 3).

    python bench/kb/gen_kb.py OUT_DIR [--items 340000] [--classes 200000] [--seed 3]

Writes `OUT_DIR/old.json`, `OUT_DIR/new.json` (uncompressed, `latest-all.json` layout: `[`, one
entity per line ending in `,`, `]`) and `OUT_DIR/info.json` with what the pair contains:

* a P279 DAG over `classes` synthetic classes in `DEPTH` levels below Q35120 ("entity"), with the
  real QIDs of the four coarse-type roots and the 16 Wikimedia-internal filter classes placed
  near the top; every class has a parent on the level above (so depth >= DEPTH - 1), often a
  second one anywhere above, and `CYCLES` back edges make P279 cycles;
* `items` items with P31 (1–2 classes) and Zipf-distributed item-valued claims (country,
  occupation, citizenship, location, part of, sex), a date and an external id; a few preferred
  and deprecated statements; a share are instances of Wikimedia-internal classes; sitelinks to
  enwiki/zhwiki for a share;
* the new dump drops 0.5% of the old items, turns 0.5% into redirect stubs, changes the P31 of
  2%, and adds 5% new items.

Deterministic for a given seed (random.Random; no time, no hash()). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from bisect import bisect_left
from dataclasses import asdict, dataclass, field
from itertools import accumulate
from pathlib import Path

GENERATOR_VERSION = 1
DEPTH = 20  # levels of synthetic classes below the top
CYCLES = 60
ROOTS = ("Q215627", "Q618123", "Q43229", "Q1656682")  # PER LOC ORG EVENT (Hansel Table 2)
INTERNAL_TOP = "Q17442446"  # Wikimedia internal item: parent of the other filter classes here
FILTER_CLASSES = (
    "Q4167836", "Q24046192", "Q20010800", "Q11266439", "Q11753321", "Q19842659", "Q21528878",
    "Q17362920", "Q14204246", "Q21025364", "Q26267864", "Q4663903", "Q15184295", "Q4167410",
    "Q13406463",
)  # fmt: skip
CLASS_BASE = 100_000_000  # synthetic class QIDs: Q100000000… (clear of the real QIDs used)
ITEM_BASE = 50_000_000  # item QIDs: Q50000000…
#: (property, pool size, probability an item has it, Zipf exponent) of the item-valued claims.
ITEM_PROPERTIES = (
    ("P17", 200, 0.7, 1.2),  # country
    ("P21", 3, 0.4, 2.0),  # sex or gender
    ("P106", 3_000, 0.4, 1.1),  # occupation
    ("P27", 200, 0.4, 1.2),  # country of citizenship
    ("P131", 30_000, 0.5, 1.0),  # located in the administrative territorial entity
    ("P361", 50_000, 0.2, 1.0),  # part of
)
POOL_BASE = {"P17": 60_000_000, "P21": 61_000_000, "P106": 62_000_000, "P27": 60_000_000}
POOL_BASE |= {"P131": 63_000_000, "P361": 64_000_000}


@dataclass
class Info:
    """What was generated (written to info.json; the runner checks the issue's minimums)."""

    generator_version: int = GENERATOR_VERSION
    seed: int = 0
    classes: int = 0
    p279_edges: int = 0
    depth: int = 0
    cycle_edges: int = 0
    items_old: int = 0
    items_new: int = 0
    claims_old: int = 0
    claims_new: int = 0
    deleted: int = 0
    redirected: int = 0
    p31_changed: int = 0
    added: int = 0
    bytes: dict[str, int] = field(default_factory=dict)


def item_statement(sid: str, prop: str, qid: str, rank: str = "normal") -> str:
    """One statement with an item value, in the dump's JSON form."""
    return (
        f'{{"mainsnak":{{"snaktype":"value","property":"{prop}","datavalue":{{"value":'
        f'{{"entity-type":"item","numeric-id":{qid[1:]},"id":"{qid}"}},"type":"wikibase-entityid"}},'
        f'"datatype":"wikibase-item"}},"type":"statement","id":"{sid}","rank":"{rank}"}}'
    )


def time_statement(sid: str, year: int) -> str:
    """A P569 (date of birth) statement, day precision."""
    return (
        f'{{"mainsnak":{{"snaktype":"value","property":"P569","datavalue":{{"value":{{"time":'
        f'"+{year:04d}-01-01T00:00:00Z","timezone":0,"before":0,"after":0,"precision":11,'
        f'"calendarmodel":"http://www.wikidata.org/entity/Q1985727"}},"type":"time"}},'
        f'"datatype":"time"}},"type":"statement","id":"{sid}","rank":"normal"}}'
    )


def string_statement(sid: str, value: str) -> str:
    """A P214 (VIAF ID) external-id statement."""
    return (
        f'{{"mainsnak":{{"snaktype":"value","property":"P214","datavalue":{{"value":"{value}",'
        f'"type":"string"}},"datatype":"external-id"}},"type":"statement","id":"{sid}","rank":"normal"}}'
    )


def entity_line(qid: str, label: str, claims: dict[str, list[str]], sites: tuple[str, ...]) -> str:
    """A full item line (without the trailing comma)."""
    labels = json.dumps(
        {"en": {"language": "en", "value": label}, "zh": {"language": "zh", "value": f"{label}（中）"}},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    claim_text = ",".join(f'"{p}":[{",".join(sts)}]' for p, sts in claims.items())
    links = ",".join(f'"{s}":{{"site":"{s}","title":"{label} ({s})","badges":[]}}' for s in sites)
    return (
        f'{{"type":"item","id":"{qid}","labels":{labels},"descriptions":{{}},"aliases":{{}},'
        f'"claims":{{{claim_text}}},"sitelinks":{{{links}}}}}'
    )


def zipf_sampler(size: int, exponent: float) -> tuple[list[int], list[float]]:
    """Population and cumulative weights of a Zipf law over `size` values."""
    weights = [1.0 / (rank**exponent) for rank in range(1, size + 1)]
    return list(range(size)), list(accumulate(weights))


def build_hierarchy(
    rng: random.Random, n_classes: int, info: Info
) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """P279 parents per class, the synthetic classes items are typically instances of, and the
    Wikimedia-internal classes (filter classes and their synthetic subclasses).

    Each synthetic class descends from one top class (a coarse root or one of two generic
    classes reaching no root): its first parent is on the level above in the same family, a
    second one (60%) nearly always from the same family too (2% cross links, compounding with depth).
    Wikimedia-internal classes form their own small subtree under the filter classes.
    """
    generic = [f"Q{CLASS_BASE}", f"Q{CLASS_BASE + 1}"]
    parents: dict[str, list[str]] = {"Q35120": [], INTERNAL_TOP: ["Q35120"]}
    parents.update({c: ["Q35120"] for c in (*ROOTS, *generic)})
    parents.update({c: [INTERNAL_TOP] for c in FILTER_CLASSES})
    family = {c: c for c in (*ROOTS, *generic)}
    by_family: dict[str, list[str]] = {c: [c] for c in (*ROOTS, *generic)}
    previous = [*ROOTS, *generic]
    internal = list(FILTER_CLASSES)
    per_level = max(1, n_classes // DEPTH)
    next_id = CLASS_BASE + 2
    first_chain: dict[str, str] = {}
    for depth in range(2, DEPTH + 2):
        level = []
        for _ in range(per_level):
            qid = f"Q{next_id}"
            next_id += 1
            if rng.random() < 0.002:  # a few synthetic Wikimedia-internal classes
                parents[qid] = [rng.choice(internal)]
                internal.append(qid)
                continue
            first = rng.choice(previous)
            own = [first]
            if rng.random() < 0.6:
                pool = by_family[family[first]] if rng.random() < 0.98 else by_family[rng.choice(ROOTS)]
                extra = rng.choice(pool)
                if extra != first:
                    own.append(extra)
            parents[qid] = own
            family[qid] = family[first]
            first_chain[qid] = first
            level.append(qid)
        for qid in level:
            by_family[family[qid]].append(qid)
        previous = level
        info.depth = depth
    # Cycles: an ancestor on the first-parent chain also becomes a subclass of its descendant.
    deep = [c for c in first_chain if int(c[1:]) >= CLASS_BASE + 2 + 10 * per_level]
    for _ in range(CYCLES):
        child = rng.choice(deep)
        ancestor = child
        for _ in range(rng.randint(1, 4)):
            ancestor = first_chain.get(ancestor, ancestor)
        if ancestor != child and child not in parents[ancestor]:
            parents[ancestor].append(child)
            info.cycle_edges += 1
    info.classes = len(parents)
    info.p279_edges = sum(len(p) for p in parents.values())
    return parents, list(first_chain), internal


@dataclass
class Item:
    """One generated item (claims already rendered as statement JSON)."""

    qid: str
    claims: dict[str, list[str]]
    sites: tuple[str, ...]
    statements: int

    def line(self) -> str:
        """The item's dump line."""
        return entity_line(self.qid, f"item {self.qid}", self.claims, self.sites)


class ItemMaker:
    """Item `i` from its own RNG (seeded by the dump seed and `i`), so the old and the new dump
    can each regenerate it without holding every item in memory."""

    def __init__(self, seed: int, classes: list[str], internal: list[str]) -> None:
        self.seed = seed
        self.classes = classes
        self.internal = internal
        self.samplers = {p: zipf_sampler(size, s) for p, size, _, s in ITEM_PROPERTIES}

    def item(self, i: int) -> Item:
        """The `i`-th item."""
        rng = random.Random(f"{self.seed}-item-{i}")
        qid = f"Q{ITEM_BASE + i}"
        if rng.random() < 0.03:
            p31 = [rng.choice(self.internal)]
        else:
            p31 = rng.sample(self.classes, 1 + (rng.random() < 0.3))
        claims = {"P31": [item_statement(f"{qid}$P31-{j}", "P31", c) for j, c in enumerate(p31)]}
        count = len(p31)
        for prop, _size, prob, _s in ITEM_PROPERTIES:
            if rng.random() >= prob:
                continue
            population, cum = self.samplers[prop]
            k = 1 + (rng.random() < 0.25)
            values = sorted({population[bisect_left(cum, rng.random() * cum[-1])] for _ in range(k)})
            ranks = ["normal"] * len(values)
            if len(values) > 1 and rng.random() < 0.2:
                ranks[0] = rng.choice(("preferred", "deprecated"))
            claims[prop] = [
                item_statement(f"{qid}${prop}-{j}", prop, f"Q{POOL_BASE[prop] + v}", rank)
                for j, (v, rank) in enumerate(zip(values, ranks, strict=True))
            ]
            count += len(values)
        if rng.random() < 0.4:
            claims["P569"] = [time_statement(f"{qid}$P569", rng.randint(1800, 2005))]
            count += 1
        if rng.random() < 0.5:
            claims["P214"] = [string_statement(f"{qid}$P214", str(rng.randint(10**6, 10**8)))]
            count += 1
        sites = tuple(s for s, p in (("enwiki", 0.8), ("zhwiki", 0.6)) if rng.random() < p)
        return Item(qid, claims, sites, count)


def class_line(qid: str, parents: list[str]) -> str:
    """A class entity: label and P279 statements, no sitelinks."""
    claims = {"P279": [item_statement(f"{qid}$P279-{j}", "P279", p) for j, p in enumerate(parents)]}
    return entity_line(qid, f"class {qid}", claims if parents else {}, ())


class DumpWriter:
    """Writes the array framing around entity lines as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.handle.write("[\n")
        self.lines = 0

    def write(self, line: str) -> None:
        """Append one entity line."""
        self.handle.write(line if not self.lines else ",\n" + line)
        self.lines += 1

    def close(self) -> int:
        """Close the array; returns the file size."""
        self.handle.write("\n]\n")
        self.handle.close()
        return self.path.stat().st_size


def generate(out: Path, *, items: int = 340_000, classes: int = 200_000, seed: int = 3) -> Info:
    """Write old.json, new.json and info.json into `out`; returns the info."""
    rng = random.Random(seed)
    info = Info(seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    parents, synthetic, internal = build_hierarchy(rng, classes, info)
    maker = ItemMaker(seed, synthetic, internal)
    class_lines = [class_line(q, p) for q, p in parents.items()]
    old, new = DumpWriter(out / "old.json"), DumpWriter(out / "new.json")
    for line in class_lines:
        old.write(line)
        new.write(line)
    info.claims_old = info.claims_new = info.p279_edges
    redirects = []
    for i in range(items):
        item = maker.item(i)
        old.write(item.line())
        info.items_old += 1
        info.claims_old += item.statements
        change = random.Random(f"{seed}-change-{i}")
        roll = change.random()
        if roll < 0.005:
            info.deleted += 1
            continue
        if roll < 0.010:
            target = f"Q{ITEM_BASE + change.randrange(items)}"
            redirects.append(f'{{"redirects":{{"from":"{item.qid}","to":"{target}"}}}}')
            info.redirected += 1
            continue
        if roll < 0.030:
            p31 = [item_statement(f"{item.qid}$P31-new", "P31", change.choice(synthetic))]
            item.statements += 1 - len(item.claims["P31"])
            item.claims = {**item.claims, "P31": p31}
            info.p31_changed += 1
        new.write(item.line())
        info.items_new += 1
        info.claims_new += item.statements
    for i in range(items, items + items // 20):
        item = maker.item(i)
        new.write(item.line())
        info.items_new += 1
        info.claims_new += item.statements
        info.added += 1
    for line in redirects:
        new.write(line)
    info.bytes = {"old.json": old.close(), "new.json": new.close()}
    (out / "info.json").write_text(json.dumps(asdict(info), indent=1) + "\n", encoding="utf-8")
    return info


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--items", type=int, default=340_000)
    parser.add_argument("--classes", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    info = generate(args.out, items=args.items, classes=args.classes, seed=args.seed)
    print(json.dumps(asdict(info), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
