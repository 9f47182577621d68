"""Readers of raw dump formats: the only code that touches compressed or XML input."""
