"""The reference scans `bench/run.py` times against `entbench build wikidata`, one per process.

    python bench/scanners.py KIND DUMP [--languages en,zh] [--sites enwiki,zhwiki]

prints one JSON object: `seconds` (the scan itself, after imports), `entities`, `bytes` read
from disk, and row counts of the work done, so the harness can check that every scan did the
same work as entbench (same truthy claims, aliases, sitelinks).

KIND is one of:

* `decompress`: isal decompression only (the floor under any `.gz` scan);
* `limit`: the one-core limit (issue 2, performance.md): isal decompression (or plain reads) and
  entbench's own typed partial decoder (`EntityDecoder`) on every line, building no rows;
* `native`: isal decompression (or plain reads) and entbench's native scanner (`_wdscan`) on
  every line, into its column buffers, building no tables (how far the compiled parse is below
  the limit: entbench's stage is this plus Arrow tables, the shuffle and Parquet);
* `stdlib`: what a stdlib-only script does: `gzip` + `json.loads` per line, truthy selection
  (spec §1) and value extraction in Python dicts;
* `qwikidata`: qwikidata's `WikidataJsonDump` iterator + `WikidataItem`/`WikidataProperty`/
  `WikidataLexeme` and `get_truthy_claim_groups`, reading the same fields.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, cast

BLOCK_BYTES = 16 << 20


@dataclass
class Work:
    """What a scan produced, counted the same way as entbench's tables."""

    entities: int = 0
    aliases: int = 0
    truthy_claims: int = 0
    qualifiers: int = 0
    sitelinks: int = 0
    errors: int = 0
    extra: dict[str, int] = field(default_factory=dict)


def open_dump(path: str) -> BinaryIO:
    """The decompressed bytes of `path` (isal for `.gz`, as entbench does)."""
    if path.endswith(".gz"):
        from isal import igzip

        return cast(BinaryIO, igzip.open(path, "rb"))  # type: ignore[no-untyped-call]
    return open(path, "rb")


def iter_entity_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Entity lines without the trailing comma, read in large blocks and split in C."""
    carry = b""
    while True:
        block = stream.read(BLOCK_BYTES)
        if not block:
            break
        lines = (carry + block).split(b"\n")
        carry = lines.pop()
        for line in lines:
            if len(line) > 2:  # skips "[", "]" and empty lines
                yield line[:-1] if line[-1] == 44 else line  # 44 = ","
    if len(carry) > 2:
        yield carry[:-1] if carry[-1] == 44 else carry


def scan_decompress(path: str) -> Work:
    """Decompress (or read) the whole file; count newlines so the bytes are touched."""
    work = Work()
    newlines = 0
    with open_dump(path) as stream:
        while block := stream.read(BLOCK_BYTES):
            newlines += block.count(b"\n")
    work.extra["newlines"] = newlines
    return work


def scan_limit(path: str, languages: tuple[str, ...], sites: tuple[str, ...]) -> Work:
    """isal + entbench's typed partial decoder on every line; no rows are built."""
    from entbench.readers.wikidata_entities import DecodeConfig, EntityDecoder, LineRejected

    decode = EntityDecoder(DecodeConfig(languages=languages, sites=sites)).decode
    work = Work()
    with open_dump(path) as stream:
        for line in iter_entity_lines(stream):
            try:
                work.entities += len(decode(line).entities)
            except LineRejected:
                work.errors += 1
    return work


def scan_native(path: str, languages: tuple[str, ...], sites: tuple[str, ...]) -> Work:
    """isal + the native scanner on line-aligned blocks; one scanner per block, columns dropped."""
    from entbench.builders.wikidata.native import NativeRows

    work = Work()
    fallbacks = 0
    carry = b""
    with open_dump(path) as stream:
        while True:
            data = stream.read(BLOCK_BYTES)
            block = carry + data
            cut = block.rfind(b"\n") + 1 if data else len(block)
            if not block:
                break
            rows = NativeRows(languages, sites, 1)
            _lines, _opens, _closes, fallback = rows.scan(block, 0, 0, cut)
            fallbacks += len(fallback)
            columns = rows.scanners[0].columns()  # one shard: one scanner
            work.entities += rows.entity_count
            work.truthy_claims += columns["c.ent"][1]
            work.qualifiers += columns["q.property"][1]
            work.aliases += columns["a.ent"][1]
            work.sitelinks += columns["s.ent"][1]
            carry = block[cut:]
            if not data:
                break
    work.errors = fallbacks  # lines left to the reference decoder (none in the synthetic dump)
    return work


def _truthy(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spec §1: the preferred statements if any, else the normal ones (never deprecated)."""
    preferred = [s for s in statements if s.get("rank") == "preferred"]
    return preferred or [s for s in statements if s.get("rank") == "normal"]


def _snak_value(snak: dict[str, Any]) -> Any:
    datavalue = snak.get("datavalue")
    if datavalue is None:
        return None
    value = datavalue.get("value")
    if datavalue.get("type") == "wikibase-entityid" and isinstance(value, dict):
        return value.get("id") or f"Q{value.get('numeric-id')}"
    return value


def scan_stdlib(
    path: str, languages: tuple[str, ...], sites: tuple[str, ...], max_entities: int | None = None
) -> Work:
    """stdlib `gzip` + `json.loads` per line, truthy selection and value extraction on dicts."""
    import gzip

    work = Work()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as stream:
        for raw in stream:
            line = raw.rstrip(b",\n")
            if len(line) < 3:
                continue
            if work.entities == max_entities:
                break
            entity = json.loads(line)
            work.entities += 1
            for key in ("labels", "descriptions"):
                terms = entity.get(key) or {}
                _ = [terms[g]["value"] for g in languages if g in terms]
            aliases = entity.get("aliases") or {}
            for g in languages:
                work.aliases += len([a["value"] for a in aliases.get(g, ())])
            claims = entity.get("claims") or {}
            for statements in claims.values():
                for st in _truthy(statements):
                    work.truthy_claims += 1
                    _snak_value(st["mainsnak"])
                    for qualifier_snaks in (st.get("qualifiers") or {}).values():
                        for q in qualifier_snaks:
                            work.qualifiers += 1
                            _snak_value(q)
            links = entity.get("sitelinks") or {}
            work.sitelinks += len([links[s]["title"] for s in sites if s in links])
    return work


def scan_qwikidata(
    path: str, languages: tuple[str, ...], sites: tuple[str, ...], max_entities: int | None = None
) -> Work:
    """qwikidata's dump iterator and entity classes; entities it cannot load are counted as errors."""
    from qwikidata.entity import WikidataItem, WikidataLexeme, WikidataProperty
    from qwikidata.json_dump import WikidataJsonDump

    classes: dict[str, Any] = {"item": WikidataItem, "property": WikidataProperty, "lexeme": WikidataLexeme}
    work = Work()
    for entity_dict in WikidataJsonDump(path):
        if work.entities == max_entities:
            break
        work.entities += 1
        try:
            entity = classes[entity_dict["type"]](entity_dict)
            if entity_dict["type"] != "lexeme":
                for g in languages:
                    entity.get_label(g)
                    entity.get_description(g)
                    work.aliases += len(entity.get_aliases(g))
            for group in entity.get_truthy_claim_groups().values():
                for claim in group:
                    work.truthy_claims += 1
                    _ = claim.mainsnak.datavalue.value if claim.mainsnak.datavalue is not None else None
                    for qualifiers in claim.qualifiers.values():
                        for q in qualifiers:
                            work.qualifiers += 1
                            _ = q.snak.datavalue.value if q.snak.datavalue is not None else None
            if entity_dict["type"] == "item":
                for s in sites:
                    work.sitelinks += s in entity.get_sitelinks(s)  # a prefix filter: keep exact keys
        except (KeyError, ValueError, TypeError):
            work.errors += 1
    return work


def main(argv: list[str] | None = None) -> int:
    """Run one scan and print its JSON result."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["decompress", "limit", "native", "stdlib", "qwikidata"])
    parser.add_argument("dump")
    parser.add_argument("--languages", default="en,zh")
    parser.add_argument("--sites", default="enwiki,zhwiki")
    parser.add_argument(
        "--max-entities", type=int, default=None, help="stop after this many entities (stdlib, qwikidata)"
    )
    args = parser.parse_args(argv)
    languages = tuple(g for g in args.languages.split(",") if g)
    sites = tuple(s for s in args.sites.split(",") if s)
    if args.kind == "limit":
        # Import outside the timed region, as `entbench` has its imports done before its stage timer.
        import entbench.readers.wikidata_entities
    elif args.kind == "native":
        import entbench.builders.wikidata.native  # noqa: F401
    elif args.kind == "qwikidata":
        import qwikidata.entity  # noqa: F401
    start = time.perf_counter()
    if args.kind == "decompress":
        work = scan_decompress(args.dump)
    elif args.kind == "limit":
        work = scan_limit(args.dump, languages, sites)
    elif args.kind == "native":
        work = scan_native(args.dump, languages, sites)
    elif args.kind == "stdlib":
        work = scan_stdlib(args.dump, languages, sites, args.max_entities)
    else:
        work = scan_qwikidata(args.dump, languages, sites, args.max_entities)
    seconds = time.perf_counter() - start
    result = {"kind": args.kind, "seconds": round(seconds, 4), **work.__dict__}
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
