"""Write `<out>/cards/<target>/`: `README.md` (a Hugging Face-style dataset card), its PNG plots
and `card.json` (how the build was invoked, which plots were drawn, skipped or failed).

The card is assembled in a temporary directory and swapped into place under the build directory's
lock (`<out>/.lock`, the one `entbench build` holds), so a reader never sees half a card and a card
is never written from a half-finished build. A chart or section that raises is replaced by a note
in the card and counted in `card.json`: a plot never fails a build (`card_after_build`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from entbench.cards import generic
from entbench.cards.build_view import BuildView
from entbench.cards.charts import fmt
from entbench.cards.hub import citation_blocks
from entbench.cards.leakage import leakage_section
from entbench.cards.licence import licence_section
from entbench.cards.model import CardResult, Chart, Invocation, Section
from entbench.cards.plot_reuse import chart_key, copy_drawn, drawn_before, drawn_plots, remember_drawn
from entbench.cards.registry import card_for
from entbench.engine.build_out import build_lock, current_variant, selected_variant

CARDS_DIR = "cards"
README = "README.md"
CARD_JSON = "card.json"
CARD_FORMAT = "entbench.card/1"

Log = Callable[[str], None]


def card_dir(out: str | Path, target: str) -> Path:
    """Where the card of `target` lives in the build directory `out`: `cards/<target>/` for the
    variant built last, `cards/<target>@<variant>/` for one selected with `--variant`."""
    variant = selected_variant(Path(out), target)
    return Path(out) / CARDS_DIR / (target if variant is None else f"{target}@{variant}")


def write_card(out: str | Path, target: str, *, invocation: Invocation | None = None) -> CardResult:
    """(Re)generate the card of `target` from the build in `out`.

    Without `invocation` the one recorded in an existing `card.json` is kept (so `entbench card`
    keeps the exact rebuild command of the build); without either, the command is derived from the
    manifests. Raises `UserError` when the target was not built in `out`.
    """
    root = Path(out)
    view = BuildView(root, target)
    try:
        with build_lock(root):
            final = card_dir(root, target)
            if invocation is None:
                invocation = recorded_invocation(final)
            # Left by a card writer killed half-way (we hold the lock: nobody else owns them).
            for stale in [*final.parent.glob(f".{target}.tmp-*"), *final.parent.glob(f".{target}.old-*")]:
                shutil.rmtree(stale, ignore_errors=True)
            tmp = final.parent / f".{target}.tmp-{os.getpid()}"
            tmp.mkdir(parents=True)
            try:
                result = CardResult(directory=str(final), readme=str(final / README))
                text = _render(view, invocation, tmp, result, drawn_plots(final / CARD_JSON))
                (tmp / README).write_text(text, encoding="utf-8")
                doc = {
                    "format": CARD_FORMAT,
                    "target": target,
                    "invocation": None if invocation is None else invocation.to_json(),
                    **result.to_json(),
                }
                (tmp / CARD_JSON).write_text(
                    json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8"
                )
                _swap(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        view.close()
    return result


def card_after_build(
    out: str | Path, target: str, invocation: Invocation | None, log: Log | None = None
) -> CardResult | None:
    """Write the card at the end of `entbench build`; never raises (the build itself succeeded).

    Failures are reported on the log and counted in `card.json`; the card can be regenerated with
    `entbench card TARGET --from OUT`.
    """
    say = log or (lambda msg: print(msg, file=sys.stderr))
    try:
        result = write_card(out, target, invocation=invocation)
    except Exception as exc:  # a card must never fail a finished build
        say(
            f"{target}: card not written ({type(exc).__name__}: {exc}); "
            f"run `entbench card {target} --from {out}`"
        )
        return None
    if result.failures:
        failed = ", ".join([*result.plots_failed, *result.sections_failed])
        say(f"{target}: card {result.readme} written with {result.failures} failure(s): {failed}")
    else:
        say(f"{target}: card {result.readme} ({len(result.plots_written)} plot(s))")
    return result


def recorded_invocation(directory: Path) -> Invocation | None:
    """The build invocation kept in an existing card's `card.json`, if readable."""
    path = directory / CARD_JSON
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return None if doc.get("invocation") is None else Invocation.from_json(doc["invocation"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# --- assembly --------------------------------------------------------------------------------------
def _sections(view: BuildView, invocation: Invocation | None, result: CardResult) -> list[Section]:
    card = card_for(view.target)
    builders: list[tuple[str, Callable[[], Section | None]]] = [
        ("Dataset structure", lambda: generic.structure_section(view, card)),
        *((getattr(fn, "__name__", "section"), _bind(fn, view)) for fn in card.sections),
        ("Leakage audit", lambda: leakage_section(view, has_splits=bool(card.splits))),
        ("Source dumps", lambda: generic.sources_section(view)),
        ("Parameters", lambda: generic.parameters_section(view)),
        ("Statistics by reason", lambda: generic.stats_section(view)),
        ("How to rebuild", lambda: generic.rebuild_section(view, invocation)),
        ("Citation", lambda: Section("Citation", citation_blocks(card.hub))),
        ("Licence", lambda: licence_section(view, card)),
    ]
    sections: list[Section] = []
    for name, build in builders:
        try:
            section = build()
        except Exception as exc:  # one broken section must not lose the card
            result.sections_failed[name] = f"{type(exc).__name__}: {exc}"
            section = Section(
                name, (f"*This section could not be generated ({type(exc).__name__}: {exc}).*",)
            )
        if section is not None:
            sections.append(section)
    return sections


def card_sections(view: BuildView, invocation: Invocation | None = None) -> list[Section]:
    """The sections of the card of `view`'s target, as `write_card` assembles them (for tests and
    tools that want the charts' data rather than their pictures)."""
    return _sections(view, invocation, CardResult(directory="", readme=""))


def render_card(
    view: BuildView, invocation: Invocation | None, directory: Path, built: Path | None = None
) -> tuple[str, CardResult]:
    """The card's README text, its plots drawn into `directory` (`entbench publish` writes a card
    into the folder it publishes, with `view.published` saying where each table is). A plot of the
    same chart data as one in the card directory `built` is copied from there (`cards.plot_reuse`)."""
    result = CardResult(directory=str(directory), readme=str(directory / README))
    earlier = drawn_plots(built / CARD_JSON) if built is not None else {}
    return _render(view, invocation, directory, result, earlier), result


def _bind(fn: Callable[[BuildView], Section | None], view: BuildView) -> Callable[[], Section | None]:
    return lambda: fn(view)


def _render(
    view: BuildView,
    invocation: Invocation | None,
    directory: Path,
    result: CardResult,
    earlier: dict[str, Path],
) -> str:
    card = card_for(view.target)
    parts = [generic.front_matter(view, card), generic.overview(view, card)]
    for section in _sections(view, invocation, result):
        parts.append(f"## {section.title}")
        for block in section.blocks:
            parts.append(_chart(block, directory, result, earlier) if isinstance(block, Chart) else block)
    parts.append("## About this card")
    parts.append(_about(view, result))
    return generic.join_blocks(parts) + "\n"


def draw(chart: Chart, path: Path) -> None:
    """Draw `chart` as a PNG at `path` (or write the PNG this process drew for the same chart
    before, `plot_reuse.drawn_before`). matplotlib (~1 s to import) is imported only here: a build
    that finds its card up to date imports this module but draws nothing."""
    key = chart_key(chart)
    png = drawn_before(key)
    if png is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return
    from entbench.cards.plots import draw as draw_png

    draw_png(chart, path)
    remember_drawn(key, path.read_bytes())


def _chart(chart: Chart, directory: Path, result: CardResult, earlier: dict[str, Path]) -> str:
    if chart.empty:
        result.plots_skipped_empty.append(chart.file)
        return f"*No data to plot for “{chart.title}” (`{chart.file}` not drawn).*"
    if chart.bars == 1:
        result.plots_single_bar.append(chart.file)
        return single_bar_sentence(chart)
    try:
        key = chart_key(chart)
        if not copy_drawn(earlier, key, directory / chart.file):
            draw(chart, directory / chart.file)
    except Exception as exc:  # a plot must never fail the card or the build
        result.plots_failed[chart.file] = f"{type(exc).__name__}: {exc}"
        return f"*Plot `{chart.file}` failed ({type(exc).__name__}: {exc}); counted in `card.json`.*"
    result.plots_written.append(chart.file)
    result.plot_keys[chart.file] = key
    alt = chart.title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")  # [[…]] in a title
    return f"![{alt}]({chart.file})"


def single_bar_sentence(chart: Chart) -> str:
    """What a chart with one nonzero bar shows, in words (a plot of one bar says nothing more)."""
    ((label, series, value),) = [
        (label, name, v)
        for name, values in chart.series
        for label, v in zip(chart.labels, values, strict=True)
        if v
    ]
    amount = fmt(int(value) if chart.counts and value == int(value) else value)
    if chart.style == "hist":  # one bin holds everything: say which
        what = f"all {amount} {chart.ylabel or 'items'}" + (f" of {series}" if series else "")
        said = f"{what}: {chart.xlabel or 'value'} = {label}"
    else:
        unit = chart.xlabel if chart.style == "barh" else chart.ylabel
        said = f"{label} ({series})" if series else label
        said += f": {amount}{f' {unit}' if unit else ''}"
        if len(chart.labels) * len(chart.series) > 1:
            said += "; every other value is 0"
    return f"*“{chart.title}” has a single bar, so it is said here instead of drawn: {said}.*"


def _about(view: BuildView, result: CardResult) -> str:
    variant = selected_variant(view.out, view.target)
    found = current_variant(view.out, view.target)
    option = f" --variant {variant}" if variant else ""
    if view.published:
        return "\n\n".join(
            [
                f"Generated by `entbench publish {view.target}` from a build's manifests and shards: the "
                "files under `data/` are the build's shards, byte for byte; `croissant.json` describes "
                "them in the Croissant format. Upload the folder as it is with "
                "`huggingface-cli upload USER/NAME . --repo-type dataset`.",
                f"Plots drawn: {len(result.plots_written)}; without data: {len(result.plots_skipped_empty)}; "
                f"of a single bar, said in words: {len(result.plots_single_bar)}; "
                f"failed: {len(result.plots_failed)}; sections failed: {len(result.sections_failed)}.",
            ]
        )
    lines = [
        f"Generated by entbench from the listing of {view.target} in its build directory "
        f"(`targets/{view.target}.json`{' of variant ' + variant if variant else ''}) and the "
        f"manifests it names; regenerate it with `entbench card {view.target} --from BUILD_OUT{option}`.",
        f"Plots drawn: {len(result.plots_written)}; without data: {len(result.plots_skipped_empty)}; "
        f"of a single bar, said in words: {len(result.plots_single_bar)}; "
        f"failed: {len(result.plots_failed)}; sections failed: {len(result.sections_failed)} "
        f"(details in `{CARD_JSON}`).",
    ]
    if found is not None:
        which = "selected with `--variant`" if variant else "built last"
        lines.append(
            f"Variant `{found[0]}` of {view.target} ({which}); the build directory holds "
            f"{found[1]} variant{'s' if found[1] != 1 else ''} of it (`entbench summary` lists them)."
        )
    return "\n\n".join(lines)


# --- files -----------------------------------------------------------------------------------------
def _swap(tmp: Path, final: Path) -> None:
    """Put the finished card in place of the old one (both renames within `cards/`)."""
    old = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists():
        os.rename(final, old)
    os.rename(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
