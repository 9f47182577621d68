"""entbench: deterministic builders for entity-centric NLP benchmarks from raw dumps."""

__version__ = "0.1.0"
