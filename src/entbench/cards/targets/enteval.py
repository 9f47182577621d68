"""The `enteval-tasks` card: which EntEval tasks were built (Chen et al. 2019, §3), the lines of
their files, the paper's Table 1 beside this build (`cards.targets.enteval_table1`), and how their
entity names were matched to Wikipedia articles.

The `enteval_tasks` stage lists every task (`tasks`: task, stage, status, files, lines); each task
stage counts the lines of each file (`lines_<file>`) and, where names get descriptions, how each
name matched (`names_<method>`).
"""

from __future__ import annotations

from entbench.builders.enteval.stages.tasks import TASK_DIR
from entbench.cards.build_view import BuildView
from entbench.cards.charts import bar_chart, md_table
from entbench.cards.hub import ENTEVAL
from entbench.cards.model import Block, Chart, Content, Section
from entbench.cards.registry import register_card
from entbench.cards.stage_docs import stage_link
from entbench.cards.targets.enteval_table1 import table1_blocks

#: How a name found its article, in the order they are tried (`enteval.titles`).
METHODS = ("exact", "redirect", "casefold", "fuzzy", "unmatched")
#: The paper's names of the tasks.
TASK_NAMES = {
    "kore": "ESR KORE",
    "wikisrs": "ESR WikiSRS",
    "ert": "ERT",
    "conll_yago": "NED CoNLL-YAGO",
    "rare": "Rare",
    "cap": "CAP",
    "cerp": "CERP",
    "et": "ET",
    "efp": "EFP",
}


def enteval_section(view: BuildView) -> Section | None:
    """Per task: status, files, lines, name matching; lines and matching plots."""
    stage = view.find("tasks", columns=("task", "stage", "status", "files", "lines"))
    if stage is None:
        return None
    tasks = view.query(
        "SELECT task, stage, status, files, lines FROM t ORDER BY task", {"t": (stage, "tasks")}
    )
    rows = []
    built: list[tuple[str, float]] = []
    status_of: dict[str, bool] = {}
    matching: dict[str, dict[str, int]] = {}
    for task, task_stage, status, files, lines in tasks:
        name = TASK_NAMES.get(str(task), str(task))
        stats = view.stats(str(task_stage))
        per_file = ", ".join(f"`{f}` {int(stats.get(f'lines_{f}', 0)):,}" for f in (files or []))
        names = {m: int(stats.get(f"names_{m}", 0)) for m in METHODS}
        if any(names.values()):
            matching[name] = names
        dropped = sum(int(v) for k, v in stats.items() if k.startswith("dropped_") and isinstance(v, int))
        rows.append(
            (
                name,
                f"`{task_stage}`",
                status,
                int(lines),
                per_file or "–",
                dropped,
                f"`{stage_link(str(task_stage))}`",
            )
        )
        status_of[str(task_stage)] = status == "built"
        if status == "built":
            built.append((name, float(lines)))
    skipped = [r[0] for r in rows if r[2] != "built"]
    blocks: list[Block] = [
        "Each task's files are written in the format its EntEval loader reads, under "
        f"`{view.dirs[stage].relative_to(view.out)}/{TASK_DIR}/` (`entbench export enteval --format tasks` "
        "copies them). Items lost on the way are counted by reason in the statistics below.",
        md_table(
            ["task", "stage", "status", "lines", "lines per file", "items dropped", "described in"],
            rows,
            "lllrlrl",
        ),
    ]
    if skipped:
        blocks.append("Skipped (no source file named in the parameters): " + ", ".join(skipped) + ".")
    blocks.extend(table1_blocks(view, status_of))
    blocks.append(
        bar_chart("task_lines.png", f"{view.target}: lines per task file set", built, ylabel="lines")
    )
    if matching:
        tasks_matched = tuple(matching)
        methods = [m for m in METHODS if any(matching[t][m] for t in tasks_matched)]
        blocks.append(
            "Entity names given a Wikipedia description, by how they matched an article title "
            "(exactly, through a redirect, ignoring case, by fuzzy score, or not at all):"
        )
        blocks.append(
            md_table(
                ["task", *methods],
                [(t, *(matching[t][m] for m in methods)) for t in tasks_matched],
                "l" + "r" * len(methods),
            )
        )
        blocks.append(
            Chart(
                "name_matching.png",
                f"{view.target}: entity names by how they matched an article",
                tasks_matched,
                tuple((m, tuple(float(matching[t][m]) for t in tasks_matched)) for m in methods),
                ylabel="names",
            )
        )
    return Section("EntEval tasks", tuple(blocks))


register_card(
    "enteval-tasks",
    sections=(enteval_section,),
    summary=(
        "EntEval (Chen et al. 2019) task files: entity typing, coreference arcs, factuality of claims, "
        "ConceptNet statements, entity similarity and relatedness (KORE, WikiSRS), relation typing, "
        "disambiguation and rare entities, in the formats the EntEval loaders read, beside the "
        "paper's Table 1."
    ),
    content=Content(
        wikipedia="Wikipedia descriptions (the first words of articles) attached to the KORE, "
        "WikiSRS, ERT and CoNLL-YAGO entities, and alias-table candidates taken from link anchors",
        other="the lines of each task's own source files (KORE, WikiSRS, Freebase tuples, AIDA "
        "CoNLL-YAGO, the rare-entity data, PreCo, ConceptNet, the ultra-fine entity typing crowd "
        "data, FEVER), each under its own terms",
    ),
    hub=ENTEVAL,
)
