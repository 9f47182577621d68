"""The Markdown report of `entbench audit leakage` (`cards.cross_leakage` computes it)."""

from __future__ import annotations

from entbench.cards.charts import fmt, md_escape, md_table
from entbench.cards.cross_leakage import KINDS, Benchmark, LeakageReport, Measure, Overlap

KIND_TITLES = {"documents": "documents", "entities": "entities", "pairs": "(mention, entity) pairs"}


def leakage_markdown(report: LeakageReport) -> str:
    """The whole report: what was compared, the benchmarks, one row per comparison, examples."""
    lines = [
        "# Leakage across benchmarks",
        "",
        f"Build: `{report.build}`. For every benchmark built there, its evaluation data (its evaluation "
        "splits, or all of it where it has no split) against the training data of every other one "
        "(its train split, or all of it): the **documents** (Wikipedia page ids, compared within one "
        "wiki only), **entities** (QIDs) and **(mention, entity) pairs** both hold. A cell reads "
        "*shared of evaluated* distinct keys, then the evaluation rows carrying a shared key; `–` "
        "where one side has no such key. Within one benchmark, its splits are audited by its own "
        "leakage audit (Mem-Exact, Mem-Freq, Mem-Uniform; its dataset card).",
        "",
        "## Benchmarks",
        "",
        md_table(
            ["benchmark", "table", "role", "rows", *(KIND_TITLES[k] for k in KINDS)],
            [row for b in report.benchmarks for row in _benchmark_rows(b)],
            "lllr" + "l" * len(KINDS),
        ),
    ]
    reasons: dict[str, list[str]] = {}
    for target, reason in report.not_audited:
        reasons.setdefault(reason, []).append(f"`{target}`")
    for reason, targets in sorted(reasons.items()):
        lines += ["", f"Not audited ({reason}): {', '.join(targets)}."]
    lines += ["", "## Overlaps", ""]
    if not report.overlaps:
        lines.append("No two benchmarks built here carry keys of a kind in common, so nothing was compared.")
    else:
        lines.append(
            md_table(
                [
                    "evaluated",
                    "rows",
                    "against (training data)",
                    *(f"shared {KIND_TITLES[k]}" for k in KINDS),
                ],
                [_overlap_row(o) for o in report.overlaps],
                "lrl" + "l" * len(KINDS),
            )
        )
    examples = [o for o in report.overlaps if any(m is not None and m.shared for m in o.measures.values())]
    if examples:
        lines += ["", "## Examples", "", "The first shared keys of each comparison that shares any."]
        for overlap in examples:
            lines += ["", f"### `{overlap.table}` against {overlap.against}", ""]
            for kind in KINDS:
                measure = overlap.measures[kind]
                if measure is not None and measure.shared:
                    shown = ", ".join(_example(kind, e) for e in measure.examples)
                    left = measure.shared - len(measure.examples)
                    more = f" (and {fmt(left)} more)" if left > 0 else ""
                    lines.append(f"- {KIND_TITLES[kind]}: {shown}{more}")
    return "\n".join(lines) + "\n"


def _benchmark_rows(benchmark: Benchmark) -> list[tuple[str, ...]]:
    """One row per table of a benchmark: its role, rows and the columns read for each kind."""
    rows = []
    for part in benchmark.parts:
        wiki = f" ({benchmark.wiki})" if benchmark.wiki else ""
        cells = {
            "documents": f"`{', '.join(part.documents)}`{wiki}" if part.documents else "–",
            "entities": f"`{', '.join(part.entities)}`" if part.entities else "–",
            "pairs": f"`{part.pair[0]}` + `{part.pair[1]}`" if part.pair else "–",
        }
        rows.append(
            (
                benchmark.target,
                f"`{part.name}`",
                part.role,
                fmt(benchmark.rows[part.name]),
                *(cells[kind] for kind in KINDS),
            )
        )
    return rows


def _overlap_row(overlap: Overlap) -> tuple[str, ...]:
    against = (
        f"{overlap.against} ({overlap.against_role}: {', '.join(f'`{t}`' for t in overlap.against_tables)})"
    )
    return (
        f"`{overlap.table}`",
        fmt(overlap.rows),
        against,
        *(_cell(overlap.measures[kind]) for kind in KINDS),
    )


def _cell(measure: Measure | None) -> str:
    if measure is None:
        return "–"
    if not measure.comparable:
        return f"not compared ({measure.reason})"
    rows = f"{fmt(measure.evaluated_rows)} {'row' if measure.evaluated_rows == 1 else 'rows'}"
    return f"**{fmt(measure.shared)}** of {fmt(measure.evaluated)} ({rows})"


def _example(kind: str, example: dict[str, object]) -> str:
    if kind == "documents":
        title = example.get("title")
        return f"{example['page_id']}" + (f" *{md_escape(str(title))}*" if title else "")
    if kind == "entities":
        label = example.get("label")
        return f"{example['qid']}" + (f" ({md_escape(str(label))})" if label else "")
    return f"“{md_escape(str(example['mention']))}” → {example['qid']}"
