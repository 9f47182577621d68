"""Memorisation audits of train/test splits (spec §7)."""
