"""The knowledge base: internal filter, E_known/E_new, types, TopSnaks (spec §2)."""
