"""What a build says it made: `entbench build` prints its final tables and rows and warns about an
empty one (naming the counters that took its rows), `entbench summary` lists a build directory's
targets, and an export of an empty table says so (issue 18, item 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from entbench.golden import GOLDEN_TARGETS
from tests.conftest import FIXTURES, SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[..., Any]


def test_an_empty_final_table_is_one_coverage_line_in_words(
    run_cli: RunCli, tmp_path: Path, samples_builds: SamplesBuilds
) -> None:
    """On the test samples no WikiReading statement has an article to join: every split is empty,
    and one line (not one per table) says why in words (issue 34, item 3)."""
    out = str(tmp_path / "out")
    samples_builds.seed(tmp_path / "out", "wikireading")  # the summary is of stages found done too
    built = run_cli(["build", "wikireading", "--config", str(SAMPLES_CONFIG), "--out", out, "--no-progress"])
    assert built.exit_code == 0, built.stderr
    assert "final tables of wikireading:" in built.stdout
    assert "  wikireading.train  " in built.stdout and " 0 rows" in built.stdout
    (line,) = [line for line in built.stderr.splitlines() if line.startswith("entbench: warning:")]
    assert line.startswith("entbench: warning: wikireading: 6 empty final table(s) (wikireading.test, ")
    assert "items have their article among the 84 pages of the Wikipedia dump" in line
    exported = run_cli(["export", "wikireading", "--from", out, "--out", str(tmp_path / "x")])
    assert exported.exit_code == 0
    assert "entbench: warning: wikireading: train is empty (0 records)" in exported.stderr


def test_an_empty_wikireading_from_a_real_partial_dump_says_what_was_missing(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """Real use on real partial dumps (the first 25 entities of the 2017 Wikidata dump, the first 84
    pages of a 2016 enwiki dump): no property entity, so no property label, and no item's article
    among the pages. The build says both in one line, with the documented defaults only."""
    built = run_cli(
        [
            "build",
            "wikireading",
            "--source",
            f"wikidata={FIXTURES / 'wikidata' / 'latest-all.2017-03.head-part.json.bz2'}",
            "--source",
            f"wikipedia={FIXTURES / 'wikipedia' / 'enwiki-201605.pages-articles1.head-part.xml.bz2'}",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    assert built.exit_code == 0, built.stderr
    lines = [line for line in built.stderr.splitlines() if line.startswith("entbench: warning:")]
    assert len(lines) == 1, built.stderr
    (line,) = lines
    assert "the wikidata dump holds 25 entities" in line
    assert "the wikipedia dump holds 18 article(s) and 66 redirect(s)" in line
    assert (
        "1,105 (item, property) pairs of items with a sitelink to enwiki, 1,105 of them dropped "
        "because the dump gives their property no en label (a partial dump usually lacks the "
        "property entities, P…)"
    ) in line
    assert "0 of 25 items have their article among the 84 pages of the Wikipedia dump" in line
    assert "dropped_no_article" not in line  # words, not counter names


def test_summary_lists_every_target_built(run_cli: RunCli, world_out: Path) -> None:
    shown = run_cli(["summary", "--from", str(world_out)])
    assert shown.exit_code == 0, shown.stderr
    assert "wikireading:\n" in shown.stdout and "  wikireading.train " in shown.stdout
    assert "hansel-train:\n" in shown.stdout and "empty table" not in shown.stdout
    assert shown.stdout.count(":\n") == len(GOLDEN_TARGETS)  # every target of the demo world


def test_summary_of_a_directory_without_builds_is_a_user_error(run_cli: RunCli, tmp_path: Path) -> None:
    shown = run_cli(["summary", "--from", str(tmp_path)])
    assert shown.exit_code == 2 and "no target was built there" in shown.stderr


def test_a_demo_build_says_how_many_of_its_ids_are_synthetic(run_cli: RunCli, world_out: Path) -> None:
    """The demo world's derived entities have made-up QIDs (Q9000000001 and up); summary, the card
    and `alias lookup` say so, counted from the shards (issue 34, item 2)."""
    import json

    import pyarrow.parquet as pq

    from entbench.engine.synthetic_ids import FIRST_SYNTHETIC

    listing = json.loads((world_out / "targets" / "wikient.json").read_text(encoding="utf-8"))
    stage = world_out / listing["stages"]["wikient"]
    qids = {
        q for f in sorted(stage.glob("*.parquet")) for q in pq.read_table(f).column("target_qid").to_pylist()
    }
    qids.discard(None)
    synthetic = {q for q in qids if int(q[1:]) >= FIRST_SYNTHETIC}
    assert 0 < len(synthetic) < len(qids)
    said = f"{len(synthetic):,} of the {len(qids):,} distinct QIDs in its final tables"

    shown = run_cli(["summary", "--from", str(world_out)])
    assert shown.exit_code == 0, shown.stderr
    wikient = shown.stdout[shown.stdout.index("wikient:\n") :].split("\n")[2]
    assert wikient.startswith(f"  {said} (") and "are the demo world's synthetic ids" in wikient

    card = (world_out / "cards" / "wikient" / "README.md").read_text(encoding="utf-8")
    assert "**Built from entbench's bundled demo world**" in card and said in card
    assert '- "demo"' in card.split("---")[1]  # a tag of the front matter

    # The page United States is Q30: no real label of the world's material is "United States"
    # (KGTK's, of 2021, is "United States of America"), but the page's lead opens with that full
    # name, the label of Q30 alone, which the world's documents refer to (the lead rule of
    # fixtures/scripts/world_real_qids.py); the link target United States of America, that name
    # without a page, gives its item up to the page. The label printed is Q30's real one.
    for mention in ("United States", "United States of America"):
        looked_up = run_cli(["alias", "lookup", mention, "--from", str(world_out), "--top", "1"])
        assert looked_up.exit_code == 0, looked_up.stderr
        (row,) = [line for line in looked_up.stdout.splitlines() if line.lstrip().startswith("1 ")]
        assert row.split()[1] == "Q30" and row.endswith("  United States of America"), mention
        assert "synthetic" not in row


def test_a_demo_build_says_on_stderr_how_many_ids_are_synthetic(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    built = run_cli(["build", "wikidata", "--out", str(out), "--no-progress"])
    assert built.exit_code == 0, built.stderr
    (note,) = [line for line in built.stderr.splitlines() if line.startswith("entbench: note: wikidata: ")]
    shown = run_cli(["summary", "--from", str(out)])
    (line,) = [line for line in shown.stdout.splitlines() if "synthetic ids" in line]
    assert note.removeprefix("entbench: note: wikidata: ") == line.strip()
    assert " distinct QIDs in its final tables (" in line


def test_a_demo_count_of_synthetic_ids_is_kept_by_shard_content(
    world_out: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """The count is kept in the per-user cache under its shards' sha256s: a second build of a built
    target reads it instead of starting DuckDB; a damaged record is counted again."""
    import json

    from entbench.engine.summary import target_stages
    from entbench.engine.synthetic_ids import SyntheticCount, synthetic_counts

    monkeypatch.setenv("ENTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    dirs = target_stages(world_out, "wikient")
    first = synthetic_counts(dirs, ("wikient",))
    assert first.synthetic > 0
    (kept,) = (tmp_path / "cache" / "synthetic-ids").glob("*.json")
    assert json.loads(kept.read_text(encoding="utf-8")) == {"qids": first.qids, "synthetic": first.synthetic}
    kept.write_text(json.dumps({"qids": first.qids + 1, "synthetic": 0}), encoding="utf-8")
    assert synthetic_counts(dirs, ("wikient",)) == SyntheticCount(first.qids + 1, 0)  # read, not counted
    kept.write_text("{", encoding="utf-8")
    assert synthetic_counts(dirs, ("wikient",)) == first
    assert json.loads(kept.read_text(encoding="utf-8"))["qids"] == first.qids


def test_several_targets_in_one_build_print_what_a_build_of_each_prints(
    run_cli: RunCli, world_out: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """`entbench build A B` (how `make run` builds every target) is `entbench build A` then
    `entbench build B`: the same lines on stdout and on stderr, the same listings. On a copy of the
    demo world, run from where it was built (`--out entbench-out`), so every stage and card is done."""
    from tests.world_support import copy_world

    copy_world(world_out, tmp_path / "entbench-out")
    monkeypatch.chdir(tmp_path)
    targets = ["title-qid", "wikidata", "kb"]
    one = [run_cli(["build", target, "--no-progress"]) for target in targets]
    assert all(r.exit_code == 0 for r in one), [r.stderr for r in one]
    listings = {t: (tmp_path / "entbench-out" / "targets" / f"{t}.json").read_bytes() for t in targets}
    several = run_cli(["build", *targets, "--no-progress"])
    assert several.exit_code == 0, several.stderr
    assert several.stdout == "".join(r.stdout for r in one)
    assert several.stderr == "".join(r.stderr for r in one)
    for target in targets:
        assert f"final tables of {target}:" in several.stdout
        assert (tmp_path / "entbench-out" / "targets" / f"{target}.json").read_bytes() == listings[target]
    assert run_cli(["build", "--no-progress"]).exit_code == 2  # at least one TARGET
    fresh = tmp_path / "fresh-out"
    misspelt = run_cli(["build", "wikidata", "kbb", "--no-progress", "--out", str(fresh)])
    assert misspelt.exit_code == 2 and "unknown target 'kbb'" in misspelt.stderr
    assert not fresh.exists()  # named before anything was built
