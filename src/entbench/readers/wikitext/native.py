"""The native wikitext renderer (`entbench._wtrender`, src/entbench/_native/wtrender.c), if built.

`readers.wikitext.render` renders a page after `preprocess` either in Python (`_Renderer`, the reference)
or with `_wtrender.Inline`, which does the same work in C (hidden links, the block loop, links,
anchors, whitespace, plain titles) and calls back into the same Python functions for everything
rare (other entities, external links, nested labels, titles that are not plain, unusual link-trail
rules), so the two give identical output (tests/readers/test_wikitext_native.py);
`wikitext.markup.template_spans` and `template_names` have C versions too. The extension is
compiled when the package is installed (hatch_build.py); without a C compiler the install still
succeeds and rendering takes the Python path. `ENTBENCH_NATIVE=0` forces that path, as it does for
the Wikidata scan."""

from __future__ import annotations

from typing import Any

from entbench.native_ext import load_extension, native_switched_on

#: The interface of `_wtrender.Inline` this package calls; wtrender.c's `ABI` must match, so a stale
#: build (an old .so next to newer sources) is ignored rather than misused.
NATIVE_ABI = 7
#: Link-trail rules the C code applies itself (`NamespaceTable.linktrail`); any other is called back.
TRAIL_NONE, TRAIL_ASCII_LOWER, TRAIL_CALL = 0, 1, 2

_wtrender = load_extension("_wtrender", NATIVE_ABI)


def native_available() -> bool:
    """Whether the compiled renderer is installed (regardless of `ENTBENCH_NATIVE`)."""
    return _wtrender is not None


def native_enabled() -> bool:
    """Whether rendering takes the native path: built, and not switched off by `ENTBENCH_NATIVE=0`."""
    return _wtrender is not None and native_switched_on()


def trail_mode(linktrail: str | None) -> int:
    """How the C code finds a link trail under the wiki's rule (`[a-z]+` on enwiki, none on zhwiki)."""
    if not linktrail:
        return TRAIL_NONE
    return TRAIL_ASCII_LOWER if linktrail == "[a-z]+" else TRAIL_CALL


def new_inline(*args: Any) -> Any:
    """A `_wtrender.Inline` for one page (arguments as wtrender.c's `Inline_init` takes them)."""
    if _wtrender is None:
        raise RuntimeError("the native wikitext renderer is not built")
    return _wtrender.Inline(*args)


def native_template_spans(text: str) -> list[tuple[int, int]]:
    """`wikitext.markup.template_spans` in C (only when `native_available()`)."""
    if _wtrender is None:
        raise RuntimeError("the native wikitext renderer is not built")
    spans: list[tuple[int, int]] = _wtrender.template_spans(text)
    return spans


def native_template_names(text: str) -> list[str]:
    """`wikitext.markup.template_names` in C (only when `native_available()`)."""
    if _wtrender is None:
        raise RuntimeError("the native wikitext renderer is not built")
    names: list[str] = _wtrender.template_names(text)
    return names
