"""Dataset cards written by `entbench build` and `entbench card`, on real builds.

The kb, alias-table, WikiReading and Hansel cards are checked against counts taken straight from
the built shards of the demo world (`world_out`, built once per session: read only). Tests that
write a card (regeneration, failures) build their own small target on the bundled fixtures;
WikiReading has no instance there, which checks the "no data" path of its card.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import Result

from entbench.cards import writer
from entbench.cards.build_view import BuildView
from entbench.cards.charts import int_bins
from entbench.cards.model import Chart
from entbench.cards.targets.alias_table import alias_section
from entbench.cards.targets.hansel import hansel_section
from entbench.cards.targets.wikireading import wikireading_section
from entbench.engine.manifest import load_manifest
from tests.cards.card_support import assert_real_png, build, seed_scans
from tests.conftest import SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

CLI = Callable[[list[str]], Result]


def column(stage_dir: Path, table: str, name: str) -> list[object]:
    manifest = load_manifest(stage_dir)
    return [
        v
        for s in manifest["outputs"][table]["shards"]
        for v in pq.read_table(stage_dir / s["file"], columns=[name]).column(name).to_pylist()
    ]


def card_json(out: Path, target: str) -> dict[str, object]:
    return dict(json.loads((out / "cards" / target / "card.json").read_text()))


def stage_dirs(out: Path, target: str) -> dict[str, Path]:
    """Stage name -> output directory of a built target (its `targets/<target>.json`)."""
    listing = json.loads((out / "targets" / f"{target}.json").read_text())
    return {name: out / rel for name, rel in listing["stages"].items()}


@pytest.fixture(scope="module")
def kb_build(
    tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds
) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("kb")
    samples_builds.seed(out, "kb")  # the build below finds the stages done and writes the card
    return out, build("kb", out)


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory, samples_builds: SamplesBuilds) -> Path:
    """The `alias-table` target on the fixtures; its `wikidata` and `wikipedia` scans seed other builds."""
    out = tmp_path_factory.mktemp("scans")
    samples_builds.seed(out, "alias-table")
    build("alias-table", out)
    return out


# --- kb ------------------------------------------------------------------------------------------
def test_kb_card_counts_coarse_types_from_the_shards(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "kb")
    readme = (out / "cards" / "kb" / "README.md").read_text()
    coarse = dict(
        zip(
            column(dirs["coarse_types"], "coarse_types", "qid"),
            column(dirs["coarse_types"], "coarse_types", "coarse"),
            strict=True,
        )
    )
    known = dict(
        zip(
            column(dirs["entity_diff"], "kb_entities", "qid"),
            column(dirs["entity_diff"], "kb_entities", "in_known"),
            strict=True,
        )
    )
    by_type = Counter((c, known[q]) for q, c in coarse.items())
    assert by_type  # the real pair has E_known and E_new entities
    for (label, is_known), n in by_type.items():
        if is_known:
            assert f"| {label} | {n:,} |" in readme
    assert "![kb: coarse-type distribution](coarse_types.png)" in readme
    assert_real_png(out / "cards" / "kb" / "coarse_types.png")
    assert_real_png(out / "cards" / "kb" / "split_sizes.png")
    doc = card_json(out, "kb")
    assert doc["plots_failed"] == {} and doc["sections_failed"] == {}


def test_card_records_the_invocation(kb_build: tuple[Path, dict[str, Path]]) -> None:
    out, _ = kb_build
    doc = card_json(out, "kb")
    assert doc["invocation"] == {"config": str(SAMPLES_CONFIG), "sources": [], "params": [], "out": str(out)}


def test_card_front_matter_sources_and_licence(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "kb")
    readme = (out / "cards" / "kb" / "README.md").read_text()
    assert readme.startswith('---\npretty_name: "entbench kb"\nlicense: cc0-1.0\n')
    for name in ("wikidata_old", "wikidata_new"):
        src = load_manifest(dirs[name])["sources"][name]
        # the dump's file name and the date in it (none in the demo world's names), never a local path
        dump = src["path"].rsplit("/", 1)[-1]
        assert f"| {name} | `{dump}` | – | {src['size']:,} | `{src['sha256']}` |" in readme
    assert "CC0 1.0" in readme and "CC BY-SA" not in readme
    # every drop counter of every stage is listed under its reason
    for stage, directory in dirs.items():
        for key, value in load_manifest(directory)["stats"].items():
            if key.startswith(("old_dropped_", "new_dropped_")):
                assert f"| `{stage}` | `{key}` | {value:,} |" in readme
    assert "```sh\nentbench build kb --out " in readme  # the demo world: no --config, no --source


def test_regenerated_card_is_byte_identical_and_keeps_the_invocation(
    kb_build: tuple[Path, dict[str, Path]], run_cli: CLI
) -> None:
    out, _ = kb_build
    card = out / "cards" / "kb"
    before = {p.name: p.read_bytes() for p in card.iterdir()}
    result = run_cli(["card", "kb", "--from", str(out)])
    assert result.exit_code == 0, result.output
    assert "plot coarse_types.png" in result.output
    assert {p.name: p.read_bytes() for p in card.iterdir()} == before
    assert not [p for p in card.parent.iterdir() if p.name.startswith(".")]  # no temp dirs left


def test_a_card_written_again_copies_the_plots_of_unchanged_charts(
    kb_build: tuple[Path, dict[str, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = kb_build
    card = out / "cards" / "kb"
    doc = card_json(out, "kb")
    keys = doc["plot_keys"]
    assert isinstance(keys, dict) and sorted(keys) == doc["plots_written"] and keys
    before = {name: (card / name).read_bytes() for name in keys}
    drawn: list[str] = []
    draw = writer.draw

    def counted(chart: Chart, path: Path) -> None:
        drawn.append(chart.file)
        draw(chart, path)

    monkeypatch.setattr(writer, "draw", counted)
    writer.write_card(out, "kb")
    assert drawn == []  # every chart's data is the same: copied, not drawn
    assert {name: (card / name).read_bytes() for name in keys} == before
    # A plot recorded for other chart data (a changed value, title or drawing code) is drawn again.
    changed = sorted(keys)[0]
    doc["plot_keys"] = {**keys, changed: "0" * 64}
    (card / "card.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    writer.write_card(out, "kb")
    assert drawn == [changed]
    assert {name: (card / name).read_bytes() for name in keys} == before
    assert card_json(out, "kb")["plot_keys"] == keys


def test_derived_rebuild_command_rebuilds_the_same_fingerprints(
    tmp_path: Path, fixtures_dir: Path, run_cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not seeded: these parameters give a stage of its own, built twice here.
    out = tmp_path / "a"
    dirs = build("wikidata", out, params=["wikidata.num_shards=3", "wikidata.languages=en"])
    (out / "cards" / "wikidata" / "card.json").unlink()
    writer.write_card(out, "wikidata")  # no recorded invocation: derived from the manifests
    readme = (out / "cards" / "wikidata" / "README.md").read_text()
    command = readme.split("```sh\n", 1)[1].split("\n```", 1)[0]
    args = shlex.split(command)
    assert args[:3] == ["entbench", "build", "wikidata"]
    assert "wikidata.num_shards=3" in args and "wikidata.languages=en" in args
    args[args.index("--out") + 1] = str(tmp_path / "b")
    monkeypatch.chdir(fixtures_dir)  # recorded source paths are relative to the bundled config
    result = run_cli([*args[1:], "--no-progress"])
    assert result.exit_code == 0, result.output
    rebuilt = json.loads((tmp_path / "b" / "targets" / "wikidata.json").read_text())["stages"]
    assert rebuilt["wikidata"] == str(dirs["wikidata"].relative_to(out))


def test_card_for_a_target_not_built_is_a_user_error(tmp_path: Path, run_cli: CLI) -> None:
    result = run_cli(["card", "kb", "--from", str(tmp_path)])
    assert result.exit_code == 2
    assert "was not built here" in result.output


# --- failures are counted, never fatal ----------------------------------------------------------------
def test_a_failing_plot_is_counted_and_never_fails_the_build(
    tmp_path: Path, scans: Path, monkeypatch: pytest.MonkeyPatch, run_cli: CLI
) -> None:
    seed_scans(scans, tmp_path, "normalized/wikidata")

    draw = writer.draw

    def broken(chart: Chart, path: Path) -> None:
        if chart.file == "split_sizes.png":  # one plot fails, the others are drawn
            raise RuntimeError("no backend")
        draw(chart, path)

    monkeypatch.setattr(writer, "draw", broken)
    lines: list[str] = []
    from tests import builds as samples

    dirs = samples.build("wikidata", out=tmp_path, progress=False, log=lines.append)
    assert (dirs["wikidata"] / "_MANIFEST.json").is_file()
    doc = card_json(tmp_path, "wikidata")
    assert doc["plots_failed"] == {"split_sizes.png": "RuntimeError: no backend"}
    assert any("1 failure(s)" in line for line in lines)
    readme = (tmp_path / "cards" / "wikidata" / "README.md").read_text()
    assert "Plot `split_sizes.png` failed (RuntimeError: no backend)" in readme
    assert "## Source dumps" in readme  # the rest of the card is there
    result = run_cli(["card", "wikidata", "--from", str(tmp_path)])
    assert result.exit_code == 1
    assert "split_sizes.png failed: RuntimeError: no backend" in result.output


def test_a_failing_section_is_noted_and_the_card_still_written(
    tmp_path: Path, scans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_scans(scans, tmp_path, "normalized/wikidata")
    build("wikidata", tmp_path)

    def broken(view: BuildView) -> None:
        raise KeyError("stats")

    monkeypatch.setattr(writer.generic, "sources_section", broken)
    result = writer.write_card(tmp_path, "wikidata")
    assert result.sections_failed == {"Source dumps": "KeyError: 'stats'"}
    readme = Path(result.readme).read_text()
    assert "## Source dumps\n\n*This section could not be generated (KeyError: 'stats').*" in readme
    assert "## Parameters" in readme


# --- wikireading ------------------------------------------------------------------------------------
def test_wikireading_card_plots_on_a_nonempty_build(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "wikireading")
    card = out / "cards" / "wikireading"
    for name in (
        "top_properties.png",
        "property_coverage.png",
        "answer_set_sizes.png",
        "split_sizes.png",
        "leakage.png",
    ):
        assert_real_png(card / name)
    readme = (card / "README.md").read_text()
    for split in ("train", "valid", "test"):
        rows = load_manifest(dirs["wikireading"])["outputs"][split]["rows"]
        assert rows > 0
        assert f"| {split} | wikireading | {rows:,} |" in readme
    assert "cc-by-sa-4.0" in readme and "CC BY-SA" in readme and "CC0" in readme
    assert 'language:\n- "en"\n' in readme
    assert "## Leakage audit" in readme and "`wikireading_mem_audit_test`" in readme


def test_wikireading_chart_data_matches_the_shards(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "wikireading")
    view = BuildView(out, "wikireading")
    try:
        section = wikireading_section(view)
    finally:
        view.close()
    assert section is not None
    charts = {c.file: c for c in section.charts()}
    sizes = charts["answer_set_sizes.png"]
    counts = {
        split: Counter(len(a) for a in column(dirs["wikireading"], split, "answers"))  # type: ignore[arg-type]
        for split in ("train", "valid", "test")
    }
    bins = int_bins(sum(counts.values(), Counter()), max_bins=30)
    assert sizes.labels == bins.labels()
    assert dict(sizes.series) == {split: bins.apply(c) for split, c in counts.items()}
    top = charts["top_properties.png"]
    stats = pq.read_table(dirs["wikireading_stats"] / "part-00000-of-00001.parquet").to_pylist()
    best = max(stats, key=lambda r: (r["instances"], [-ord(c) for c in r["property"]]))
    assert top.series[0][1][0] == best["instances"]
    assert len(top.labels) == min(20, len(stats))
    coverage = charts["property_coverage.png"]
    ranked = sorted((r["instances"] for r in stats), reverse=True)
    assert coverage.style == "line" and coverage.labels == tuple(str(k) for k in range(1, len(stats) + 1))
    assert coverage.series[0][1][19] == pytest.approx(sum(ranked[:20]) / sum(ranked))
    assert coverage.series[0][1][-1] == pytest.approx(1.0)


def test_wikireading_card_on_the_real_fixtures_has_no_plots_and_says_so(tmp_path: Path, scans: Path) -> None:
    seed_scans(scans, tmp_path, "normalized/wikidata", "normalized/wikipedia")
    build("wikireading", tmp_path)  # no instance survives on the real fixtures
    doc = card_json(tmp_path, "wikireading")
    assert doc["plots_written"] == [] and doc["plots_failed"] == {}
    assert set(doc["plots_skipped_empty"]) == {
        "top_properties.png",
        "property_coverage.png",
        "answer_set_sizes.png",
        "split_sizes.png",
        "leakage.png",
    }  # type: ignore[arg-type]
    readme = (tmp_path / "cards" / "wikireading" / "README.md").read_text()
    assert "*No data to plot for “wikireading: split sizes” (`split_sizes.png` not drawn).*" in readme


# --- alias table ------------------------------------------------------------------------------------
def test_alias_card_ambiguity_matches_the_alias_table(world_out: Path) -> None:
    scans, dirs = world_out, stage_dirs(world_out, "alias-table")
    mentions = Counter(column(dirs["alias_table"], "alias_table", "mention"))
    per_mention = Counter(mentions.values())
    view = BuildView(scans, "alias-table")
    try:
        section = alias_section(view)
    finally:
        view.close()
    assert section is not None
    chart = {c.file: c for c in section.charts()}["candidates_per_mention.png"]
    assert dict(zip(chart.labels, chart.series[0][1], strict=True)) == {
        str(k): float(per_mention.get(k, 0)) for k in range(min(per_mention), max(per_mention) + 1)
    }
    card = scans / "cards" / "alias-table"
    for name in ("candidates_per_mention.png", "link_resolution.png", "p_unlinked.png"):
        assert_real_png(card / name)
    readme = (card / "README.md").read_text()
    assert f"| {len(mentions):,} | {sum(mentions.values()):,} |" in readme


# --- hansel ---------------------------------------------------------------------------------------------
def test_hansel_train_card_plots_and_counts(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "hansel-train")
    card = out / "cards" / "hansel-train"
    for name in ("mention_lengths.png", "split_sizes.png", "leakage.png"):
        assert_real_png(card / name)
    readme = (card / "README.md").read_text()
    lengths: dict[str, Counter[int]] = {}
    for split in ("train", "validation"):
        mentions = [str(m) for m in column(dirs["hansel"], split, "mention")]
        pages = set(column(dirs["hansel"], split, "page_id"))
        gold = set(column(dirs["hansel"], split, "gold_id"))
        assert mentions
        assert f"| {split} | {len(mentions):,} | {len(pages):,} | {len(gold):,} |" in readme
        lengths[split] = Counter(len(m) for m in mentions)  # code points, as Hansel's offsets
    view = BuildView(out, "hansel-train")
    try:
        section = hansel_section(view)
    finally:
        view.close()
    assert section is not None
    (chart,) = section.charts()
    bins = int_bins(lengths["train"] + lengths["validation"], max_bins=30)
    assert chart.labels == bins.labels()
    assert dict(chart.series) == {split: bins.apply(counts) for split, counts in lengths.items()}
    assert "`hansel_mem_audit` | `hansel.validation` | `hansel.train` | `mention` → `gold_id`" in readme


def test_hansel_zeroshot_card_counts_coarse_types(world_out: Path) -> None:
    out, dirs = world_out, stage_dirs(world_out, "hansel-zeroshot")
    card = out / "cards" / "hansel-zeroshot"
    assert_real_png(card / "zeroshot_coarse_types.png")
    pool = Counter(
        zip(
            column(dirs["hansel_zeroshot"], "zeroshot_pool", "coarse"),
            column(dirs["hansel_zeroshot"], "zeroshot_pool", "criterion"),
            strict=True,
        )
    )
    readme = (card / "README.md").read_text()
    criteria = sorted({k for _, k in pool})
    for coarse in {c for c, _ in pool}:
        cells = " | ".join(f"{pool.get((coarse, k), 0):,}" for k in criteria)
        assert f"| {coarse} | {cells} |" in readme
    assert "| zeroshot_pool | hansel_zeroshot |" in readme  # the audit's decisions are no split
