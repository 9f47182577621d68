"""The leakage audit of every Hansel output: Mem-Exact applied to entity linking (spec §5, §7).

Ray Choudhury & Kalra (2023, §3) call a test item solved by memorisation ("Mem-Exact") when its
span occurs in train with only its label. For entity linking the span is the mention and the label
the gold entity. The shared `MemAuditStage` (strict mode by default: Mem-Exact = the mention's only
train entity is the gold, Mem-Freq = its most frequent train entity is, Mem-Uniform = a uniform
draw among its train entities is) decides each row, with a reason. This subclass adds to the
manifest stats the share the Hansel issue asks for: an evaluation mention is leaked when its
(mention, gold) pair occurs in train, whatever other entities the mention has there (Mem-Exact's
reasons `memorization_reasons.PAIR_IN_TRAIN`, in either mode). The share is over every audited row
(rows whose gold never occurs in train cannot be leaked, so they count as not leaked, whereas the
audit's own `mem_exact_pct` leaves them out):

    leakage_rows            evaluation rows with a mention and a gold
    leakage_pairs_in_train  of those, rows whose (mention, gold) occurs in train
    leakage_pair_share_pct  100 * leakage_pairs_in_train / leakage_rows (0.0 when there are no rows)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from entbench.builders.edge_probing.stages.mem_audit import MemAuditParams, MemAuditStage
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats
from entbench.filters.memorization_reasons import PAIR_IN_TRAIN

#: The training table's (mention, entity) columns.
TRAIN_COLUMNS = ("mention", "gold_id")


@dataclass(eq=False, init=False)
class HanselLeakageAudit(MemAuditStage):
    """`MemAuditStage` plus the share of evaluation rows whose (mention, gold) pair is in train.

    The evaluation table's pair may live in other columns than train's (`mention`, `gold_id`): the
    few-shot candidates' (mention, at1), the zero-shot pool's (title, qid).
    """

    #: Train's (mention, entity) columns.
    train_columns: tuple[str, str] = TRAIN_COLUMNS

    def __init__(
        self,
        name: str,
        *,
        train: tuple[str, str],
        evaluation: tuple[str, str],
        evaluation_columns: tuple[str, str],
        id_fields: Sequence[pa.Field],
        train_columns: tuple[str, str] = TRAIN_COLUMNS,
    ) -> None:
        span, label = evaluation_columns
        super().__init__(
            name,
            train=train,
            evaluation=evaluation,
            span_columns=(span,),
            label_column=label,
            id_fields=tuple(id_fields),
        )
        self.train_columns = train_columns

    def columns(self, split: str) -> tuple[tuple[str, ...], str]:
        """Train's (mention, entity) columns are `train_columns`; the evaluation table's its own."""
        if split == "train":
            return (self.train_columns[0],), self.train_columns[1]
        return super().columns(split)

    def finalize(self, ctx: StageContext[MemAuditParams], directory: Path, stats: Stats) -> dict[str, Any]:
        """The audit's report and percentages, and the leakage share over all audited rows."""
        extra = super().finalize(ctx, directory, stats)
        rows = stats.get("eval_rows", 0) - stats.get("eval_rows_null", 0)
        # One copy per row: an entity-linking row has a single label (EPtest's copies, C1, need several).
        leaked = sum(stats.get(f"mem_exact_{reason}", 0) for reason in PAIR_IN_TRAIN)
        share = round(100.0 * leaked / rows, 4) if rows else 0.0
        return {
            **extra,
            "leakage_rows": rows,
            "leakage_pairs_in_train": leaked,
            "leakage_pair_share_pct": share,
        }
