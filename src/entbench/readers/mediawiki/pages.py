"""The fast page reader of MediaWiki XML dumps: the page records mwxml gives, at a fraction of its cost.

mwxml (the reference reader, `entbench.readers.mediawiki.xml_dump`) walks every element of a dump through
Python generators and builds a `Page`, `Revision`, `Slots`, `Content`, `User` and `Timestamp` per
revision (28% of a scan's time, expat itself 5.5%; issue 22). This reader drives the same parser,
expat, directly (as ElementTree, which mwxml reads through, sets it up: namespaces resolved, an
element's text = its character data before its first child, undefined entities refused), with
handlers that keep only the fields a page record needs; ElementTree's tree building alone cost
3-4x expat's parse. It yields the same `RawPage`s as mwxml and keeps mwxml's checks of the dump's
shape, which `tests/readers/test_page_readers.py` compares on every fixture dump:

* malformed XML (expat: unclosed, mismatched or truncated elements, bad entities) fails;
* `<mediawiki>` holds only `<siteinfo>` and `<page>` (mwxml also reads `<logitem>`, which is not a
  page: the scan could not use it, so it fails here too, with a message instead of a traceback);
* `<page>` holds `<title>`, `<ns>`, `<id>`, `<redirect>`, `<restrictions>`, `<DiscussionThreading>`,
  then only `<revision>`s; `<revision>` holds only the export schema's revision elements;
* what mwxml would convert with `int()` (page, namespace and revision ids) must be integers, and a
  page needs an id and a title (mwxml raised a bare `ValueError`/`TypeError` there).

What mwxml computes from a page, this reader computes alike: the title with `_` as spaces and, for
a page without `<ns>`, the namespace from the title's prefix (`<siteinfo>` names); the redirect
target from `<redirect title>`; the last revision's id and main-slot text (`<text>`, or the
`<content>` whose role is `main` in multi-content dumps; "" when deleted or absent).
Fields mwxml parses but the scan never reads (timestamps, contributors) are not parsed.

Errors are `MalformedPage` (a `ValueError`) for the caller to turn into a `DataError` with the
dump's path and the block's offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple
from xml.parsers import expat

#: Bytes handed to expat at a time: the tree of at most one such piece (plus the open page) is in
#: memory at once, whatever the size of the block.
FEED_BYTES = 1 << 20

_PAGE_CHILDREN = frozenset(
    {"title", "ns", "id", "redirect", "restrictions", "revision", "DiscussionThreading"}
)
#: mwxml's `Revision.from_element` accepts exactly these.
_REVISION_CHILDREN = frozenset(
    {
        "id",
        "timestamp",
        "contributor",
        "minor",
        "origin",
        "sha1",
        "parentid",
        "model",
        "format",
        "comment",
        "text",
        "content",
    }
)
_CONTENT_CHILDREN = frozenset({"role", "origin", "model", "format", "id", "text"})


class MalformedPage(ValueError):
    """The dump's XML is malformed, or a page does not have the shape of a MediaWiki export."""


class PageRecord(NamedTuple):
    """One page as mwxml reads it (`mediawiki.xml_dump.RawPage` holds the same fields)."""

    page_id: int
    title: str
    ns: int
    redirect: str | None
    revision_id: int | None
    text: str


def iter_page_records(pieces: Iterable[bytes]) -> Iterator[PageRecord]:
    """The pages of a MediaWiki XML document given as consecutive pieces of bytes, in order."""
    reader = _Reader()
    try:
        for piece in pieces:
            for start in range(0, len(piece), FEED_BYTES):
                reader.parser.Parse(piece[start : start + FEED_BYTES], False)
                yield from reader.done
                reader.done.clear()
        reader.parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise MalformedPage(str(exc)) from exc
    finally:
        reader.unhook()
    yield from reader.done


class _Reader:
    """Expat handlers that keep, per page, only what mwxml's `Page`/`Revision` would give the scan.

    The texts are collected as ElementTree collects an element's `.text` (mwxml reads texts from
    ElementTree): the character data before the element's first child, None when there is none.
    """

    def __init__(self) -> None:
        # The separator makes expat resolve namespaces as ElementTree does: tags are "uri}local".
        self.parser = expat.ParserCreate(None, "}")
        self.parser.buffer_text = True
        self.parser.buffer_size = 1 << 16
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.data
        self.parser.DefaultHandlerExpand = self.default
        self.names: dict[str, str] = {}  # "uri}page" -> "page"
        self.path: list[str] = []  # local names of the open elements
        self.done: list[PageRecord] = []
        self.namespaces: dict[str, int] | None = None
        self.text: list[str] = []  # the text of the element at `text_depth` (0: none)
        self.text_depth = 0
        self.collecting = False  # until that element's first child
        self.namespace_key = 0  # of the open <siteinfo> <namespace>
        self.page = _PageState()

    def unhook(self) -> None:
        """Take this reader's handlers off its parser.

        They are its bound methods, so the parser holding them closed a cycle that only a collection
        frees, and map tasks run with the GC paused: a Wikipedia scan's task kept each of its
        pieces' readers, with their last pages' texts (~1.6 MB a 4 MB piece), until it ended, so
        its memory grew with the task (which grows with the dump up to `--chunk-mb`)."""
        parser = self.parser
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = parser.DefaultHandlerExpand = None

    def start(self, name: str, attrs: dict[str, str]) -> None:
        tag = self.names.get(name)
        if tag is None:
            tag = self.names[name] = name[name.find("}") + 1 :]
        path = self.path
        path.append(tag)
        depth = len(path)
        if depth == self.text_depth + 1:
            self.collecting = False  # ElementTree's `.text` stops at the first child
        if depth <= 2:
            _check_outer(depth, tag)
            if tag == "page":
                self.page = _PageState()
            elif tag == "siteinfo":
                self.namespaces = None
            return
        parent = path[-2]
        if parent == "page":
            self.page.child(tag, attrs)
        elif parent == "revision" and path[1] == "page":
            self.page.revision_child(tag, attrs)
        elif parent == "content" and path[1] == "page" and depth == 5:
            if tag not in _CONTENT_CHILDREN:
                raise MalformedPage(f"unexpected <{tag}> in a <content>")
        elif tag == "namespaces" and depth == 3:
            self.namespaces = {}
        elif tag == "namespace" and parent == "namespaces" and self.namespaces is not None:
            self.namespace_key = _int(attrs.get("key"), "a namespace key")
        else:
            return
        if tag in _TEXTS:  # never nested: their children are none of the branches above
            self.text = []
            self.text_depth = depth
            self.collecting = True

    def data(self, data: str) -> None:
        if self.collecting:
            self.text.append(data)

    def end(self, name: str) -> None:
        path = self.path
        depth = len(path)
        tag = path.pop()
        text: str | None = None
        if depth == self.text_depth:
            text = "".join(self.text) or None  # ElementTree: None, never ""
            self.text_depth = 0
            self.collecting = False
        if depth <= 2:
            if tag == "page":
                self.done.append(self.page.record(self.namespaces))
        elif path[1] == "page":
            self.page.end(tag, path[-1], text)
        elif tag == "namespace" and self.namespaces is not None:
            self.namespaces[text or ""] = self.namespace_key

    def default(self, data: str) -> None:
        if data[:1] == "&":  # as ElementTree: an entity that no DTD declares
            raise MalformedPage(f"undefined entity {data}: line {self.parser.ErrorLineNumber}")


#: Elements whose text a page record needs (`namespace`: `<siteinfo>`'s names).
_TEXTS = frozenset({"title", "ns", "id", "text", "role", "namespace"})


class _PageState:
    """mwxml's `Page.from_element`, `Revision.from_element` and `Content.from_element`, reduced."""

    def __init__(self) -> None:
        self.title: str | None = None
        self.ns: int | None = None
        self.page_id: int | None = None
        self.redirect: str | None = None
        self.seen_revision = False
        self.revision_id: int | None = None
        self.main: str | None = None
        # the open revision
        self.rev_id: int | None = None
        self.rev_text: str | None = None
        self.text_sha1: str | None = None
        self.contents: list[tuple[str | None, str | None]] = []  # (role, text) of <content>s
        self.role: str | None = None
        self.content_text: str | None = None

    def child(self, tag: str, attrs: dict[str, str]) -> None:
        """A child of `<page>` starts."""
        if self.seen_revision and tag != "revision":
            raise MalformedPage(f"unexpected <{tag}> after a <revision> in a <page>")
        if tag == "revision":
            self.seen_revision = True
            self.rev_id = self.rev_text = self.text_sha1 = None
            self.contents = []
        elif tag == "redirect":
            self.redirect = attrs.get("title")
        elif tag not in _PAGE_CHILDREN:
            raise MalformedPage(f"unexpected <{tag}> in a <page>")

    def revision_child(self, tag: str, attrs: dict[str, str]) -> None:
        """A child of `<revision>` starts."""
        if tag == "text":
            self.text_sha1 = attrs.get("sha1")
        elif tag == "content":
            self.role = self.content_text = None
        elif tag not in _REVISION_CHILDREN:
            raise MalformedPage(f"unexpected <{tag}> in a <revision>")

    def end(self, tag: str, parent: str, text: str | None) -> None:
        """An element inside `<page>` ends, with its text if it is one of `_TEXTS`."""
        if parent == "page":
            if tag == "title":
                self.title = text
            elif tag == "ns":
                self.ns = _int(text, "<ns>")
            elif tag == "id":
                self.page_id = _int(text, "a page <id>")
            elif tag == "revision":
                self.end_revision()
        elif parent == "revision":
            if tag == "id":
                self.rev_id = _int(text, "a revision <id>")
            elif tag == "text":
                self.rev_text = text or None
            elif tag == "content":
                self.contents.append((self.role, self.content_text))
        elif parent == "content":
            if tag == "role":
                self.role = text
            elif tag == "text":
                self.content_text = text or None

    def end_revision(self) -> None:
        # mwxml: <text sha1=…> is the main slot (new format) and goes first, or the only one when
        # there are no <content> elements (old format); slots are keyed by role, the last one
        # winning. With several revisions the last one is the page's (as the scan reads them).
        contents = self.contents
        if self.text_sha1 is not None or not contents:
            contents.insert(0, ("main", self.rev_text))
        self.main = None
        for role, text in contents:
            if role == "main":
                self.main = text
        self.revision_id = self.rev_id

    def record(self, namespaces: dict[str, int] | None) -> PageRecord:
        """The finished page."""
        if self.page_id is None:
            raise MalformedPage(f"a <page> without <id> (title {self.title!r})")
        if self.title is None:
            raise MalformedPage(f"page {self.page_id} has no <title>")
        ns, title = (self.ns, self.title) if self.ns is not None else _split_namespace(self.title, namespaces)
        return PageRecord(
            self.page_id, title.replace("_", " "), ns, self.redirect, self.revision_id, self.main or ""
        )


def _check_outer(depth: int, tag: str) -> None:
    if depth == 1 and tag != "mediawiki":
        raise MalformedPage(f"the document element is <{tag}>, not <mediawiki>")
    if depth == 2 and tag not in ("siteinfo", "page"):
        raise MalformedPage(f"unexpected <{tag}> in <mediawiki> (expected <siteinfo> or <page>)")


def _int(value: str | None, what: str) -> int:
    try:
        return int(value)  # type: ignore[arg-type]  # None is reported as malformed below
    except (TypeError, ValueError):
        raise MalformedPage(f"{what} is not an integer: {value!r}") from None


def _split_namespace(title: str, namespaces: dict[str, int] | None) -> tuple[int, str]:
    """mwxml's `extract_namespace`, for pages without `<ns>` (exports before schema 0.6)."""
    prefix, sep, rest = title.partition(":")
    if not sep or namespaces is None or rest.startswith(" ") or prefix not in namespaces:
        return 0, title
    return namespaces[prefix], rest
