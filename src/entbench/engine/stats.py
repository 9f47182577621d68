"""Counts by reason, summed over tasks (datatrove-style: every drop is counted under a name)."""

from __future__ import annotations

from collections.abc import Mapping


class Stats(dict[str, int]):
    """A mapping of counter name to count; `+=` merges. Names use `dropped_<reason>` style."""

    def add(self, key: str, n: int = 1) -> None:
        """Increase counter `key` by `n`."""
        self[key] = self.get(key, 0) + n

    def merge(self, other: Mapping[str, int]) -> Stats:
        """Add every counter of `other` into this one; returns self."""
        for key, n in other.items():
            self[key] = self.get(key, 0) + int(n)
        return self

    def sorted(self) -> dict[str, int]:
        """The counters in name order (for manifests)."""
        return {k: self[k] for k in sorted(self)}


def counted(stats: Mapping[str, object], key: str) -> int:
    """Counter `key` of a manifest's stats as an int (0 when absent or not a number)."""
    value = stats.get(key, 0)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
