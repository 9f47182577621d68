"""Namespace names `<siteinfo>` does not list and link-trail rules (spec §3).

A dump's `<siteinfo>` gives one name per namespace, but wikitext may use any of the canonical
English names (valid on every wiki), the wiki's local aliases (zhwiki accepts `分类:`, `分類:`,
`文件:`, `檔案:`, `图像:`, `Image:` …) and interwiki prefixes (`wikt:`, `de:` …), none of which are
in the dump. They are listed here, from MediaWiki's `Namespace.php`/`MessagesZh_hans.php`/
`MessagesZh_hant.php` (the interwiki prefixes in `readers.mediawiki.interwiki`), so a link's kind
never depends on which spelling an editor chose.
"""

from __future__ import annotations

#: Canonical namespace names, valid on every MediaWiki (`NamespaceInfo::$canonicalNames`) plus the
#: extension namespaces Wikipedia runs (Portal, Draft, TimedText, Module, Gadget, Topic).
CANONICAL_NAMESPACES: dict[str, int] = {
    "media": -2,
    "special": -1,
    "talk": 1,
    "user": 2,
    "user talk": 3,
    "project": 4,
    "project talk": 5,
    "file": 6,
    "file talk": 7,
    "image": 6,
    "image talk": 7,
    "mediawiki": 8,
    "mediawiki talk": 9,
    "template": 10,
    "template talk": 11,
    "help": 12,
    "help talk": 13,
    "category": 14,
    "category talk": 15,
    "portal": 100,
    "portal talk": 101,
    "draft": 118,
    "draft talk": 119,
    "timedtext": 710,
    "timedtext talk": 711,
    "module": 828,
    "module talk": 829,
    "gadget": 2300,
    "gadget talk": 2301,
    "gadget definition": 2302,
    "gadget definition talk": 2303,
    "topic": 2600,
}

#: Well-known local aliases per wiki language (the shortcuts `WP:`/`WT:` are enwiki and zhwiki
#: aliases of the project namespace). zh lists both Simplified and Traditional spellings.
LOCAL_NAMESPACE_ALIASES: dict[str, dict[str, int]] = {
    "en": {"wp": 4, "wt": 5, "project": 4, "image": 6, "image talk": 7},
    "zh": {
        "媒体": -2,
        "媒體": -2,
        "特殊": -1,
        "讨论": 1,
        "討論": 1,
        "对话": 1,
        "對話": 1,
        "用户": 2,
        "用戶": 2,
        "使用者": 2,
        "用户讨论": 3,
        "用戶討論": 3,
        "用户对话": 3,
        "用戶對話": 3,
        "使用者討論": 3,
        "维基百科": 4,
        "維基百科": 4,
        "wp": 4,
        "维基百科讨论": 5,
        "維基百科討論": 5,
        "维基百科对话": 5,
        "維基百科對話": 5,
        "wt": 5,
        "文件": 6,
        "檔案": 6,
        "档案": 6,
        "图像": 6,
        "圖像": 6,
        "图片": 6,
        "圖片": 6,
        "文件讨论": 7,
        "檔案討論": 7,
        "档案讨论": 7,
        "图像讨论": 7,
        "圖像討論": 7,
        "文件对话": 7,
        "檔案對話": 7,
        "图像对话": 7,
        "圖像對話": 7,
        "mediawiki讨论": 9,
        "mediawiki討論": 9,
        "模板": 10,
        "样板": 10,
        "樣板": 10,
        "模板讨论": 11,
        "模板討論": 11,
        "样板讨论": 11,
        "樣板討論": 11,
        "模板对话": 11,
        "模板對話": 11,
        "帮助": 12,
        "幫助": 12,
        "说明": 12,
        "說明": 12,
        "帮助讨论": 13,
        "幫助討論": 13,
        "说明讨论": 13,
        "說明討論": 13,
        "帮助对话": 13,
        "幫助對話": 13,
        "分类": 14,
        "分類": 14,
        "分类讨论": 15,
        "分類討論": 15,
        "分类对话": 15,
        "分類對話": 15,
        "主题": 100,
        "主題": 100,
        "主题讨论": 101,
        "主題討論": 101,
        "草稿": 118,
        "草稿讨论": 119,
        "草稿討論": 119,
        "模块": 828,
        "模塊": 828,
        "模組": 828,
        "模块讨论": 829,
        "模塊討論": 829,
        "模組討論": 829,
    },
}

#: Link trails (`$linkTrail` in MessagesXx.php): letters after `]]` that join the anchor.
#: Chinese has none; English (and the default) is `[a-z]+`.
LINK_TRAILS: dict[str, str | None] = {"en": "[a-z]+", "zh": None, "ja": None, "ko": None}
DEFAULT_LINK_TRAIL = "[a-z]+"


def namespace_aliases(language: str) -> dict[str, int]:
    """Canonical names plus the wiki language's well-known aliases (folded form)."""
    merged = dict(CANONICAL_NAMESPACES)
    merged.update(LOCAL_NAMESPACE_ALIASES.get(language, {}))
    return merged


def link_trail(language: str) -> str | None:
    """The link-trail pattern of a wiki language."""
    return LINK_TRAILS.get(language, DEFAULT_LINK_TRAIL)
