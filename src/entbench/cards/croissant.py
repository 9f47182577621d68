"""`croissant.json` of a published folder: the Croissant 1.0 description of its tables
(MLCommons; https://mlcommons.org/croissant), which the Hugging Face Hub and dataset search
engines read.

One `cr:FileSet` per published table (its `data/<config>/<split>-*.parquet` glob) and one
`cr:RecordSet` reading it, with a `cr:Field` per column whose type Croissant has: text, integer,
float, boolean, or a list of those (`repeated`). Columns of nested records (a list of structs) are
left out of the record set and named in its description. Nothing in it depends on when or where it
was written: the same build publishes the same bytes.
"""

from __future__ import annotations

import re
from typing import Any

from entbench import __version__
from entbench.cards.build_view import BuildView
from entbench.cards.hub import ENTBENCH_BIBTEX
from entbench.cards.model import PublishedTable
from entbench.cards.registry import card_for

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
#: The standard Croissant 1.0 JSON-LD context (as in the format's example datasets).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
LICENCE_URLS = {
    "cc-by-sa-4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
    "cc0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
}
_LIST = re.compile(r"^(?:large_)?list<(?:item|element): (.+)>$")


def data_type(arrow_type: str) -> tuple[str, bool] | None:
    """The Croissant type of an Arrow type as a manifest writes it, and whether it is a list of
    them; None for nested records, which Croissant 1.0 fields do not flatten here."""
    listed = _LIST.match(arrow_type)
    inner = listed[1].removesuffix(" not null") if listed else arrow_type
    if inner in ("string", "large_string"):
        kind = "sc:Text"
    elif re.fullmatch(r"u?int(8|16|32|64)", inner):
        kind = "sc:Integer"
    elif inner in ("float", "double", "halffloat"):
        kind = "sc:Float"
    elif inner == "bool":
        kind = "sc:Boolean"
    else:
        return None
    return kind, listed is not None


def croissant(view: BuildView, description: str, licences: list[str]) -> dict[str, Any]:
    """The Croissant document of the tables `view.published` places (`entbench publish`)."""
    meta = card_for(view.target).hub
    distribution: list[dict[str, Any]] = []
    record_sets: list[dict[str, Any]] = []
    for (stage, table), place in view.published.items():
        files = f"files/{place.config}/{place.split}"
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": files,
                "name": files,
                "description": f"The Parquet shards of `{stage}.{table}`.",
                "encodingFormat": "application/x-parquet",
                "includes": place.glob,
            }
        )
        record_sets.append(_record_set(view, stage, table, place, files))
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"entbench-{view.target}",
        "description": description,
        "license": [LICENCE_URLS.get(licence, licence) for licence in licences],
        "version": __version__,
        "citeAs": meta.bibtex or ENTBENCH_BIBTEX,
        "keywords": ["entbench", view.target, *meta.task_ids],
        "distribution": distribution,
        "recordSet": record_sets,
    }
    return doc


def _record_set(view: BuildView, stage: str, table: str, place: PublishedTable, files: str) -> dict[str, Any]:
    record = f"{place.config}/{place.split}"
    fields: list[dict[str, Any]] = []
    left_out: list[str] = []
    for column in view.manifests[stage]["outputs"][table]["schema"]:
        typed = data_type(str(column["type"]))
        if typed is None:
            left_out.append(str(column["name"]))
            continue
        kind, repeated = typed
        field: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": f"{record}/{column['name']}",
            "name": str(column["name"]),
            "dataType": kind,
            "source": {"fileSet": {"@id": files}, "extract": {"column": str(column["name"])}},
        }
        if repeated:
            field["repeated"] = True
        fields.append(field)
    said = f"`{stage}.{table}`: {view.rows(stage, table):,} rows"
    said += f" (config `{place.config}`, split `{place.split}`)."
    if left_out:
        said += f" Nested columns not described here: {', '.join(left_out)}."
    return {"@type": "cr:RecordSet", "@id": record, "name": record, "description": said, "field": fields}
