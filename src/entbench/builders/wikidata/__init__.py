"""The Wikidata JSON dump scan (spec §1)."""
