"""Readers of raw inputs: the dump formats (the only code that touches compressed or XML input) and
natural-language text (`tokenizer`, spaCy's English pipeline)."""
