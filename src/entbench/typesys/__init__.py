"""The Wikidata type system of Hansel §3.1 (spec §2.3–2.4): pure SQL builders and Python helpers.

Nothing here reads or writes files: functions take the names of DuckDB relations (views or
tables the caller registered) and return SQL text, or take Python values and return values.
"""
