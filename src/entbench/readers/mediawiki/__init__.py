"""MediaWiki XML dumps: the dump's header and site info, page blocks and multistream streams,
the fast page reader, namespace names and the interwiki map."""
