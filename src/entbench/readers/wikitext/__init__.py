"""Wikitext: the renderer (`render`), its markup passes and template rules, titles and flags,
the native fast path; the template and unit tables are the `.toml` files beside them."""
