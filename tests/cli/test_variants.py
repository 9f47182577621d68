"""Two variants of a target built into one --out: the build says which one the commands now read,
`summary` lists the other, and `--variant ID` reads it (issue 34, item 5)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES_CONFIG
from tests.world_support import SamplesBuilds

RunCli = Callable[..., Any]


def test_a_second_variant_says_which_one_is_read_and_the_first_stays_readable(
    run_cli: RunCli, tmp_path: Path, samples_builds: SamplesBuilds
) -> None:
    out = tmp_path / "out"
    samples_builds.seed(out, "enteval-tasks")  # the variants are the listings the builds below write
    base = ["build", "wikient", "--config", str(SAMPLES_CONFIG), "--out", str(out), "--no-progress"]
    first = run_cli(base)
    assert first.exit_code == 0, first.stderr
    assert "held variant" not in first.stderr
    first_listing = json.loads((out / "targets" / "wikient.json").read_text(encoding="utf-8"))

    second = run_cli([*base, "--param", "wikient.lowercase=false"])
    assert second.exit_code == 0, second.stderr
    said = re.search(r"wikient: \S+ held variant (\w{12}) of wikient; .* variant (\w{12})", second.stderr)
    assert said is not None, second.stderr
    old, new = said.groups()
    assert old != new
    assert f"`--variant {old}` reads the other" in second.stderr
    recorded = out / "targets" / "variants" / "wikient" / f"{old}.json"
    assert json.loads(recorded.read_text(encoding="utf-8")) == first_listing

    summary = run_cli(["summary", "--from", str(out)])
    assert f"variant {new}, built last; other variants here: {old}" in summary.stdout

    # export reads the one built last (cased) unless told otherwise, and says so
    cased = run_cli(["export", "enteval", "--from", str(out), "--out", str(tmp_path / "cased")])
    assert cased.exit_code == 0, cased.stderr
    assert f"reading variant {new}, the one built last, of the 2 variants" in cased.stderr
    lowered = run_cli(
        ["export", "enteval", "--from", str(out), "--out", str(tmp_path / "lower"), "--variant", old[:6]]
    )
    assert lowered.exit_code == 0, lowered.stderr
    assert f"reading variant {old}, the one named by --variant" in lowered.stderr
    cased_text = (tmp_path / "cased" / "wikient.tsv").read_text(encoding="utf-8")
    lower_text = (tmp_path / "lower" / "wikient.tsv").read_text(encoding="utf-8")
    assert lower_text != cased_text
    sentences = [line.split("\t")[0] for line in lower_text.splitlines()]
    assert all(s == s.lower() for s in sentences)  # the first variant lowercased, as its default

    # the card of the older variant goes next to the current one, and names its variant
    card = run_cli(["card", "wikient", "--from", str(out), "--variant", old])
    assert card.exit_code == 0, card.stderr
    readme = (out / "cards" / f"wikient@{old}" / "README.md").read_text(encoding="utf-8")
    assert f"Variant `{old}` of wikient (selected with `--variant`)" in readme
    assert "`lowercase` | `true`" in readme
    current = (out / "cards" / "wikient" / "README.md").read_text(encoding="utf-8")
    assert f"Variant `{new}` of wikient (built last); the build directory holds 2 variants" in current

    unknown = run_cli(["card", "wikient", "--from", str(out), "--variant", "ffffff"])
    assert unknown.exit_code == 2 and "--variant ffffff is not one of the variants" in unknown.stderr
