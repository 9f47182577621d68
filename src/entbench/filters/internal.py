"""The Wikimedia-internal entity filter (Hansel §3.1 "Entity filtering", appendix D; spec §2.1).

"We remove all instances of Wikimedia disambiguation pages, templates, categories, modules, list
pages, project pages, Wikidata properties, as well as their subclasses, as detailed in Appendix D.
For the scope of this paper, we further constrain to entities with a Chinese Wikipedia page."
(Hansel §3.1)

Spec §2.1 turns this into rules, each with a reason an entity is dropped for:

* `not_item`: properties (P…), lexemes and MediaInfo are never KB entities;
* `instance_of_internal` / `subclass_of_internal`: a truthy P31 (resp. only a P279) value is a
  filter class or, with `transitive`, a transitive P279-subclass of one;
* `no_site`: no sitelink to the configured site (`zhwiki` by default).

Three presets name the class sets and behaviours:

* `hansel` (default): the 14 QIDs of mGENRE's `NOPAGE` list plus Q4167410 (Wikimedia
  disambiguation page) and Q13406463 (Wikimedia list article), which the Hansel text names;
  transitive; sitelink to zhwiki, looked up in the new dump for both dumps (spec §2.2).
* `mgenre`: mGENRE's rules (`facebookresearch/GENRE:scripts_mgenre/preprocess_wikidata.py`,
  step `compress`): an item is skipped if a P31 or P279 statement's item value is in `NOPAGE`
  (direct values only, no closure; Q4167410 is commented out there), and kept only if it has a
  sitelink whose site key ends in `wiki`, each dump judged on its own sitelinks.
* `table7`: the `hansel` rules with the classes of the paper's Table 7 ("WikiData identifiers used
  for filtering out Wikimedia-internal entities", appendix D) that could be checked against real
  Wikidata labels (`TABLE7_CLASSES`; the others are listed in `TABLE7_UNVERIFIED`).

mGENRE looks at statements of every rank (any P31/P279 statement whose main snak has a
datavalue). `ranks=all` (the `mgenre` preset) reads the truthy P31/P279 statements together with
the outranked ones the scan keeps in `outranked_type_claims` (deprecated, or normal where a
preferred one exists); `ranks=truthy` (the `hansel` preset) reads truthy statements only (spec §1).

Functions return SQL over relations the caller names; nothing here reads files.
"""

from __future__ import annotations

import re
from enum import StrEnum

from entbench.typesys.closure import INSTANCE_OF, SUBCLASS_OF
from entbench.typesys.qids import qid_number_sql, sql_string

#: mGENRE's NOPAGE list, in its order (`scripts_mgenre/preprocess_wikidata.py`). English labels
#: are noted where a real fixture carries them (KGTK labels slice, entity-metadata sample).
MGENRE_NOPAGE: tuple[str, ...] = (
    "Q4167836",  # Wikimedia category
    "Q24046192",
    "Q20010800",
    "Q11266439",
    "Q11753321",  # Wikimedia navigational template
    "Q19842659",
    "Q21528878",
    "Q17362920",  # Wikimedia duplicated page
    "Q14204246",  # Wikimedia project page
    "Q21025364",
    "Q17442446",  # Wikimedia internal item
    "Q26267864",
    "Q4663903",
    "Q15184295",
)
#: The two classes the Hansel text names beyond mGENRE's list.
HANSEL_EXTRA: tuple[str, ...] = (
    "Q4167410",  # Wikimedia disambiguation page
    "Q13406463",  # Wikimedia list article
)
HANSEL_CLASSES: tuple[str, ...] = MGENRE_NOPAGE + HANSEL_EXTRA

#: Hansel Table 7, the QIDs whose English Wikidata label could be checked, with the label and where
#: it was read. The paper's only text here is a PDF extraction in which Table 7 runs into Table 6
#: (its group names "Categories", "Modules", "Wikimedia project page", "Subclasses of above" are
#: legible, its first group's name is not), so a QID is used only when a real label confirms it
#: names a Wikimedia-internal class. "KGTK labels" is the English label file of the KGTK "Arnold"
#: Wikidata graph (usc-isi-i2/kgtk-notebooks `datasets/arnold/labels.en.tsv.gz`); the lines used
#: are in `fixtures/wikidata/kgtk-arnold.labels.en.table7.tsv`. Q15184295 is in none of the label
#: files at hand: its label is from the maintainers' knowledge of Wikidata (and it is in mGENRE's
#: NOPAGE list, so the `hansel` preset filters it too).
TABLE7_CLASSES: tuple[str, ...] = (
    "Q4167836",  # Wikimedia category (KGTK labels)
    "Q11266439",  # Wikimedia template (KGTK labels)
    "Q11753321",  # Wikimedia navigational template (KGTK labels; entitybase-backend metadata)
    "Q13406463",  # Wikimedia list article (KGTK labels)
    "Q14204246",  # Wikimedia project page (KGTK labels)
    "Q15184295",  # Wikimedia module (knowledge only, see above)
    "Q15647814",  # Wikimedia administration category (KGTK labels)
    "Q19887878",  # Wikimedia infobox template (KGTK labels)
    "Q21528878",  # Wikimedia redirect page (KGTK labels)
    "Q30432511",  # metacategory in Wikimedia projects (KGTK labels)
    "Q4663903",  # Wikimedia portal (KGTK labels)
    "Q59542487",  # Wikimedia set category (KGTK labels)
    "Q74980542",  # Wikidata-driven Wikimedia template (KGTK labels)
)
#: QIDs legible in the extraction of Table 7 that no label at hand confirms: left out of `table7`
#: (a misread digit would name an unrelated class and, transitively, remove its instances).
#: One more cell of the table is not legible at all.
TABLE7_UNVERIFIED: tuple[str, ...] = (
    "Q105528595",
    "Q15671253",
    "Q20769160",
    "Q24731821",
    "Q26142649",
    "Q26267864",
    "Q36330215",
    "Q4657797",
    "Q48552277",
    "Q56876519",
    "Q95691391",
    "Q97303108",
    "Q105653689",
    "Q1474116",
    "Q15407973",
    "Q20769287",
    "Q24574745",
    "Q54662266",
    "Q56428020",
    "Q15145755",
    "Q18711811",
    "Q37237020",
    "Q59259626",
    "Q97011660",
    "Q25051296",
    "Q22247630",
    "Q30415057",
    "Q60715851",
)

#: mGENRE keeps an item if any sitelink key ends in "wiki" (`k.endswith("wiki")`).
ANY_WIKI = "*wiki"
SITE_FROM = ("new", "own")
#: Which P31/P279 statements the filter reads: the truthy ones, or those of every rank.
RANKS = ("truthy", "all")

#: Parameter values of the two presets (field names of the internal_filter parameters).
PRESETS: dict[str, dict[str, object]] = {
    "hansel": {
        "classes": HANSEL_CLASSES,
        "transitive": True,
        "site": "zhwiki",
        "site_from": "new",
        "ranks": "truthy",
    },
    "mgenre": {
        "classes": MGENRE_NOPAGE,
        "transitive": False,
        "site": ANY_WIKI,
        "site_from": "own",
        "ranks": "all",
    },
    "table7": {
        "classes": TABLE7_CLASSES,
        "transitive": True,
        "site": "zhwiki",
        "site_from": "new",
        "ranks": "truthy",
    },
}

SITE_PATTERN = re.compile(r"[A-Za-z0-9_*?-]*")


class Reason(StrEnum):
    """Why an entity is not in the KB (the first rule it fails, in this order)."""

    NOT_ITEM = "not_item"
    INSTANCE_OF_INTERNAL = "instance_of_internal"
    SUBCLASS_OF_INTERNAL = "subclass_of_internal"
    NO_SITE = "no_site"


def check_site(site: str) -> str:
    """A site id (`zhwiki`), a glob over site ids (`*wiki`), or '' for no site constraint."""
    if not SITE_PATTERN.fullmatch(site):
        raise ValueError(f"site must be a site id such as zhwiki or a glob such as *wiki, got {site!r}")
    return site


def site_is_glob(site: str) -> bool:
    """Whether the site constraint is a pattern (it then needs every sitelink of the dump)."""
    return "*" in site or "?" in site


def site_condition_sql(site: str, column: str = "site") -> str:
    """A SQL predicate on a sitelink's site id."""
    check_site(site)
    if site_is_glob(site):
        return f"{column} GLOB {sql_string(site)}"
    return f"{column} = {sql_string(site)}"


def site_ok_sql(sitelinks: str, site: str) -> str:
    """`(qid)` of the entities with a sitelink satisfying the site constraint."""
    return f"SELECT DISTINCT id AS qid FROM {sitelinks} WHERE {site_condition_sql(site)}"


def internal_hits_sql(claims: str, closure: str) -> str:
    """`(qid, property, filter_class)`: a truthy P31/P279 value of `qid` is in the closure of
    `filter_class` (`closure` has `(root, class)`; see `typesys.closure`)."""
    props = f"({sql_string(INSTANCE_OF)}, {sql_string(SUBCLASS_OF)})"
    return (
        "SELECT DISTINCT c.subject AS qid, c.property, k.root AS filter_class "
        f'FROM {claims} AS c JOIN {closure} AS k ON k."class" = c.item '
        f"WHERE c.property IN {props} AND c.item IS NOT NULL"
    )


def sited_entities_sql(entities: str, site_ok: str) -> str:
    """`(id, type, has_site)` of every entity of `entities`: whether it passes the site constraint
    (`site_ok`, as `site_ok_sql` gives it). `decisions_sql(..., sited=True)` reads it: a join of its
    own, so that no query probes the site hash table and the hits' together (DuckDB keeps both
    whole then, and a memory cap stops holding: see `engine.duck`)."""
    return (
        "SELECT e.id, e.type, s.qid IS NOT NULL AS has_site "
        f"FROM {entities} AS e LEFT JOIN {site_ok} AS s ON s.qid = e.id"
    )


def decisions_sql(entities: str, hits: str, site_ok: str | None, *, sited: bool = False) -> str:
    """One row per entity: `(qid, reason, classes)`.

    `reason` is NULL for a kept entity, else the first failed rule (see `Reason`); `classes`
    lists the filter classes an internal entity reaches, in QID-number order (NULL otherwise).
    `site_ok` is a relation of `(qid)` passing the site constraint, or None for no constraint; with
    `sited`, `entities` is `sited_entities_sql`'s relation, which says it per entity (`site_ok`
    unused).
    """
    site_join = f"LEFT JOIN {site_ok} AS s ON s.qid = e.id" if site_ok is not None and not sited else ""
    failed = "NOT e.has_site" if sited else "s.qid IS NULL"
    no_site = f"WHEN {failed} THEN {sql_string(Reason.NO_SITE)}" if site_ok is not None or sited else ""
    instance_of = sql_string(INSTANCE_OF)
    return f"""
WITH hit AS (
    SELECT qid,
           bool_or(via_p31) AS via_p31,
           list(filter_class ORDER BY {qid_number_sql("filter_class")}) AS classes
    FROM (
        SELECT qid, filter_class, bool_or(property = {instance_of}) AS via_p31
        FROM {hits} GROUP BY qid, filter_class
    ) GROUP BY qid
)
SELECT e.id AS qid,
       CASE WHEN e.type <> 'item' THEN {sql_string(Reason.NOT_ITEM)}
            WHEN h.qid IS NOT NULL AND h.via_p31 THEN {sql_string(Reason.INSTANCE_OF_INTERNAL)}
            WHEN h.qid IS NOT NULL THEN {sql_string(Reason.SUBCLASS_OF_INTERNAL)}
            {no_site}
       END AS reason,
       CASE WHEN e.type = 'item' THEN h.classes END AS classes
FROM {entities} AS e
LEFT JOIN hit AS h ON h.qid = e.id
{site_join}
"""
