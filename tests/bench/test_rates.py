"""`builders/rates.json`, which `build --dry-run` estimates from, is what the benchmarks' latest
results give (`bench/rates.py` writes it; a new benchmark run rewrites it)."""

from __future__ import annotations

from pathlib import Path

import entbench.builders
from entbench.engine.dry_run import UNITS, load_rates, scale
from tests.bench.conftest import _bench_module


def test_the_rates_file_is_the_benchmarks_latest_results() -> None:
    rates = _bench_module("rates")
    assert rates.MODULE.read_text(encoding="utf-8") == rates.module_text()


def test_every_rate_is_measured_and_scales_with_workers() -> None:
    rates = load_rates(Path(entbench.builders.__file__).with_name("rates.json"))
    assert {"WikidataScan", "WikipediaScan", "TitleQid", "AliasTable", "WikiReadingTriples"} <= set(rates)
    for name, rate in rates.items():
        assert rate.unit in UNITS, name
        assert rate.seconds > 0 and rate.rss_mib > 0 and rate.measured.startswith("bench/"), name
        assert scale(100.0, rate.speedup_2, 1) == 100.0
        assert scale(100.0, rate.speedup_2, 4) <= scale(100.0, rate.speedup_2, 2) <= 100.0
    assert scale(100.0, 1.5, 3) == 50.0  # each worker after the first adds what the second did
