"""Source aliases: `zhwiki`, the Hansel wiki's name in the published setting, means `wiki`.

`registry.Alias` names another spelling of a source and of the scan stage named after it; a build
resolves it before anything else (`config.resolve_aliases`), so the same dump under either name is
the same build (same fingerprints), and the errors say how the two names relate.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from entbench import api
from entbench.engine import registry
from entbench.engine.config import BuildConfig, load_config, resolve_aliases
from entbench.errors import UserError
from tests.conftest import FIXTURES

ZHWIKI_DUMP = FIXTURES / "hansel" / "zhwiki-fixture.xml.bz2"
OTHER_DUMP = FIXTURES / "hansel-en" / "enwiki-fixture.xml.bz2"
PAIR = (
    f"wikidata_old={FIXTURES / 'hansel' / 'wikidata-old.json.gz'}",
    f"wikidata_new={FIXTURES / 'hansel' / 'wikidata-new.json.gz'}",
)


def resolved(config: Path | None, sources: Sequence[str], params: Sequence[str] = ()) -> BuildConfig:
    """The build config of these flags with its aliases resolved, as a build sees it."""
    return resolve_aliases(load_config(config, sources, params), registry.aliases())


def test_zhwiki_is_registered_as_the_published_name_of_wiki() -> None:
    alias = registry.aliases()["zhwiki"]
    assert (alias.name, alias.why) == ("wiki", "its name in the published Hansel setting")
    assert "wiki" in registry.stages() and "zhwiki" not in registry.stages()


def test_a_source_and_its_parameters_given_as_zhwiki_are_wiki(tmp_path: Path) -> None:
    config = resolved(None, [f"zhwiki={ZHWIKI_DUMP}"], ["zhwiki.num_shards=3"])
    assert config.sources == {"wiki": str(ZHWIKI_DUMP)}
    assert config.source_labels == {"wiki": str(ZHWIKI_DUMP)}
    assert config.given_sources == ("wiki",)
    assert config.params == {"wiki": {"num_shards": "3"}}
    assert config.given_params == ("wiki.num_shards",)


def test_the_command_line_wins_over_the_file_under_either_name(tmp_path: Path) -> None:
    toml = tmp_path / "entbench.toml"
    toml.write_text(f'[sources]\nzhwiki = "{ZHWIKI_DUMP}"\n[params.zhwiki]\nnum_shards = 2\n', "utf-8")
    config = resolved(toml, [f"wiki={OTHER_DUMP}"], ["wiki.num_shards=5"])
    assert config.sources["wiki"] == str(OTHER_DUMP)
    assert config.params["wiki"] == {"num_shards": "5"}
    toml.write_text(f'[sources]\nwiki = "{OTHER_DUMP}"\n[params.wiki]\nnum_shards = 2\n', encoding="utf-8")
    config = resolved(toml, [f"zhwiki={ZHWIKI_DUMP}"], ["zhwiki.num_shards=5"])
    assert config.sources["wiki"] == str(ZHWIKI_DUMP)
    assert config.params["wiki"] == {"num_shards": "5"}


def test_two_values_from_one_place_under_both_names_are_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"sources wiki and zhwiki are both given, with different paths"):
        resolved(None, [f"wiki={OTHER_DUMP}", f"zhwiki={ZHWIKI_DUMP}"])
    # the same path twice says one thing
    twice = resolved(None, [f"wiki={ZHWIKI_DUMP}", f"zhwiki={ZHWIKI_DUMP}"])
    assert twice.sources == {"wiki": str(ZHWIKI_DUMP)}
    toml = tmp_path / "entbench.toml"
    toml.write_text("[params.zhwiki]\nnum_shards = 2\n[params.wiki]\nnum_shards = 4\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"parameter num_shards is given for wiki and for zhwiki with diff"):
        resolved(toml, [])


def test_the_same_dump_under_either_name_is_the_same_build(tmp_path: Path) -> None:
    """`--source zhwiki=` (the published setting) and `--source wiki=` build the same stages: a
    second build under the other name finds every stage up to date, in the same directories."""
    args = {"out": tmp_path, "progress": False, "card": False, "params": ["hansel.validation_docs=2"]}
    logged: list[str] = []
    first = api.build("hansel-train", sources=[f"zhwiki={ZHWIKI_DUMP}", *PAIR], log=lambda _m: None, **args)
    second = api.build("hansel-train", sources=[f"wiki={ZHWIKI_DUMP}", *PAIR], log=logged.append, **args)
    assert first == second
    assert "wiki" in first and "zhwiki" not in first
    assert not [line for line in logged if ": wrote " in line], logged
