"""EntEval (Chen et al. 2019; spec §8): registers the WikiEnt and task stages and the `wikient` and
`enteval-tasks` targets.

    wikipedia ─┬──────────────> wikient_descriptions ──┐
    wikidata ──┴─> title_qid ──────────────────────────┴─> wikient

    wikient_descriptions, title_qid ─┬─> enteval_kore, enteval_wikisrs, enteval_ert ─┐
    + alias_table ───────────────────┴─> enteval_conll_yago ─────────────────────────┤
    (task files only) ──> enteval_et, enteval_efp, enteval_rare, enteval_cap, enteval_cerp ─┴─> enteval_tasks

`builders.enteval.stages.wikient` and `builders.enteval.stages.tasks` describe the stages.
"""

from __future__ import annotations

from entbench.builders.enteval.stages.cap import CapStage
from entbench.builders.enteval.stages.cerp import CerpStage
from entbench.builders.enteval.stages.common import TaskStage
from entbench.builders.enteval.stages.efp import EfpStage
from entbench.builders.enteval.stages.ert import ErtStage
from entbench.builders.enteval.stages.esr import KoreStage, WikiSrsStage
from entbench.builders.enteval.stages.et import EtStage
from entbench.builders.enteval.stages.ned import NedStage
from entbench.builders.enteval.stages.rare import RareStage
from entbench.builders.enteval.stages.tasks import EntEvalTasks
from entbench.builders.enteval.stages.wikient import WikiEnt, WikiEntDescriptions
from entbench.engine.registry import AuditedTable, Export, register_docs, register_stage, register_target

register_stage(WikiEntDescriptions())
register_stage(WikiEnt())
register_target(
    "wikient",
    ("wikient",),
    "WikiEnt: hyperlinked sentences with the linked articles' descriptions (sources: wikipedia, "
    "wikidata; EntEval §4.3)",
    card="wikient",
    exports=(Export("enteval", "wikient-tsv"),),
    # An instance uses two documents: its sentence's page and the linked page, whose first 100
    # tokens are its description.
    audited=(
        AuditedTable(
            "wikient",
            "wikient",
            "all",
            ("page_id", "target_page_id"),
            "wikipedia",
            ("target_qid",),
            ("mention", "target_qid"),
        ),
    ),
)

TASK_STAGES: tuple[TaskStage, ...] = (
    KoreStage(),
    WikiSrsStage(),
    ErtStage(),
    NedStage(),
    RareStage(),
    CapStage(),
    CerpStage(),
    EtStage(),
    EfpStage(),
)
for _stage in TASK_STAGES:
    register_stage(_stage)
register_stage(EntEvalTasks(TASK_STAGES))
register_target(
    "enteval-tasks",
    ("enteval_tasks",),
    "EntEval task files (ESR KORE/WikiSRS, ERT, NED CoNLL-YAGO, Rare, CAP, CERP, ET, EFP) from local "
    "task sources named by parameters; a task without sources is skipped and listed",
    card="enteval",
    exports=(Export("enteval", "tasks"),),
    audited=(),  # each task's tables, found in the build (`cards.cross_leakage`)
)

# The sections of the stage reference (docs/stages.md) describing these stages.
register_docs("wikient_descriptions", "wikient_descriptions — article descriptions")
register_docs("wikient", "wikient — hyperlinked sentences")
register_docs("enteval_tasks", "enteval_tasks — the EntEval task files")
register_docs(
    "enteval_esr",
    "enteval_kore, enteval_wikisrs — entity similarity and relatedness",
    instances=("enteval_kore", "enteval_wikisrs"),
)
register_docs("enteval_ert", "enteval_ert — entity relation typing")
register_docs("enteval_conll_yago", "enteval_conll_yago — named entity disambiguation")
register_docs("enteval_rare", "enteval_rare — rare entity prediction")
register_docs("enteval_cap", "enteval_cap — coreference arc prediction")
register_docs("enteval_cerp", "enteval_cerp — contextualized entity relationship prediction")
register_docs("enteval_et", "enteval_et — entity typing")
register_docs("enteval_efp", "enteval_efp — entity factuality prediction")
