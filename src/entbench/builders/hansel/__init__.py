"""Pure logic of the Hansel datasets (spec §5): contexts, splits, matching rules and sampling."""
