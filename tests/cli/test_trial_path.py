"""A trial path for a real run (issue 34, item 3): `build --dry-run` says what would run and what it
would take without building anything; `build --limit N` builds from the first N entities or pages of
each dump, with its own fingerprints, marked in the card."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

RunCli = Callable[..., Any]


def test_a_dry_run_on_the_demo_world_builds_nothing_and_says_what_it_would_take(
    run_cli: RunCli, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shown = run_cli(["build", "wikireading", "--out", str(out), "--dry-run", "--workers", "2"])
    assert shown.exit_code == 0, shown.stderr
    assert not out.exists()  # nothing built, nothing written
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("the bundled demo world (")
    assert lines[1] == f"dry run of wikireading into {out} (nothing is built or written):"
    sources = [line for line in lines if line.startswith("  wikidata: ") or line.startswith("  wikipedia: ")]
    assert re.fullmatch(
        r"  wikidata: world/wikidata-new\.json\.gz, 3\.4 MB gzip, ~[\d.]+ MB decompressed, ~[\d,]+ entities "
        r"\(from its first [\d.]+ MB\).*",
        sources[0],
    ), sources
    assert sources[1].startswith("  wikipedia: world/enwiki.xml.bz2, 2.4 MB bz2, ~")
    stages = [line.split()[0] for line in lines if line.startswith("  wikireading") or "to run:" in line]
    assert "wikidata" in stages and "wikireading_stats" in stages
    assert all("to run:" in line for line in lines if line.startswith("  wikireading_"))
    assert re.search(r"~\d+ MiB per worker", shown.stdout)
    (total,) = [line for line in lines if line.startswith("total: ")]
    assert re.fullmatch(
        r"total: 8 of 8 stage\(s\) to run, (<1 s|~\d+ s|~\d+ min) on 2 worker\(s\); ~\d[\d,]* MiB of memory "
        r"per worker; scratch space up to ~[\d.]+ [kMG]?B and ~[\d.]+ [kMG]?B of outputs under .*",
        total,
    ), total
    assert lines[-1].startswith("estimates from measured rates (bench/")


def test_a_dry_run_of_a_built_target_finds_every_stage_up_to_date(run_cli: RunCli, world_out: Path) -> None:
    shown = run_cli(["build", "wikient", "--out", str(world_out), "--dry-run"])
    assert shown.exit_code == 0, shown.stderr
    assert f"total: nothing to build; wikient is up to date in {world_out}" in shown.stdout
    assert "to run" not in shown.stdout


def test_a_trial_build_reads_the_first_n_of_each_dump_with_its_own_fingerprints(
    run_cli: RunCli, tmp_path: Path, world_out: Path
) -> None:
    out = tmp_path / "trial"
    args = ["build", "title-qid", "--limit", "500", "--out", str(out), "--no-progress"]
    built = run_cli(args)
    assert built.exit_code == 0, built.stderr
    assert "source wikidata: --limit 500: the first 500 entities of wikidata-new.json.gz (" in built.stderr
    assert "source wikipedia: --limit 500: the first 500 pages of enwiki.xml.bz2 (" in built.stderr
    listing = json.loads((out / "targets" / "title-qid.json").read_text(encoding="utf-8"))["stages"]
    full = json.loads((world_out / "targets" / "title-qid.json").read_text(encoding="utf-8"))["stages"]
    assert set(listing) == set(full)
    assert all(listing[stage] != full[stage] for stage in listing)  # every fingerprint its own
    scan = json.loads((out / listing["wikidata"] / "_MANIFEST.json").read_text(encoding="utf-8"))
    assert scan["sources"]["wikidata"]["path"] == "world/wikidata-new.json.gz"  # as the config gives it
    assert scan["sources"]["wikidata"]["limit"] == "first 500 entities of wikidata-new.json.gz"
    assert scan["stats"]["entities_written"] == 500
    pages = json.loads((out / listing["wikipedia"] / "_MANIFEST.json").read_text(encoding="utf-8"))
    assert pages["stats"]["pages_seen"] == 500

    card = (out / "cards" / "title-qid" / "README.md").read_text(encoding="utf-8")
    assert "**A trial build** (`entbench build --limit N`): it read `wikidata`: the first 500 " in card
    assert f"entbench build title-qid --limit 500 --out {out}" in card

    again = run_cli(args)  # the same cut dumps: the same fingerprints, nothing to build
    assert again.exit_code == 0, again.stderr
    assert "title_qid: up to date" in again.stderr
