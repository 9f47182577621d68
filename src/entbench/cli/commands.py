"""Imports every command module so their commands attach to the `entbench` group."""

from entbench.cli import build_cmd, inspect_cmd  # noqa: F401
