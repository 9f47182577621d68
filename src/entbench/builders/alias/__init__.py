"""AT-base, the alias table, and P(unlinked|m) (spec §4)."""
