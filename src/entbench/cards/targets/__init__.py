"""Per-target card sections; each module registers its target(s) with `cards.registry`."""
