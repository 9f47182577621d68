"""Every dataset's build, one package per dataset (`wikidata`, `wikipedia`, `alias`, `kb`,
`kb_series`, `edge_probing`, `hansel`, `wikireading`, `enteval`).

Each package holds its pure logic at its root, its stages in `stages/` (named after the logic they
run), `export.py` where the dataset has an original format, and one `pipeline.py`, the only place
that registers its stages and targets. Importing this package declares those pipelines to the
engine's registry (`engine.registry.declare_pipelines`), which imports them at its first lookup.
"""

from __future__ import annotations

from entbench.engine.registry import declare_pipelines

#: Every dataset's pipeline module, in the order they register (upstream datasets first).
PIPELINES = (
    "entbench.builders.wikidata.pipeline",
    "entbench.builders.wikipedia.pipeline",
    "entbench.builders.alias.pipeline",
    "entbench.builders.kb.pipeline",
    "entbench.builders.kb_series.pipeline",
    "entbench.builders.wikireading.pipeline",
    "entbench.builders.hansel.pipeline",
    "entbench.builders.enteval.pipeline",
)

declare_pipelines(PIPELINES)
