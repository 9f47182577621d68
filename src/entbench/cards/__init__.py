"""Dataset cards: `<out>/cards/<target>/README.md` with PNG plots, written after every build.

* `model`: sections, charts and the result of writing a card (plain data);
* `build_view`: reads a build (target listing, manifests, shards via DuckDB) — the only I/O on
  the input side;
* `generic`, `leakage`, `licence`: the parts every card has (sources, parameters, table sizes,
  stats by reason, rebuild command; Mem-* audits of the target's splits; the licence its content
  calls for, with the reason);
* `stage_docs`: where each stage is described for users (`docs/stages.md#…`);
* `registry` + `targets/*`: each target's own sections and plots (every target: the dump scans,
  title-qid, alias-table, kb, wikireading, the Hansel targets, wikient, enteval-tasks);
* `plots`: matplotlib, Agg backend; `writer`: assembles the card and swaps it into place
  (`write_card`, and `card_after_build`, which `entbench build` calls and which never raises).

`entbench card TARGET --from OUT` regenerates a card. Nothing is imported here, so importing the
model does not pull in matplotlib.
"""
