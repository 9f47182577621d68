"""WikiReading (Hewlett et al. 2016; spec §6): registers its stages and the `wikireading` target.

    wikidata ──> wikireading_triples ──┐
    wikipedia ─────────────────────────┴─> wikireading_instances ─> wikireading ─> wikireading_stats

* `wikireading_triples` (derived): truthy statements consolidated per (item, property), values
  rendered as spec §6 says; parameters `site` (enwiki), `language` (en), `datatypes`,
  `coarse_time`, `on_partial`.
* `wikireading_instances` (derived): joined with the article text; `max_document_words` (0 = none).
* `wikireading` (benchmarks): tables `train`, `valid`, `test`; presets `paper` (70/10/20),
  `released` (85/10/5), `recycled` (property-holdout).
* `wikireading_stats` (benchmarks, also reading `wikireading_triples` for the properties'
  datatypes): `property_stats` (kind, date property), `_paper_statistics.json` (the paper's §2
  statistics and Mean F1 bounds beside the build's), `_DATASET_CARD.md`, Mem-Exact leakage shares.
* `wikireading_mem_audit_valid`, `wikireading_mem_audit_test` (benchmarks): the shared memorisation
  audit (`MemAuditStage`, spec §7) of each evaluation split against train, the question (property
  label) as the span and the answer set as the label: Mem-Exact, Mem-Freq, Mem-Uniform decisions
  per instance and their percentages in `_report.json`.

`entbench export wikireading --from OUT --format wikireading-json|recycled --out DIR` writes the
original formats (`entbench.builders.wikireading.export`); `entbench eval wikireading --from OUT
--predictions FILE` scores predictions with the paper's Mean F1 (`evaluate`, `scoring`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from entbench.engine.registry import (
    AuditedTable,
    Export,
    lazy_module,
    register_docs,
    register_stage,
    register_target,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from entbench.builders.edge_probing.stages import mem_audit
    from entbench.builders.wikireading.stages import instances, splits, stats, triples
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    pa = lazy_module("pyarrow")
    mem_audit = lazy_module("entbench.builders.edge_probing.stages.mem_audit")
    instances = lazy_module("entbench.builders.wikireading.stages.instances")
    splits = lazy_module("entbench.builders.wikireading.stages.splits")
    stats = lazy_module("entbench.builders.wikireading.stages.stats")
    triples = lazy_module("entbench.builders.wikireading.stages.triples")

register_stage("wikireading_triples", lambda name: triples.WikiReadingTriples(name))
register_stage("wikireading_instances", lambda name: instances.WikiReadingInstances(name))
register_stage("wikireading", lambda name: splits.WikiReadingSplit(name))
register_stage("wikireading_stats", lambda name: stats.WikiReadingStats(name))


def _mem_audit(name: str, split: str) -> mem_audit.MemAuditStage:
    """The memorisation audit of the split `split` against train."""
    return mem_audit.MemAuditStage(
        name,
        train=("wikireading", "train"),
        evaluation=("wikireading", split),
        span_columns=("question",),
        label_column="answers",
        id_fields=(pa.field("key", pa.string(), nullable=False),),
    )


for _split in ("valid", "test"):
    register_stage(f"wikireading_mem_audit_{_split}", functools.partial(_mem_audit, split=_split))

register_target(
    "wikireading",
    ("wikireading", "wikireading_stats", "wikireading_mem_audit_valid", "wikireading_mem_audit_test"),
    "WikiReading train/valid/test and property statistics (sources: wikidata, wikipedia)",
    card="wikireading",
    exports=(Export("wikireading", "wikireading-json"), Export("wikireading", "recycled")),
    audited=(
        AuditedTable("wikireading", "train", "train", ("document_id",), "wikipedia", ("qid",)),
        AuditedTable("wikireading", "valid", "evaluation", ("document_id",), "wikipedia", ("qid",)),
        AuditedTable("wikireading", "test", "evaluation", ("document_id",), "wikipedia", ("qid",)),
    ),
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("wikireading_triples", "wikireading_triples — answer sets from statements")
register_docs("wikireading_instances", "wikireading_instances — answer sets with their article")
register_docs("wikireading", "wikireading — train, valid and test splits")
register_docs("wikireading_stats", "wikireading_stats — per-property statistics")
register_docs(
    "mem_audit",
    "mem_audit — memorisation audits",
    instances=("wikireading_mem_audit_valid", "wikireading_mem_audit_test"),
)
