"""The `kb-series` target: E_new over a series of Wikidata dumps (`pipeline.py` registers it)."""
