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
    from entbench.builders.enteval.stages import (
        cap,
        cerp,
        common,
        efp,
        ert,
        esr,
        et,
        ned,
        rare,
        tasks,
        wikient,
    )
else:  # imported when a stage of theirs is first looked up (`registry.lazy_module`)
    cap, cerp, common, efp, ert, esr, et, ned, rare, tasks, wikient = (
        lazy_module(f"entbench.builders.enteval.stages.{name}")
        for name in ("cap", "cerp", "common", "efp", "ert", "esr", "et", "ned", "rare", "tasks", "wikient")
    )

register_stage("wikient_descriptions", lambda name: wikient.WikiEntDescriptions(name))
register_stage("wikient", lambda name: wikient.WikiEnt(name))
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

#: The task stages' names (each class's `name`), as the registry declares them before any is made.
TASK_NAMES = (
    "enteval_kore",
    "enteval_wikisrs",
    "enteval_ert",
    "enteval_conll_yago",
    "enteval_rare",
    "enteval_cap",
    "enteval_cerp",
    "enteval_et",
    "enteval_efp",
)


@functools.cache
def task_stages() -> dict[str, common.TaskStage]:
    """The task stages by name, one instance each, in the order `enteval_tasks` gathers them: the
    registry's and the ones `enteval_tasks` reads are the same (made with the first looked up)."""
    made = (
        esr.KoreStage(),
        esr.WikiSrsStage(),
        ert.ErtStage(),
        ned.NedStage(),
        rare.RareStage(),
        cap.CapStage(),
        cerp.CerpStage(),
        et.EtStage(),
        efp.EfpStage(),
    )
    return {stage.stage_name: stage for stage in made}


for _name in TASK_NAMES:
    register_stage(_name, lambda name: task_stages()[name])
register_stage(
    "enteval_tasks", lambda name: tasks.EntEvalTasks(tuple(task_stages().values()), stage_name=name)
)
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
