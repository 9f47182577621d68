"""A template call's name and arguments, split and numbered as MediaWiki's preprocessor does."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_NAME_PREFIX = re.compile(r"^(?:template|模板|樣板|样板)\s*:\s*", re.I)
_NAME_SPACES = re.compile(r"[\s_]+")
_ARG_TOKEN = re.compile(r"\{\{|\}\}|\[\[|\]\]|\|")


@dataclass(frozen=True)
class Args:
    """A template's arguments: positional (1-based, `1=` included) and named (trimmed)."""

    positional: Mapping[int, str]
    named: Mapping[str, str]

    def get(self, n: int) -> str:
        """Positional argument `n`, or "" when absent."""
        return self.positional.get(n, "")

    def count(self) -> int:
        """The highest positional index given (0 when none)."""
        return max(self.positional, default=0)


def normalize_name(raw: str) -> str:
    """A template name in lookup form: no `Template:` prefix, spaces collapsed, first letter lower."""
    name = _NAME_SPACES.sub(" ", raw).strip()
    if ":" in name:
        name = _NAME_PREFIX.sub("", name)
    return name[:1].lower() + name[1:]


def split_arguments(inner: str) -> list[str]:
    """`inner` (a template without its braces) split at its own pipes.

    Pipes inside nested templates and inside `[[…]]` belong to them, as in MediaWiki's preprocessor:
    `{{nowrap|[[a|b]]}}` has one argument. An unclosed `[[` protects nothing."""
    parts: list[str] = []
    braces = links = 0
    last = 0
    cuts: list[int] = []
    for m in _ARG_TOKEN.finditer(inner):
        token = m.group()
        if token == "{{":
            braces += 1
        elif token == "}}":
            braces = max(0, braces - 1)
        elif token == "[[":
            links += braces == 0
        elif token == "]]":
            links = max(0, links - (braces == 0))
        elif braces == 0:
            cuts.append(m.start())
            if links == 0:
                parts.append(inner[last : m.start()])
                last = m.start() + 1
    if links:  # an unclosed `[[`: its pipes were template pipes after all
        parts, last = [], 0
        for cut in cuts:
            parts.append(inner[last:cut])
            last = cut + 1
    parts.append(inner[last:])
    return parts


def parse_arguments(parts: list[str]) -> Args:
    """Arguments of `parts[1:]` (`parts[0]` is the name): `key=value` is named unless key is a number."""
    positional: dict[int, str] = {}
    named: dict[str, str] = {}
    n = 0
    for part in parts[1:]:
        eq = part.find("=")
        if eq >= 0 and "{{" not in part[:eq] and "[[" not in part[:eq]:
            key, value = part[:eq].strip(), part[eq + 1 :].strip()
            if key.isdigit():
                positional[int(key)] = value
            else:
                named[key] = value
            continue
        n += 1
        positional[n] = part
    return Args(positional, named)
