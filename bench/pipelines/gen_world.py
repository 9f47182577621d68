"""Generated worlds for the pipeline benchmark: a Wikipedia dump and Wikidata dumps that meet.

    python bench/pipelines/gen_world.py --language zh --mb 64 --out DIR   # a Hansel world
    python bench/pipelines/gen_world.py --language en --mb 64 --out DIR   # a WikiReading / alias world

A world is a `pages-articles-multistream.xml.bz2` with its index (`bench/wikipedia/gen_xml.py`,
with a title vocabulary that grows with the dump, ~20k titles per 64 MB, so that 4x the XML is 4x
the titles, links and items rather than the same titles linked 4x as often) and Wikidata dumps
(`latest-all.json` layout, gzip) whose items carry the dump's titles as sitelinks:

* every title an article has, a link points to or a redirect ends at gets an item (`Q50000000 + i`
  over the sorted titles) unless its seeded roll says it has none (4%, red links); its claims are
  `bench/kb/gen_kb.py`'s (P31 into a generated P279 hierarchy with Wikimedia-internal classes,
  Zipf-drawn item values, a date, an external id), its label and sitelink are the title;
* the property entities (labels, datatypes) and every value item the claims use (labels), so
  WikiReading renders answers;
* `zh`: a pair, `wikidata-old.json.gz` and `wikidata-new.json.gz`: 5% of the titled items exist in
  the new dump only (E_new), and as in `gen_kb.py` the new dump drops 0.5% of the old items,
  turns 0.5% into redirects and changes the P31 of 2%; `en`: one dump, `wikidata.json.gz`.

Everything comes from seeded `random.Random`s: a (language, size, seed) gives the same bytes
(gzip without a name or time stamp). `generate` returns the file names and what the world holds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
for _sub in ("kb", "wikipedia"):
    if str(HERE.parent / _sub) not in sys.path:
        sys.path.insert(0, str(HERE.parent / _sub))

import gen_kb  # noqa: E402
import gen_xml  # noqa: E402

WORLD_VERSION = 1
#: Titles in the vocabulary per MB of XML (gen_xml's default 20k titles at 64 MB).
TITLES_PER_MB = 20000 / 64
#: Synthetic P279 classes per titled item.
CLASSES_PER_ITEM = 0.1
NO_ITEM, NEW_ONLY = 0.04, 0.05
PROPERTIES = {
    "P31": ("wikibase-item", "instance of", "是…的实例"),
    "P279": ("wikibase-item", "subclass of", "子类"),
    "P17": ("wikibase-item", "country", "国家"),
    "P21": ("wikibase-item", "sex or gender", "性别"),
    "P106": ("wikibase-item", "occupation", "职业"),
    "P27": ("wikibase-item", "country of citizenship", "国籍"),
    "P131": ("wikibase-item", "located in the administrative territorial entity", "所在行政领土实体"),
    "P361": ("wikibase-item", "part of", "属于"),
    "P569": ("time", "date of birth", "出生日期"),
    "P214": ("external-id", "VIAF ID", "VIAF标识符"),
}
POOL_NAMES = {"P17": "country", "P21": "gender", "P106": "occupation", "P131": "place", "P361": "whole"}
SITE = {"zh": "zhwiki", "en": "enwiki"}
VALUE_ID = re.compile(r'"numeric-id":\d+,"id":"(Q\d+)"')


def entity_line(
    qid: str,
    labels: Mapping[str, str],
    claims: Mapping[str, list[str]] | None = None,
    sitelinks: Mapping[str, str] | None = None,
    *,
    kind: str = "item",
    datatype: str = "",
) -> str:
    """One entity as the dumps write it (compact JSON, non-ASCII escaped), without its comma."""
    label_json = json.dumps(
        {lang: {"language": lang, "value": value} for lang, value in labels.items()}, separators=(",", ":")
    )
    claim_text = ",".join(f'"{p}":[{",".join(sts)}]' for p, sts in (claims or {}).items())
    links = ",".join(
        f'"{site}":{{"site":"{site}","title":{json.dumps(title)},"badges":[]}}'
        for site, title in (sitelinks or {}).items()
    )
    typed = f'"datatype":"{datatype}",' if datatype else ""
    return (
        f'{{"type":"{kind}",{typed}"id":"{qid}","labels":{label_json},"descriptions":{{}},"aliases":{{}},'
        f'"claims":{{{claim_text}}},"sitelinks":{{{links}}}}}'
    )


class Dump:
    """A gzip'd `latest-all.json` being written: `[`, entity lines joined by `,\\n`, `]`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        raw = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._raw = raw
        self._gz: IO[bytes] = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0)
        self._gz.write(b"[\n")
        self.lines = 0

    def write(self, line: str) -> None:
        """Append one entity line."""
        self._gz.write((line if not self.lines else ",\n" + line).encode("ascii"))
        self.lines += 1

    def close(self) -> int:
        """Close the array and the file; returns its size."""
        self._gz.write(b"\n]\n")
        self._gz.close()
        self._raw.close()
        return self.path.stat().st_size


def world_titles(
    page_titles: Iterable[tuple[str, str | None]], anchors: Mapping[int, list[tuple[str, str]]]
) -> list[str]:
    """Titles that can have an item: articles, link targets and redirect targets, not redirects."""
    redirects = {title for title, target in page_titles if target is not None}
    titles = {title for title, target in page_titles if target is None}
    titles.update(target for _title, target in page_titles if target is not None)
    titles.update(target for links in anchors.values() for target, _anchor in links)
    return sorted(titles - redirects)


def generate(out: Path, *, language: str, mb: float, seed: int = 1) -> dict[str, Any]:
    """Write one world into `out`; returns its file names (relative to `out`) and counts."""
    out.mkdir(parents=True, exist_ok=True)
    xml = out / f"{SITE[language]}-synth-pages-articles-multistream.xml.bz2"
    summary = gen_xml.generate(
        xml, mb, seed=seed, language=language, compress="multistream", titles=round(TITLES_PER_MB * mb)
    )
    titles = world_titles(summary.pop("page_titles"), summary.pop("anchors"))  # type: ignore[arg-type]
    rng = random.Random(f"world-{seed}-{language}")
    info = gen_kb.Info(seed=seed)
    parents, synthetic, internal = gen_kb.build_hierarchy(
        rng, max(200, int(len(titles) * CLASSES_PER_ITEM)), info
    )
    maker = gen_kb.ItemMaker(seed, synthetic, internal)
    names = {"old": "wikidata-old.json.gz", "new": "wikidata-new.json.gz"}
    if language == "en":
        names = {"old": "wikidata.json.gz"}
    dumps = {key: Dump(out / name) for key, name in names.items()}
    counts: dict[str, int] = {"titles": len(titles), "classes": len(parents)}
    pool: set[str] = set()
    site = SITE[language]

    def label(text: str) -> dict[str, str]:
        return {"en": text, "zh": text} if language == "zh" else {"en": text}

    for dump in dumps.values():
        for pid, (datatype, en, zh) in PROPERTIES.items():
            dump.write(entity_line(pid, {"en": en, "zh": zh}, kind="property", datatype=datatype))
        for qid, ups in parents.items():
            claims = {
                "P279": [gen_kb.item_statement(f"{qid}$P279-{j}", "P279", p) for j, p in enumerate(ups)]
            }
            dump.write(entity_line(qid, label(f"class {qid[1:]}"), claims if ups else None))
    redirects: list[str] = []
    for i, title in enumerate(titles):
        roll = random.Random(f"{seed}-title-{i}").random()
        if roll < NO_ITEM:
            counts["titles_without_item"] = counts.get("titles_without_item", 0) + 1
            continue
        item = maker.item(i)
        for prop, statements in item.claims.items():
            if prop != "P31":  # P31 values are the hierarchy's classes
                pool.update(VALUE_ID.findall("".join(statements)))
        line = entity_line(item.qid, label(title), item.claims, {site: title})
        if "new" not in dumps:
            dumps["old"].write(line)
            counts["items"] = counts.get("items", 0) + 1
            continue
        if roll < NO_ITEM + NEW_ONLY:  # E_new: only in the newer dump
            dumps["new"].write(line)
            counts["items_new_only"] = counts.get("items_new_only", 0) + 1
            continue
        dumps["old"].write(line)
        counts["items_known"] = counts.get("items_known", 0) + 1
        change = random.Random(f"{seed}-change-{i}")
        roll = change.random()
        if roll < 0.005:
            counts["deleted"] = counts.get("deleted", 0) + 1
        elif roll < 0.010:
            target = f"Q{gen_kb.ITEM_BASE + change.randrange(len(titles))}"
            redirects.append(f'{{"redirects":{{"from":"{item.qid}","to":"{target}"}}}}')
        elif roll < 0.030:
            p31 = [gen_kb.item_statement(f"{item.qid}$P31-new", "P31", change.choice(synthetic))]
            dumps["new"].write(
                entity_line(item.qid, label(title), {**item.claims, "P31": p31}, {site: title})
            )
        else:
            dumps["new"].write(line)
    for qid in sorted(pool, key=lambda q: int(q[1:])):
        base = max((b for b in gen_kb.POOL_BASE.values() if b <= int(qid[1:])), default=0)
        prop = next(p for p, b in gen_kb.POOL_BASE.items() if b == base)
        for dump in dumps.values():
            dump.write(entity_line(qid, label(f"{POOL_NAMES.get(prop, prop)} {int(qid[1:]) - base}")))
    if "new" in dumps:
        for line in redirects:
            dumps["new"].write(line)
    counts["value_items"] = len(pool)
    sizes = {name: dumps[key].close() for key, name in names.items()}
    index = xml.with_name(xml.name[: -len(".xml.bz2")] + "-index.txt.bz2")
    return {
        "world_version": WORLD_VERSION,
        "generator": summary["generator"],
        "language": language,
        "seed": seed,
        "xml": xml.name,
        "index": index.name,
        "wikidata": names,
        "bytes": {xml.name: xml.stat().st_size, index.name: index.stat().st_size, **sizes},
        "pages": summary["pages"],
        "redirects": summary["redirects"],
        "articles": summary["articles"],
        "article_links": summary["article_links"],
        **counts,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: write one world, print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", choices=sorted(SITE), required=True)
    parser.add_argument("--mb", type=float, default=64.0, help="approximate uncompressed XML size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    print(json.dumps(generate(args.out, language=args.language, mb=args.mb, seed=args.seed), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
