"""Two worlds, never mixed (issue 19): with no --config and no --source the bundled demo world is
built and said so; with real sources only each stage's documented defaults and what the user gave
apply. Nothing of `fixtures/entbench.toml` (its sources, its fixture-sized parameters, its task
files) reaches a build that names its own sources."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench import api
from entbench.engine import build_out, registry
from entbench.engine.config import default_config_path, load_config
from entbench.engine.manifest import load_manifest
from entbench.errors import UserError
from tests.conftest import FIXTURES
from tests.world_support import REAL_SOURCES, REAL_TARGETS, WORLD


def quiet(target: str, out: Path, **kwargs: object) -> dict[str, Path]:
    return api.build(target, out=out, progress=False, log=lambda _m: None, card=False, **kwargs)  # type: ignore[arg-type]


def test_no_config_and_no_source_is_the_demo_world() -> None:
    demo = load_config(None)
    assert demo.demo and demo.path == str(default_config_path())
    assert demo.params["hansel"]["validation_docs"] == 2
    with_param = load_config(None, (), ("wikireading.seed=3",))
    assert with_param.demo and with_param.params["wikireading"]["seed"] == "3"


def test_a_source_given_leaves_the_demo_world_entirely(tmp_path: Path) -> None:
    config = load_config(None, (f"wikidata={tmp_path / 'x.json'}",))
    assert not config.demo and config.path is None
    assert set(config.sources) == {"wikidata"} and config.params == {}
    assert config.given_sources == ("wikidata",)


def test_a_config_file_is_all_there_is(tmp_path: Path) -> None:
    own = tmp_path / "own.toml"
    own.write_text('[sources]\nwikidata = "dump.json"\n', encoding="utf-8")
    config = load_config(own)
    assert not config.demo and set(config.sources) == {"wikidata"} and config.params == {}


def test_the_demo_is_announced_on_stderr(tmp_path: Path) -> None:
    said: list[str] = []
    api.build("wikidata", out=tmp_path, progress=False, log=said.append, card=False)
    assert sum("building the bundled demo world" in line for line in said) == 1
    said.clear()
    api.build("wikidata", sources=REAL_SOURCES, out=tmp_path, progress=False, log=said.append, card=False)
    assert not any("demo world" in line for line in said)
    assert "source wikipedia: not read by target wikidata (given with --source, left alone)" in said
    assert f"source wikidata: {WORLD / 'wikidata-new.json.gz'} (3.4 MB)" in said


def defaults(stage_name: str, num_shards: int) -> dict[str, object]:
    """A stage's documented defaults as its manifest records them (`num_shards` resolved)."""
    params = registry.get_stage(stage_name).params_type()
    if hasattr(params, "num_shards"):
        params = dataclasses.replace(params, num_shards=num_shards)  # type: ignore[type-var]
    return params.to_json()


@pytest.mark.parametrize("target", REAL_TARGETS)
def test_real_sources_get_the_documented_defaults_and_nothing_of_the_demo(
    target: str, real_sources_out: Path
) -> None:
    """Each target as the session's one build from `REAL_SOURCES` (`real_sources_out`, `api.build`
    with those sources and nothing else) built it: each build reused the scans of those before it
    (stage directories are named by fingerprint, so a reused stage is the one the build would have
    written), and every target's own stages are still checked here."""
    listing = build_out.listing_file(real_sources_out, target).read_bytes()
    dirs = {stage: real_sources_out / rel for stage, rel in build_out.listed_stages(listing).items()}
    demo = tomllib.loads(default_config_path().read_text(encoding="utf-8"))["params"]
    for stage, directory in dirs.items():
        manifest = load_manifest(directory)
        assert manifest["params"] == defaults(stage, manifest["num_shards"]), stage
        for key, value in demo.get(stage, {}).items():
            if key != "num_shards" and registry.get_stage(stage).params_type().to_json().get(key) != value:
                assert manifest["params"].get(key) != value, f"{stage}.{key} came from the demo world"
    if target == "wikidata":
        # The automatic shard count (about one per 256 MB of JSON): one for this small dump, where
        # the demo world asks for four.
        assert load_manifest(dirs["wikidata"])["num_shards"] == 1
    if target == "enteval-tasks":
        listed = load_manifest(dirs["enteval_tasks"])["stats"]
        assert listed.get("tasks_built", 0) == 0  # no task file named: every task skipped, none from the demo


def test_hansel_with_real_sources_holds_out_its_documented_1000_documents(tmp_path: Path) -> None:
    """The demo world holds out 2 documents; the documented default is 1,000, which the 6 documents
    of this zhwiki dump cannot give: a user error, not a silent fixture value."""
    sources = [
        f"zhwiki={FIXTURES / 'hansel' / 'zhwiki-fixture.xml.bz2'}",
        f"wikidata_old={WORLD / 'wikidata-old.json.gz'}",
        f"wikidata_new={WORLD / 'wikidata-new.json.gz'}",
    ]
    with pytest.raises(UserError, match=r"hansel\.validation_docs = 1000 holds out all 6 documents"):
        quiet("hansel-train", tmp_path, sources=sources)
    dirs = quiet("hansel-train", tmp_path, sources=sources, params=["hansel.validation_docs=3"])
    assert load_manifest(dirs["hansel"])["params"]["validation_docs"] == 3


def test_task_files_are_found_next_to_the_config_that_names_them(tmp_path: Path) -> None:
    """A relative path in a config is relative to that file, wherever the build runs from; in the
    fingerprint a task file counts by name and content, not by where it is."""
    own = tmp_path / "conf"
    own.mkdir()
    (own / "kore.txt").write_bytes((FIXTURES / "enteval" / "kore.txt").read_bytes())
    config_file = own / "entbench.toml"
    config_file.write_text(
        f'[sources]\nwikipedia = "{WORLD / "enwiki.xml.bz2"}"\n'
        f'wikidata = "{WORLD / "wikidata-new.json.gz"}"\n'
        '[params.enteval_kore]\nsource = "kore.txt"\n',
        encoding="utf-8",
    )
    config = load_config(config_file)
    stage = registry.get_stage("enteval_kore")
    params = config.params_for(stage.params_type, "enteval_kore")
    assert params.source == str(own / "kore.txt")  # type: ignore[attr-defined]
    assert params.to_json()["source"] == "kore.txt"
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "kore.txt").write_bytes((own / "kore.txt").read_bytes())
    cli_params = load_config(None, (), (f"enteval_kore.source={moved / 'kore.txt'}",)).params_for(
        stage.params_type, "enteval_kore"
    )
    assert cli_params.to_json() == params.to_json()  # same name, same bytes: the same fingerprint
