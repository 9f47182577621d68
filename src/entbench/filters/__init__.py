"""Pure filter logic: Python or Arrow values in, decisions with reasons out; no I/O."""
