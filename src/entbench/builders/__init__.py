"""Every dataset's build, one package per dataset (`entbench targets` lists what they build).

Each package holds its pure logic at its root, its stages in `stages/` (named after the logic they
run), `export.py` where the dataset has an original format, and one `pipeline.py`, the only place
that registers its stages and targets, with each target's card module and release formats: a
dataset is declared there and nowhere else. Importing this package declares it to the engine's
registry (`engine.registry.declare_datasets`), which finds every `*/pipeline.py` below and imports
them at its first lookup. A package without one (`edge_probing`) is logic that other datasets'
stages and commands use.
"""

from __future__ import annotations

from entbench.engine.registry import declare_datasets

declare_datasets(__name__)
