"""Imports every command module so their commands attach to the `entbench` group."""

from entbench.cli import alias_cmd, build_cmd, export_cmd, filter_cmd, inspect_cmd  # noqa: F401
