"""A card's licence follows what its tables hold, and the card says why.

* **Wikipedia text** (article text, paragraphs, sentences, link anchors, titles taken from article
  text) is CC BY-SA: tables holding any of it are an adaptation, shared under CC BY-SA 4.0 with
  attribution to the Wikipedia contributors;
* **Wikidata content** (ids, labels, descriptions, claims, sitelinks) is CC0 1.0: a card whose
  tables hold nothing else is CC0;
* anything else (a raw corpus, task files) keeps its own terms, marked `other`.

A target declares what its tables hold (`Content`, registered with its card sections): a dump the
build reads is not always in the output (the Hansel zero-shot pool reads the wiki to audit itself
against the training mentions, yet holds only Wikidata content). A target without a declaration is
judged by the dumps its stages read, which errs on the side of CC BY-SA.
"""

from __future__ import annotations

from entbench.cards.build_view import SITEINFO, BuildView
from entbench.cards.model import Block, Content, Section
from entbench.cards.registry import TargetCard

CC_BY_SA = "cc-by-sa-4.0"
CC0 = "cc0-1.0"
OTHER = "other"

KIND_NAMES = {"wikipedia": "a Wikipedia dump", "wikidata": "a Wikidata dump", "other": "another input"}
CC_BY_SA_LINK = "[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)"
CC0_LINK = "[CC0 1.0](https://creativecommons.org/publicdomain/zero/1.0/)"


def source_kinds(view: BuildView) -> dict[str, str]:
    """Each source the build read, by kind: `wikipedia` (read by a Wikipedia dump scan, which keeps
    the dump's siteinfo), `wikidata` (read by a Wikidata dump scan) or `other`."""
    kinds: dict[str, str] = {}
    for stage in view.order:
        manifest = view.manifests[stage]
        if SITEINFO in manifest.get("files", {}):
            kind = "wikipedia"
        elif {"entities", "truthy_claims"} <= set(manifest["outputs"]):
            kind = "wikidata"
        else:
            kind = "other"
        for name in manifest["sources"]:
            kinds.setdefault(name, kind)
    return dict(sorted(kinds.items()))


def wikis(view: BuildView) -> list[str]:
    """Host names of the Wikipedias whose dumps the build read (`en.wikipedia.org`), from siteinfo."""
    return sorted(f"{language}.wikipedia.org" for language in view.wiki_languages())


def content_of(view: BuildView, card: TargetCard) -> Content:
    """What the target's tables hold: as declared, else judged by the kinds of dumps read."""
    if card.content is not None:
        return card.content
    kinds = source_kinds(view)

    def named(kind: str) -> str:
        names = [n for n, k in kinds.items() if k == kind]
        return ", ".join(f"`{n}`" for n in names)

    return Content(
        wikipedia=f"tables derived from the Wikipedia dump(s) {named('wikipedia')}"
        if named("wikipedia")
        else "",
        wikidata=f"content of the Wikidata dump(s) {named('wikidata')}" if named("wikidata") else "",
        other=f"content of {named('other')}" if named("other") else "",
    )


def licence_ids(content: Content) -> list[str]:
    """The Hugging Face `license` identifiers of tables holding `content`."""
    ids = [CC_BY_SA] if content.wikipedia else [CC0] if content.wikidata else []
    if content.other or not ids:
        ids.append(OTHER)
    return ids


def licence_section(view: BuildView, card: TargetCard) -> Section:
    """The licence, the reason for it (what the tables hold) and the attribution it asks for."""
    content = content_of(view, card)
    ids = licence_ids(content)
    kinds = source_kinds(view)
    blocks: list[Block] = []
    if content.wikipedia:
        hosts = wikis(view) or ["<language>.wikipedia.org"]
        blocks += [
            f"**{CC_BY_SA_LINK}**, because these tables hold Wikipedia text: {content.wikipedia}. "
            "Wikipedia's text is licensed CC BY-SA (3.0 for revisions before June 2023, 4.0 after; "
            "older text also GFDL); tables holding it are adaptations, shared under CC BY-SA 4.0 "
            "(the 3.0 licence allows a later version).",
            "**Attribution** (required): credit the Wikipedia contributors and link the source, for "
            "example “Contains text from Wikipedia ("
            + ", ".join(f"https://{h}" for h in hosts)
            + ") by the Wikipedia contributors, CC BY-SA 4.0”. The authors of each page are listed "
            f"in its history: `https://{hosts[0]}/w/index.php?title=<title>&action=history`.",
        ]
        if content.wikidata:
            blocks.append(
                f"The Wikidata content in them ({content.wikidata}) is {CC0_LINK} and asks for no "
                "attribution."
            )
    elif content.wikidata:
        blocks.append(
            f"**{CC0_LINK}**, because these tables hold only Wikidata content: {content.wikidata}. "
            "Wikidata's structured data is released under CC0 1.0; no attribution is required."
        )
        read = [n for n, k in kinds.items() if k == "wikipedia"]
        if read:
            blocks.append(
                "The build also reads the Wikipedia dump(s) "
                + ", ".join(f"`{n}`" for n in read)
                + ", but none of their text is in these tables."
            )
    if content.other:
        blocks.append(
            f"Also in these tables: {content.other}. That content keeps the terms of its source "
            "(`other` above); the bundled fixtures' sources and licences are listed in "
            "`fixtures/NOTICE` of the entbench repository."
        )
    if kinds:
        blocks.append(
            "Sources read: "
            + "; ".join(f"`{name}` ({KIND_NAMES.get(kind, kind)})" for name, kind in kinds.items())
            + f". Front matter: `license: {', '.join(ids)}`."
        )
    blocks.append("entbench itself is Apache-2.0; the licence of a built table is that of the data in it.")
    return Section("Licence", tuple(blocks))
