"""`entbench build kb-series`: E_new of each consecutive pair of N Wikidata dumps (issue 36, item 2).

Expectations come from the tests' own stdlib-json reading of the dumps (`tests.builders.kb.support`),
from the `kb` target's independent E_new, or from hand-made dumps whose history is written out below.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from entbench import api
from entbench.engine.summary import target_stages
from entbench.errors import UserError
from tests.builders.kb.support import read_dump, rows, stats
from tests.conftest import FIXTURES

WORLD = FIXTURES / "world"
#: The demo world's series, oldest first (the middle dump is derived from the other two).
WORLD_SERIES = tuple(WORLD / f"wikidata-{name}.json.gz" for name in ("old", "mid", "new"))


def quiet(target: str, out: Path, **kwargs: Any) -> dict[str, Path]:
    return api.build(target, out=out, progress=False, log=lambda _m: None, card=False, **kwargs)


def periods(stage_dir: Path) -> dict[int, set[str]]:
    """Period -> its E_new QIDs, from `series_new.new_entities`."""
    found: dict[int, set[str]] = defaultdict(set)
    for row in rows(stage_dir, "new_entities"):
        found[row["period"]].add(row["qid"])
    return dict(found)


def test_three_dumps_give_two_sets_whose_union_is_the_last_dump_minus_the_first(tmp_path: Path) -> None:
    # The filter off (no site constraint, no internal class): every item is a KB entity, so the
    # expectation is plain set arithmetic on the raw dumps.
    sources = [f"wikidata_{i}={path}" for i, path in enumerate(WORLD_SERIES)]
    params = ["series_filter.site=", "series_filter.classes=", "series_zeroshot.size=10"]
    dirs = quiet("kb-series", tmp_path, sources=sources, params=params)

    dumps = [read_dump(path) for path in WORLD_SERIES]
    held = [set(d.entities) | set(d.redirects) for d in dumps]
    new = periods(dirs["series_new"])
    assert sorted(new) == [1, 2]
    assert new[1] == set(dumps[1].items()) - held[0]
    assert new[2] == set(dumps[2].items()) - held[1] - held[0]
    assert all(new.values()) and not new[1] & new[2]
    last_minus_first = set(dumps[2].items()) - held[0]
    assert new[1] | new[2] == last_minus_first
    assert len(last_minus_first) == 2351  # the world's E_new before any filter (world/PROVENANCE.md)
    counted = stats(dirs["series_new"])
    assert counted["union_new_entities"] == counted["last_dump_new_since_first"] == len(last_minus_first)
    assert counted["union_not_new_since_first"] == counted["new_since_first_not_in_union"] == 0


def test_the_demo_series_splits_the_kb_targets_e_new_in_two(world_out: Path) -> None:
    # The kb target's entity_diff computes E_new of the old/new pair on its own; the series puts the
    # middle dump between them, so its two periods must split exactly that set.
    kb = {r["qid"] for r in rows(target_stages(world_out, "kb")["entity_diff"], "kb_entities") if r["in_new"]}
    new = periods(target_stages(world_out, "kb-series")["series_new"])
    assert len(new[1]) >= 50 and len(new[2]) >= 50
    assert not new[1] & new[2]
    assert new[1] | new[2] == kb
    pool = rows(target_stages(world_out, "kb-series")["series_zeroshot"], "zeroshot_pool")
    assert {p: sum(r["period"] == p for r in pool) for p in (1, 2)} == {1: 40, 2: 40}
    assert all(r["qid"] in new[r["period"]] for r in pool)
    assert all(r["title"] for r in pool)  # every E_new entity has its zhwiki page (the site constraint)


# --- a hand-made history of five dumps --------------------------------------------------------
def item(qid: str, *, site: bool = True) -> dict[str, Any]:
    """An item with an English label and (by default) a zhwiki page."""
    sitelinks = {"zhwiki": {"site": "zhwiki", "title": f"条目{qid}", "badges": []}} if site else {}
    return {
        "type": "item",
        "id": qid,
        "labels": {"en": {"language": "en", "value": f"label {qid}"}},
        "descriptions": {},
        "aliases": {},
        "claims": {},
        "sitelinks": sitelinks,
    }


PROPERTY = {"type": "property", "id": "P1", "datatype": "string", "labels": {}, "claims": {}}
#: What each dump holds. Q1 is in all; Q2 appears in dump 1; Q3 is deleted in dump 1 and restored
#: in dump 2; Q4 lives in dump 2 only; Q5 appears in dump 3; Q6 is a redirect stub in dump 1 and an
#: item in dump 4; Q7 appears in dump 4; Q8 appears in dump 2 without a zhwiki page and gets one in 3.
HISTORY: tuple[tuple[dict[str, Any], ...], ...] = (
    (item("Q1"), item("Q3"), PROPERTY),
    (item("Q1"), item("Q2"), {"redirects": {"from": "Q6", "to": "Q1"}}, PROPERTY),
    (item("Q1"), item("Q2"), item("Q3"), item("Q4"), item("Q8", site=False), PROPERTY),
    (item("Q1"), item("Q2"), item("Q3"), item("Q5"), item("Q8"), PROPERTY),
    (item("Q1"), item("Q2"), item("Q3"), item("Q5"), item("Q6"), item("Q7"), item("Q8"), PROPERTY),
)


def write_history(directory: Path) -> list[Path]:
    """The five dumps, in the official layout."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for year, docs in enumerate(HISTORY):
        path = directory / f"wikidata-{2020 + year}.json"
        lines = ",\n".join(json.dumps(doc) for doc in docs)
        path.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
        paths.append(path)
    return paths


def series_config(directory: Path, dumps: list[Path], *extra: str) -> Path:
    """A config naming the dumps as a list (`wikidata = [...]`), each site judged in its own dump."""
    config = directory / "series.toml"
    listed = ", ".join(json.dumps(str(p.relative_to(directory))) for p in dumps)
    config.write_text(
        f'[sources]\nwikidata = [{listed}]\n\n[params.series_filter]\nsite_from = "own"\n' + "".join(extra),
        encoding="utf-8",
    )
    return config


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The five dumps and their config in one directory."""
    directory = tmp_path_factory.mktemp("history")
    series_config(directory, write_history(directory))
    return directory


def test_five_yearly_dumps_from_a_list_in_the_config(history: Path, tmp_path: Path) -> None:
    dirs = quiet("kb-series", tmp_path, config=history / "series.toml")
    assert [name for name in dirs if name.startswith("wikidata_")] == [f"wikidata_{i}" for i in range(5)]
    # first-seen: new once, in the period it first appeared in (Q3 and Q6 were seen in an earlier
    # dump; Q8 appeared in period 2 but its filter kept it only from dump 3 on, so it is new in none).
    assert periods(dirs["series_new"]) == {1: {"Q2"}, 2: {"Q4"}, 3: {"Q5"}, 4: {"Q7"}}
    first = {
        r["qid"]: (r["first_dump"], r["first_kept"], r["last_dump"])
        for r in rows(dirs["series_new"], "first_dump")
    }
    assert first == {
        "Q1": (0, 0, 4),
        "Q2": (1, 1, 4),
        "Q3": (0, 0, 4),
        "Q4": (2, 2, 2),
        "Q5": (3, 3, 4),
        "Q6": (1, 4, 4),
        "Q7": (4, 4, 4),
        "Q8": (2, 3, 4),
        "P1": (0, None, 4),
    }
    counted = stats(dirs["series_new"])
    assert counted["union_new_entities"] == 4
    # The newest dump keeps Q2, Q5, Q6, Q7, Q8 that the oldest lacks; Q4 is new but gone since.
    assert counted["last_dump_new_since_first"] == 5
    assert counted["union_not_new_since_first"] == 1
    assert counted["new_since_first_not_in_union"] == 2
    assert counted["period_2_kept_dropped_seen_before"] == 3  # Q1, Q2, Q3


def test_not_in_previous_dump_is_the_kb_rule_pair_by_pair(history: Path, tmp_path: Path) -> None:
    dirs = quiet(
        "kb-series",
        tmp_path,
        config=history / "series.toml",
        params=["series_new.new_means=not-in-previous-dump"],
    )
    # Q3 (deleted in dump 1) and Q6 (a redirect in dump 1, absent from dump 3) are new again; Q8,
    # held (though not kept) by dump 2, is not new in period 3.
    assert periods(dirs["series_new"]) == {1: {"Q2"}, 2: {"Q3", "Q4"}, 3: {"Q5"}, 4: {"Q6", "Q7"}}


def test_the_site_constraint_reads_the_newest_dump_by_default(history: Path, tmp_path: Path) -> None:
    dirs = quiet(
        "kb-series", tmp_path, config=history / "series.toml", params=["series_filter.site_from=new"]
    )
    # Q4 has no page in the newest dump, so no dump keeps it; Q8 has one there, so dump 2 keeps it.
    assert periods(dirs["series_new"]) == {1: {"Q2"}, 2: {"Q8"}, 3: {"Q5"}, 4: {"Q7"}}


def test_fingerprints_follow_the_dumps_content_not_their_paths(history: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    copies = []
    for index, path in enumerate(sorted(history.glob("wikidata-*.json"))):
        copy = moved / "dumps" / f"year-{index}.json"
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, copy)
        copies.append(copy)
    first = quiet("kb-series", tmp_path / "a", config=history / "series.toml")
    second = quiet("kb-series", tmp_path / "b", config=series_config(moved, copies))
    assert {n: d.relative_to(tmp_path / "a") for n, d in first.items()} == {
        n: d.relative_to(tmp_path / "b") for n, d in second.items()
    }
    # The same dumps in another order are another series.
    reordered = quiet("kb-series", tmp_path / "c", config=series_config(moved, copies[::-1]))
    assert reordered["series_new"].name != first["series_new"].name


def test_a_gap_in_the_numbers_is_a_missing_source(history: Path, tmp_path: Path) -> None:
    dumps = sorted(history.glob("wikidata-*.json"))
    with pytest.raises(UserError, match="needs source wikidata_1: pass --source wikidata_1=PATH"):
        quiet("kb-series", tmp_path, sources=[f"wikidata_0={dumps[0]}", f"wikidata_2={dumps[2]}"])
    with pytest.raises(UserError, match="needs source wikidata_1"):
        quiet("kb-series", tmp_path, sources=[f"wikidata_0={dumps[0]}"])


@pytest.mark.parametrize(
    ("sources", "error"),
    [
        ("wikidata = []\n", "must be a path or a non-empty list of paths"),
        ('wikidata = ["a.json"]\nwikidata_0 = "b.json"\n', "source 'wikidata_0' is given twice"),
    ],
)
def test_a_bad_list_of_dumps_is_a_user_error(tmp_path: Path, sources: str, error: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(f"[sources]\n{sources}", encoding="utf-8")
    with pytest.raises(UserError, match=error):
        quiet("kb-series", tmp_path, config=config)


def test_a_pool_site_the_scans_did_not_keep_is_a_user_error(history: Path, tmp_path: Path) -> None:
    # The pool reads titles in the dumps of periods 1 to 4: every one of their scans is named.
    fixes = " ".join(f"--param wikidata_{i}.sites=enwiki,zhwiki,dewiki" for i in range(1, 5))
    with pytest.raises(UserError) as raised:
        quiet("kb-series", tmp_path, config=history / "series.toml", params=["series_zeroshot.site=dewiki"])
    assert str(raised.value) == (
        "series_zeroshot needs sites ['dewiki'] of every dump, which 4 scan(s) did not keep; "
        f"rebuild them with {fixes}"
    )
