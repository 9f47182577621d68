"""Imports every command module so their commands attach to the `entbench` group (the export
commands attach to `export` when it runs: `cli.export_cmd`)."""

from entbench.cli import (  # noqa: F401
    alias_cmd,
    audit_cmd,
    build_cmd,
    card_cmd,
    diff_cmd,
    eval_hansel,
    eval_wikireading,
    export_cmd,
    filter_cmd,
    filter_hansel,
    inspect_cmd,
    publish_cmd,
)
