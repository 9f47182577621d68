"""The leakage-audit section: what the target's `MemAuditStage`s found (`docs/stages.md`, mem_audit).

Mem-Exact, Mem-Freq, Mem-Uniform (Ray Choudhury & Kalra 2023, §3): the share of
evaluation items a baseline memorising train solves, in the audit's mode (`strict` by default in
builds, `eptest` when asked for). The audits of a target (e.g. WikiReading's valid and test
against train, the question as the span and the answer set as the label) record the counts in
their manifest stats, and each decision's reason; this section reports the shares, the mode and
how many items each reason covers. A benchmark with splits and no registered audit says so.
"""

from __future__ import annotations

from entbench.builders.edge_probing.stages.mem_audit import MemAuditStage
from entbench.cards.build_view import BuildView
from entbench.cards.charts import md_table
from entbench.cards.edge_probing import MODE_TEXT
from entbench.cards.model import Block, Chart, Section
from entbench.cards.stage_docs import section_link
from entbench.engine import registry
from entbench.filters.memorization import HEURISTICS
from entbench.filters.memorization_reasons import DECISION_REASONS, UNSEEN_LABEL

LABELS = {"mem_exact": "Mem-Exact", "mem_freq": "Mem-Freq", "mem_uniform": "Mem-Uniform"}


def _rows_solved(view: BuildView, stage: str) -> str:
    """Evaluation rows with a copy solved by Mem-Exact, over all evaluation rows (`decisions`)."""
    ((solved, rows),) = view.query(
        "SELECT count(DISTINCT eval_index) FILTER (WHERE mem_exact), count(DISTINCT eval_index) FROM d",
        {"d": (stage, "decisions")},
    )
    return f"{100 * int(solved) / int(rows):.2f}%" if rows else "–"


def audits(view: BuildView) -> list[tuple[str, MemAuditStage]]:
    """The target's memorisation-audit stages, in build order."""
    found = []
    for name in view.order:
        stage = registry.find_stage(name)
        if isinstance(stage, MemAuditStage):
            found.append((name, stage))
    return found


def leakage_section(view: BuildView, *, has_splits: bool) -> Section | None:
    """Per audit: evaluated items and the share each heuristic solves; None when not applicable."""
    found = audits(view)
    if not found:
        if not has_splits:
            return None
        return Section(
            "Leakage audit",
            (
                "No memorisation audit is registered for this target: register a "
                "`MemAuditStage` per evaluation split (see "
                "`entbench.builders.edge_probing.stages.mem_audit`) to report Mem-Exact overlap with "
                "train here.",
            ),
        )
    rows = []
    for name, stage in found:
        stats = view.stats(name)
        rows.append(
            (
                f"`{name}`",
                f"`{'.'.join(stage.evaluation)}`",
                f"`{'.'.join(stage.train)}`",
                " + ".join(f"`{c}`" for c in stage.span_columns) + f" → `{stage.label_column}`",
                f"`{_mode(view, name)}`",
                int(stats.get("eval_rows", 0)),
                int(stats.get(f"dropped_{UNSEEN_LABEL}", 0)),
                int(stats.get("test_items", 0)),
                *(f"{float(stats.get(f'{h}_pct', 0.0)):.2f}%" for h in HEURISTICS),
                _rows_solved(view, name),
            )
        )
    modes = sorted({_mode(view, name) for name, _ in found})
    blocks: list[Block] = [
        f"Share of evaluation items a train-memorising baseline solves (`{section_link('mem_audit')}`; "
        "Ray Choudhury & Kalra 2023 §3). "
        + " ".join(MODE_TEXT.get(mode, f"Mode `{mode}`.") for mode in modes)
        + " Draws are seeded. As in the paper, rows whose label never occurs in train are "
        "dropped first, so the three percentages are of the remaining items; the last column is "
        "the share of all evaluation rows Mem-Exact solves.",
        md_table(
            [
                "audit",
                "evaluated",
                "against",
                "span → label",
                "mode",
                "rows",
                "label unseen in train",
                "items",
                *LABELS.values(),
                "Mem-Exact of all rows",
            ],
            rows,
            "lllllrrrrrrr",
        ),
    ]
    names = tuple(stage.evaluation[1] for _, stage in found)
    series = tuple(
        (LABELS[h], tuple(float(view.stats(n).get(f"{h}_pct", 0.0)) for n, _ in found)) for h in HEURISTICS
    )
    if len(found) == 1:  # one evaluated table: one bar per heuristic, named on the axis
        names, series = tuple(LABELS[h] for h in HEURISTICS), ((names[0], tuple(v[0] for _, v in series)),)
    blocks.append(
        Chart(
            "leakage.png",
            f"{view.target}: evaluation items solved by memorising train",
            names,
            series,
            ylabel="% of evaluated items",
            counts=False,
        )
    )
    blocks.append(
        "Why each item was solved or kept (reason codes: `entbench.filters.memorization_reasons`); "
        "per-item decisions, with their evidence: the `decisions` table of each audit stage "
        "(`entbench inspect`)."
    )
    blocks.append(md_table(["audit", "heuristic", "reason", "items"], _reasons(view, found), "lllr"))
    blocks.append(
        "Against the other benchmarks built in the same directory (documents, entities and "
        "(mention, entity) pairs this one's evaluation data shares with their training data): "
        "`entbench audit leakage --from BUILD_OUT` (the build's `--out`)."
    )
    return Section("Leakage audit", tuple(blocks))


def _mode(view: BuildView, stage: str) -> str:
    """The audit's `mode` parameter, as its manifest records it."""
    return str(view.manifests[stage].get("params", {}).get("mode", "?"))


def _reasons(view: BuildView, found: list[tuple[str, MemAuditStage]]) -> list[tuple[str, str, str, int]]:
    """(audit, heuristic, reason, items) for every reason an audit's decisions carry."""
    rows = []
    for name, _ in found:
        stats = view.stats(name)
        for heuristic in HEURISTICS:
            for reason in DECISION_REASONS:
                count = int(stats.get(f"{heuristic}_{reason}", 0))
                if count:
                    rows.append((f"`{name}`", LABELS[heuristic], f"`{reason}`", count))
    return rows
