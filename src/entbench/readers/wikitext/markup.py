"""Block-level wikitext clean-up before inline rendering (spec §3, "Plain text").

The renderer (`readers.wikitext.render`) works in two passes. This module is the first: string in,
string out, no offsets yet, so everything it removes simply disappears before link offsets are
counted. In order:

1. HTML comments (an unterminated one runs to the end, as in MediaWiki);
2. `<nowiki>` content is kept but its markup characters are escaped as numeric entities, which
   the inline pass decodes last, so it comes out literally and is never parsed;
3. formulas (`<math>`, `<chem>`, `<ce>`) become their TeX source as literal text, on one line (what
   a reader copying the formula gets: MediaWiki puts the source in the image's alt text); tags
   whose content is not prose (`<ref>`, `<gallery>`, `<pre>`, …) are dropped with their content;
   `<br>` becomes a line break; other known HTML tags lose their markers but keep their content;
4. templates, parser functions and template parameters (`{{…}}`, `{{{…}}}`), matched the way
   MediaWiki's preprocessor pairs brace runs, are removed, except the inline templates that only
   show words (`readers.wikitext.templates`: dashes, spaces, `nowrap`, `convert`, `lang-xx`, …),
   which leave the text they show; an unclosed `{{` stays literal text; a removed template between
   two letters of a spaced script leaves a space, so the words either side never join;
5. tables (`{| … |}` at the start of a line), nested, removed whole;
6. language-conversion markup `-{…}-` (zh and the other wikis with variants) is replaced by the
   text of the preferred variant, so neither the markup nor `{{noteTA}}` (a template) leaks;
7. behaviour switches (`__TOC__`, `__DISAMBIG__`, …).

Each step is a regex or a linear token scan (never a Python loop over characters).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from entbench.readers.wikitext.native import native_enabled, native_template_names, native_template_spans
from entbench.readers.wikitext.templates import MARK, is_inline, template_key, visible_wikitext

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_NOWIKI = re.compile(r"<nowiki\s*>(.*?)(?:</nowiki\s*>|\Z)", re.S | re.I)
_NOWIKI_EMPTY = re.compile(r"<nowiki\s*/>", re.I)
_NOWIKI_ESCAPES = {ch: f"&#{ord(ch)};" for ch in "&[]{}|'<>-=_*#:;~"}
_NOWIKI_TABLE = str.maketrans(_NOWIKI_ESCAPES)

#: Tags whose content is not running text: dropped with their content. `ref` covers footnotes,
#: the rest are formulas, media, code and generated lists (spec §3: "refs … removed").
DROPPED_TAGS = (
    "ref",
    "references",
    "gallery",
    "timeline",
    "score",
    "graph",
    "mapframe",
    "maplink",
    "templatedata",
    "templatestyles",
    "imagemap",
    "inputbox",
    "categorytree",
    "syntaxhighlight",
    "source",
    "pre",
    "hiero",
    "section",
    "charinsert",
    "indicator",
)
#: Formula tags: their TeX source is the text (issue 32).
FORMULA_TAGS = ("math", "chem", "ce")
_FORMULA = re.compile(
    r"<(" + "|".join(FORMULA_TAGS) + r")(?:\s[^<>]*)?(?<!/)>((?:[^<]++|<(?!/\1\s*>))*+)</\1\s*>", re.S | re.I
)
_FORMULA_SPACE = re.compile(r"\s+")
_DOUBLED_DELIMITER = re.compile(r"\{\{+|\}\}+|\[\[+|\]\]+")
#: The content runs to the first closing tag of the same name: a possessive scan of `<`-free runs
#: that stops at it (what a lazy `.*?` finds, without trying the closing tag after every character).
_DROPPED_PAIRED = re.compile(
    r"<(" + "|".join(DROPPED_TAGS) + r")(?:\s[^<>]*)?(?<!/)>(?:[^<]++|<(?!/\1\s*>))*+</\1\s*>", re.S | re.I
)
_DROPPED_SELF_CLOSING = re.compile(r"<(?:" + "|".join(DROPPED_TAGS) + r")(?:\s[^<>]*)?/>", re.I)
#: An opening or closing marker left without its partner: MediaWiki shows it literally, which would
#: leak markup into the text, so only the marker is removed.
_DROPPED_STRAY = re.compile(r"</?(?:" + "|".join(DROPPED_TAGS + FORMULA_TAGS) + r")(?:\s[^<>]*)?/?>", re.I)
_BR = re.compile(r"<br\s*/?\s*>|</br\s*>", re.I)
#: HTML tags MediaWiki accepts in wikitext (Sanitizer); their markers go, their content stays. Any
#: other `<name>` is literal text in MediaWiki, so it is kept as text here too.
KEPT_CONTENT_TAGS = (
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "caption",
    "center",
    "cite",
    "code",
    "data",
    "dd",
    "del",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "onlyinclude",
    "includeonly",
    "noinclude",
    "p",
    "poem",
    "q",
    "rb",
    "rp",
    "rt",
    "rtc",
    "ruby",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "td",
    "th",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
    "translate",
    "languages",
    "tvar",
)
_KEPT_TAG = re.compile(r"</?(?:" + "|".join(KEPT_CONTENT_TAGS) + r")(?:\s[^<>]*)?/?>", re.I)
_BRACE_RUN = re.compile(r"\{\{+|\}\}+")
_BEHAVIOUR_SWITCH = re.compile(r"__[A-Z]{3,}__")
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|\n]+?)\s*(?:\||\}\})")

#: Variants of the wikis with a language converter, for `-{…}-` (only zh is exercised here).
CONVERTER_LANGUAGES = frozenset({"zh", "gan", "iu", "kk", "ku", "shi", "sr", "tg", "uz", "crh", "ban"})
_CONVERSION_TOKEN = re.compile(r"-\{|\}-")
_CONVERSION_FLAGS = re.compile(r"^\s*([ATRDHN\-](?:\s*;\s*[ATRDHN\-])*)\s*;?\s*\|", re.S)
_VARIANT_CODE = r"(?:" + "|".join(sorted(CONVERTER_LANGUAGES)) + r")(?:-[a-z]{2,5})?"
_VARIANT_SPLIT = re.compile(r";\s*(?=(?:[^;]*=>\s*)?" + _VARIANT_CODE + r"\s*:)")
_VARIANT_ITEM = re.compile(r"^\s*(?:[^;]*?=>\s*)?(" + _VARIANT_CODE + r")\s*:(.*)$", re.S)

#: Default zh variant preference: Simplified first (Hansel is Simplified Chinese, §5).
DEFAULT_ZH_VARIANTS = ("zh-cn", "zh-hans", "zh-sg", "zh-my", "zh", "zh-hant", "zh-tw", "zh-hk", "zh-mo")


def strip_comments(text: str) -> str:
    """Remove HTML comments (an unterminated comment runs to the end of the text)."""
    return _COMMENT.sub("", text) if "<!--" in text else text


def escape_nowiki(text: str) -> str:
    """Keep `<nowiki>` content as literal text: its markup characters become numeric entities."""
    if "<nowiki" not in text and "<NOWIKI" not in text:
        return text
    text = _NOWIKI_EMPTY.sub("", text)
    return _NOWIKI.sub(lambda m: m.group(1).translate(_NOWIKI_TABLE), text)


def strip_tags(text: str) -> str:
    """Drop non-prose tags with their content; `<br>` becomes a newline; keep other tags' content."""
    # Each pass needs a `<`; most pages have none left once their refs are gone, so the passes after
    # are skipped (each scans the whole page, and the kept-tag one tries sixty names at every `<`).
    if "<" not in text:
        return text
    text = _FORMULA.sub(_formula_text, text)
    text = _DROPPED_PAIRED.sub("", text)
    if "<" not in text:
        return text
    if "/>" in text:
        text = _DROPPED_SELF_CLOSING.sub("", text)
    text = _DROPPED_STRAY.sub("", text)
    if "<" not in text:
        return text
    text = _BR.sub("\n", text)
    return _KEPT_TAG.sub("", text)


def _formula_text(m: re.Match[str]) -> str:
    """A formula's TeX source on one line, its markup characters escaped (shown literally); a space
    parts doubled braces and brackets (`}}` -> `} }`, the same formula in TeX), so no wikitext
    delimiter appears in the text."""
    tex = _FORMULA_SPACE.sub(" ", m.group(2)).strip()
    tex = _DOUBLED_DELIMITER.sub(lambda d: " ".join(d.group()), tex)
    return tex.translate(_NOWIKI_TABLE)


#: Scripts written without spaces between words: a removed template between two of their letters
#: leaves no space (Chinese, Japanese, Thai, Lao, Burmese, Khmer).
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff]"
)


def _spaced_letter(ch: str) -> bool:
    return ch.isalnum() and not _UNSPACED.match(ch)


def template_spans(text: str) -> list[tuple[int, int]]:
    """Outermost `{{…}}` / `{{{…}}}` spans, matched like MediaWiki's preprocessor.

    A closing run is paired with the innermost open run: three braces each side make a template
    parameter, otherwise two make a template. Unmatched braces are literal text, so an unclosed
    `{{` never swallows the rest of the page. The C version (`wikitext.native`) when enabled.
    """
    if native_enabled():
        return native_template_spans(text)
    return template_spans_python(text)


def template_spans_python(text: str) -> list[tuple[int, int]]:
    """`template_spans` in Python: the reference the C version is tested against."""
    stack: list[list[int]] = []  # [position of the first still-open brace, open braces left]
    spans: list[tuple[int, int]] = []
    for m in _BRACE_RUN.finditer(text):
        run_start, run_end = m.span()
        if text[run_start] == "{":
            stack.append([run_start, run_end - run_start])
            continue
        n = run_end - run_start
        while n >= 2 and stack:
            top = stack[-1]
            if top[1] < 2:
                stack.pop()  # a single leftover brace is literal
                continue
            k = 3 if (top[1] >= 3 and n >= 3) else 2
            top[1] -= k
            n -= k
            close = run_end - n
            spans.append((top[0] + top[1], close))
            if top[1] < 2:
                stack.pop()
    return _merge(spans)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if not spans:
        return spans
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = merged[-1]
        if start < last_end:  # nested (adjacent templates stay apart: `{{a}}{{b}}` is two)
            if end > last_end:
                merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged


def strip_templates(text: str, language: str = "en", counts: dict[str, int] | None = None) -> str:
    """Remove templates, parser functions and template parameters (nested), keeping what the inline
    templates of `wikitext.templates` show on a wiki of `language` (recursively: their arguments'
    templates get the same rule).

    A run of removed templates that is all a bold or italic run holds (`''{{sfn|…}}''`) goes with
    its quote marks: left behind they would meet as `''''`, which MediaWiki shows as an apostrophe.
    A run of templates right after a link's `]]` leaves MARK there, so no link trail crosses it. A
    run that shows nothing between two letters of a spaced script leaves a space (MediaWiki's page
    has a footnote marker or a tag there: the words never join).

    `counts`, when given, gets `templates_shown`, `templates_removed` and, for removed templates
    that stood between words of a sentence, `templates_removed_in_sentence` and the same by name
    (`templates_removed_in_sentence_<name>`): what the text lost."""
    if "{{" not in text:
        return text
    parts: list[str] = []
    pos = 0
    for start, end, shown in _runs(text, template_spans(text), language, counts):
        parts.append(text[pos:start])
        after_link = start >= 2 and text.startswith("]]", start - 2)
        if after_link:
            parts.append(MARK)
        if not shown and end < len(text) and _spaced_letter(text[end]):
            before = text[start - 3] if after_link and start >= 3 else text[start - 1 : start]
            if before and _spaced_letter(before):
                parts.append(" ")
        parts.append(shown)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _shown(text: str, start: int, end: int, language: str) -> str | None:
    """What the template at `text[start:end]` leaves in the text; None unless it is an inline one."""
    if text.startswith("{{{", start):
        return None  # a template parameter: no value outside its template
    bar = text.find("|", start + 2, end - 2)
    name = text[start + 2 : bar if bar >= 0 else end - 2]
    if "{" in name or not is_inline(name, language):
        return None
    visible = visible_wikitext(text[start + 2 : end - 2], language)
    if not visible:
        return ""
    shown = strip_templates(visible, language)
    # a link closing the template's text ends at the template, as MediaWiki's <span> ends it
    return shown + MARK if shown.endswith("]]") else shown


def _count(text: str, start: int, end: int, shown: str | None, counts: dict[str, int]) -> None:
    """Count a template: shown, or removed (and then whether words stood on both sides of it)."""
    if shown is not None:
        counts["templates_shown"] = counts.get("templates_shown", 0) + 1
        return
    counts["templates_removed"] = counts.get("templates_removed", 0) + 1
    i = start - 1
    while i >= 0 and text[i] == " ":  # a few characters at most; no copy of the line
        i -= 1
    if i < 0 or not (text[i].isalnum() or text[i] in ",;:(]'\""):
        return
    after = text[end : end + 8].lstrip(" ")
    if not after or not (after[0].isalnum() or after[0] in ",.;:)"):
        return
    if text[text.rfind("\n", 0, i) + 1] in "|!{":  # a table row or cell, not a sentence
        return
    bar = text.find("|", start + 2, end - 2)
    key = "templates_removed_in_sentence_" + template_key(text[start + 2 : bar if bar >= 0 else end - 2])
    counts["templates_removed_in_sentence"] = counts.get("templates_removed_in_sentence", 0) + 1
    counts[key] = counts.get(key, 0) + 1


def _runs(
    text: str, spans: Sequence[tuple[int, int]], language: str, counts: dict[str, int] | None
) -> list[tuple[int, int, str]]:
    """Adjacent template spans joined into runs, each with what it shows; a run showing nothing is
    widened over equal quote runs (2, 3 or 5) around it."""
    runs: list[tuple[int, int, str]] = []
    for start, end in spans:
        found = _shown(text, start, end, language)
        if counts is not None:
            _count(text, start, end, found, counts)
        shown = found or ""
        if runs and runs[-1][1] == start:
            runs[-1] = (runs[-1][0], end, runs[-1][2] + shown)
        else:
            runs.append((start, end, shown))
    widened: list[tuple[int, int, str]] = []
    for start, end, shown in runs:
        if shown:
            widened.append((start, end, shown))
            continue
        before, after = start, end
        while before > 0 and text[before - 1] == "'":  # a loop, not a slice: pages hold
            before -= 1  # hundreds of templates, and copying each one's prefix is quadratic
        while after < len(text) and text[after] == "'":
            after += 1
        run = start - before
        enclosed = run == after - end and run in (2, 3, 5) and (not widened or widened[-1][1] <= before)
        widened.append((before, after, "") if enclosed else (start, end, ""))
    return widened


def template_names(text: str) -> list[str]:
    """Names of the templates invoked in `text` (as written, trimmed), for flag detection.

    `_TEMPLATE_NAME.findall`, or the same in C (`wikitext.native`) when enabled."""
    if "{{" not in text:
        return []
    if native_enabled():
        return native_template_names(text)
    names: list[str] = _TEMPLATE_NAME.findall(text)
    return names


def strip_tables(text: str) -> str:
    """Remove `{| … |}` tables (nested; an unclosed table runs to the end, as MediaWiki closes it)."""
    if "{|" not in text:
        return text
    out: list[str] = []
    depth = 0
    for line in text.split("\n"):
        head = line.lstrip().lstrip(":").lstrip()
        if head.startswith("{|"):
            depth += 1
            continue
        if depth:
            if head.startswith("|}"):
                depth -= 1
            continue
        out.append(line)
    return "\n".join(out)


def strip_behaviour_switches(text: str) -> str:
    """Remove `__TOC__`, `__NOTOC__`, `__DISAMBIG__` and the like."""
    return _BEHAVIOUR_SWITCH.sub("", text) if "__" in text else text


def resolve_conversions(text: str, variants: Sequence[str] = DEFAULT_ZH_VARIANTS) -> str:
    """Replace language-conversion markup `-{…}-` by what a reader of the first variant sees.

    MediaWiki LanguageConverter syntax: `-{text}-` shows text unconverted; `-{zh-cn:A;zh-tw:B}-`
    shows the reader's variant; flags before `|`: `H`, `-`, `T`, `D` (rules, title, description)
    show nothing, `R` shows the raw text, `A` adds a rule and shows the variant. Nested markup is
    resolved inside out; a `-{` without its `}-` is literal text.
    """
    if "-{" not in text:
        return text
    stack: list[int] = []
    pairs: list[tuple[int, int]] = []  # outermost (open index, close end)
    for m in _CONVERSION_TOKEN.finditer(text):
        if m.group() == "-{":
            stack.append(m.start())
        elif stack:
            start = stack.pop()
            if not stack:
                pairs.append((start, m.end()))
    if not pairs:
        return text
    parts = []
    pos = 0
    for start, end in pairs:
        parts.append(text[pos:start])
        inner = resolve_conversions(text[start + 2 : end - 2], variants)
        parts.append(_convert_block(inner, variants))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _convert_block(content: str, variants: Sequence[str]) -> str:
    flags: set[str] = set()
    m = _CONVERSION_FLAGS.match(content)
    if m:
        flags = {f.strip() for f in m.group(1).split(";")}
        content = content[m.end() :]
    if flags & {"H", "-", "T", "D"}:
        return ""
    if "R" in flags:
        return content
    choices: dict[str, str] = {}
    first: str | None = None
    for item in _VARIANT_SPLIT.split(content):
        im = _VARIANT_ITEM.match(item)
        if im is None:
            if not choices:
                return content  # plain `-{text}-`: shown as is
            continue
        code, value = im.group(1), im.group(2).strip().rstrip(";").strip()
        choices.setdefault(code, value)
        if first is None:
            first = value
    if not choices:
        return content
    for code in variants:
        if code in choices:
            return choices[code]
    return first or ""


def preprocess(
    text: str,
    *,
    conversion: bool,
    variants: Sequence[str] = DEFAULT_ZH_VARIANTS,
    language: str = "en",
    counts: dict[str, int] | None = None,
) -> str:
    """All block-level steps, in order (see the module docstring), for a wiki of `language`;
    `counts` gets the template counts of `strip_templates`.

    MARK (U+0001, which XML forbids, so no dump holds it) is reserved for the renderer: any in the
    input is dropped first."""
    if MARK in text:
        text = text.replace(MARK, "")
    if "<" in text:  # the three steps that read tags; a page without any skips their searches
        text = strip_comments(text)
        text = escape_nowiki(text)
        text = strip_tags(text)
    text = strip_templates(text, language, counts)
    text = strip_tables(text)
    if conversion:
        text = resolve_conversions(text, variants)
    return strip_behaviour_switches(text)
