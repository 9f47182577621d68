"""Which wiki a Hansel build reads: its language and site, from the dump's `<siteinfo>`.

Hansel's method is language-neutral; the paper applies it to zhwiki. Every Hansel stage takes the
language and the site (the `dbname`, e.g. `enwiki`) of the wiki it reads from the scan's
`_siteinfo.json` (`<mediawiki xml:lang>` and `<dbname>`, or the scan's `language` parameter when
set), unless its own `site`/`language` parameter says otherwise. What follows from the language:

* Traditional -> Simplified conversion (Hansel §3.2) applies to a Chinese wiki only (language
  `zh` or `zh-…`): on any other wiki the `converter` parameters change nothing;
* sentence boundaries (`hansel.context`) and link trails (the scan's renderer) are the language's.

The kb's E_known/E_new are the items with a sitelink to `internal_filter.site`; a Hansel build
whose wiki is another site would link mentions to a KB of another wiki's items, so
`check_kb_site` stops it with the parameter to pass.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from entbench.engine.stage import StageContext
from entbench.errors import UserError
from entbench.filters.mentions import chinese_language
from entbench.readers.mediawiki_xml import SiteInfo


@dataclass(frozen=True)
class WikiSite:
    """The wiki a Hansel stage reads: its site id (`dbname`) and language."""

    site: str
    language: str

    @property
    def chinese(self) -> bool:
        """Whether Traditional -> Simplified conversion applies to this wiki's text."""
        return chinese_language(self.language)

    def converter(self, requested: str) -> str:
        """The conversion applied: `requested` on a Chinese wiki, `none` on any other."""
        return requested if self.chinese else "none"


def wiki_site(ctx: StageContext, wikipedia: str, *, site: str = "", language: str = "") -> WikiSite:
    """The site and language of the scan `wikipedia`, each overridden when given (non-empty); the
    site is '' when the dump names no `dbname` and none is given (`require_site`)."""
    info = SiteInfo.from_json(ctx.inputs[wikipedia].side_file("siteinfo"))
    return WikiSite(site or info.dbname, language or info.language)


def require_site(ctx: StageContext, site: WikiSite) -> str:
    """The site id, or a user error naming the stage's `site` parameter when it is unknown."""
    if not site.site:
        raise UserError(f"{ctx.stage}: the dump names no dbname; pass --param {ctx.stage}.site=SITE")
    return site.site


def check_kb_site(ctx: StageContext, kb_filter: str, site: str) -> None:
    """A user error unless the kb's site constraint (`internal_filter.site`) admits `site` (''
    when the dump names none: `hansel_title_qid` was given it, and nothing is checked)."""
    kb_site = str(ctx.inputs[kb_filter].params.get("site", ""))
    if not site or not kb_site or fnmatch.fnmatchcase(site, kb_site):
        return
    raise UserError(
        f"{ctx.stage}: the wiki is {site}, but the kb keeps the items with a {kb_site} sitelink "
        f"({kb_filter}.site={kb_site!r}), so E_known and E_new would be another wiki's; "
        f"pass --param {kb_filter}.site={site}"
    )
