"""Truthy selection cross-checked against qwikidata (an independent implementation) on every real entity."""

from __future__ import annotations

import json
from typing import Any

import pytest
from qwikidata.entity import WikidataItem, WikidataLexeme, WikidataProperty

from tests.readers.test_wikidata_entities import DUMPS, PARAMS, entity_lines, rows_of

QWIKIDATA_CLASS = {"item": WikidataItem, "property": WikidataProperty, "lexeme": WikidataLexeme}


def _fill_snak_keys(snak: dict[str, Any]) -> None:
    # qwikidata insists on keys that some real documents lack (old dumps have no snak datatype,
    # newer API output has no qualifier hash); they play no part in rank selection.
    snak.setdefault("hash", "")
    snak.setdefault("datatype", "unknown")
    if snak.get("snaktype") == "value":
        snak.setdefault("datavalue", {})


def qwikidata_truthy(doc: dict[str, Any]) -> dict[str, list[str | None]]:
    """Statement ids per property that qwikidata calls truthy."""
    doc = json.loads(json.dumps(doc))
    for key in ("claims", "statements"):
        if isinstance(doc.get(key), dict):
            for statements in doc[key].values():
                for st in statements:
                    _fill_snak_keys(st["mainsnak"])
                    for snaks in (st.get("qualifiers") or {}).values():
                        for q in snaks:
                            _fill_snak_keys(q)
    if "claims" not in doc or not isinstance(doc["claims"], dict):
        doc["claims"] = doc.get("statements") if isinstance(doc.get("statements"), dict) else {}
    for key in ("labels", "descriptions", "aliases"):
        doc.setdefault(key, {})
    kind = QWIKIDATA_CLASS.get(doc.get("type", ""))
    if kind is None:  # MediaInfo and senses: qwikidata has no class; the rule is the same mixin
        doc = {**doc, "type": "item", "labels": {}, "descriptions": {}, "aliases": {}, "sitelinks": {}}
        kind = WikidataItem
    entity = kind(doc)
    groups = entity.get_truthy_claim_groups()
    return {
        prop: [claim._claim_dict.get("id") for claim in group] for prop, group in groups.items() if len(group)
    }


@pytest.mark.parametrize("name", DUMPS)
def test_truthy_claims_match_qwikidata(name: str) -> None:
    checked = 0
    for line in entity_lines(name):
        doc = json.loads(line)
        doc = next(iter(doc["entities"].values())) if "entities" in doc else doc
        ours: dict[str, list[str | None]] = {}
        for row in sorted(
            rows_of(line, params=PARAMS).rows("truthy_claims"), key=lambda r: (r["property"], r["ordinal"])
        ):
            ours.setdefault(row["property"], []).append(row["statement_id"])
        assert ours == qwikidata_truthy(doc), doc["id"]
        checked += 1
    assert checked > 20


def test_some_real_entities_exercise_preferred_and_deprecated_ranks() -> None:
    ranks: set[str] = set()
    for name in DUMPS:
        for line in entity_lines(name):
            doc = json.loads(line)
            doc = next(iter(doc["entities"].values())) if "entities" in doc else doc
            claims = doc.get("claims") or doc.get("statements") or {}
            if isinstance(claims, dict):
                ranks.update(st["rank"] for sts in claims.values() for st in sts)
    assert {"preferred", "normal", "deprecated"} <= ranks
