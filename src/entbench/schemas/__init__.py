"""Every table's columns are spelled out here and nowhere else (never inferred from data)."""
