"""`entbench export enteval`: WikiEnt as tab-separated text, or the EntEval task directory.

* `wikient-tsv` (from a `wikient` build): `wikient.tsv`, one instance per line, no header, seven
  tab-separated fields in the order of the issue and of `schemas.enteval.WIKIENT`:

      sentence  mention_start  mention_end  mention  target_qid  target_title  description

  `sentence` and `description` are word tokens joined by one space (so `sentence.split()` gives
  the tokens the offsets count, end exclusive); `target_qid` is empty when the linked article has
  no Wikidata item. No field holds a tab or a line break. Rows are in shard order, then in
  (page_id, link_ordinal) order, so identical builds give identical files.
* `tasks` (from an `enteval-tasks` build): the built tasks' files, laid out as the EntEval loaders'
  `task_path` expects (`CAP/same/…`, `CAP/next/…`, `ERT/…`, `EFP/…`, `ET/…`, `CERP/…`, `rare/…`,
  `conll-yago/…`, `wikisrs/…`, `KORE/all.txt`: the directories of the ten tasks
  `ZeweiChu/EntEval:enteval/engine.py` evaluates), and `TASKS.tsv` listing every task as built or
  skipped. The relation-typing task is `'ERT'` (directory `ERT/`): up to commit 70aea16 the upstream
  `SE.list_tasks` named it `'ER'` while `SE.eval` tested for `'ERT'`, so neither name ran it (fixed
  in a674f92); its README's results table still heads the column "ER".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq

from entbench.builders.enteval.tsv import FieldError, check_field
from entbench.engine.build_out import locate_stage
from entbench.engine.export import ExportResult
from entbench.engine.manifest import load_manifest
from entbench.errors import DataError

FORMATS = ("wikient-tsv", "tasks")
WIKIENT_FILE = "wikient.tsv"
WIKIENT_COLUMNS = (
    "sentence",
    "mention_start",
    "mention_end",
    "mention",
    "target_qid",
    "target_title",
    "description",
)


def wikient_line(row: dict[str, object]) -> str:
    """One TSV line of a WikiEnt row (`target_qid` may be empty; every other field is not)."""
    fields = [str(row[c]) if row[c] is not None else "" for c in WIKIENT_COLUMNS]
    for name, value in zip(WIKIENT_COLUMNS, fields, strict=True):
        if name != "target_qid" or value:
            check_field(value)
    return "\t".join(fields)


def export_wikient(*, build_out: str | Path, out: str | Path) -> ExportResult:
    """Write `wikient.tsv` from a `wikient` build."""
    stage = locate_stage(build_out, "wikient", "wikient")
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    result = ExportResult(target)
    path = target / WIKIENT_FILE
    tmp = path.with_name(path.name + ".tmp")
    rows = without_qid = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for shard in stage.files("wikient"):
            for batch in pq.ParquetFile(shard).iter_batches(columns=list(WIKIENT_COLUMNS), batch_size=4096):
                for row in batch.to_pylist():
                    try:
                        f.write(wikient_line(row) + "\n")
                    except FieldError as exc:
                        raise DataError(f"row {rows}: {exc}", path=shard) from exc
                    rows += 1
                    without_qid += row["target_qid"] is None
    tmp.replace(path)
    result.counts["instances"] = rows
    if without_qid:  # a tally, not a file: counted only when there are some (no "empty file" warning)
        result.counts["without_target_qid"] = without_qid
        # An empty target_qid is not an unresolved link (those are dropped and counted in the
        # manifest): the link reached an article with text whose page has no item with a sitelink
        # in the build's `wikidata` source. Say so, since a column of empty QIDs looks like a bug.
        result.notes.append(
            f"{without_qid:,} of {rows:,} instances have an empty target_qid: their article is in the "
            "wikipedia dump but no item of the wikidata dump has a sitelink to it "
            "(build with `--param wikient.require_qid=true` to drop them)"
        )
    result.files.append(WIKIENT_FILE)
    return result


def export_tasks(*, build_out: str | Path, out: str | Path) -> ExportResult:
    """Copy the EntEval task directory of an `enteval-tasks` build, plus `TASKS.tsv`."""
    from entbench.builders.enteval.stages.tasks import TASK_DIR

    stage = locate_stage(build_out, "enteval-tasks", "enteval_tasks")
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    result = ExportResult(target)
    manifest = load_manifest(Path(stage.directory))
    for name in sorted(manifest.get("files", {})):
        if not name.startswith(TASK_DIR + "/"):
            continue
        relative = name[len(TASK_DIR) + 1 :]
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(stage.directory) / name, target / relative)
        result.files.append(relative)
    listing = ["task\tstatus\tlines\tfiles"]
    for row in pq.read_table(stage.files("tasks")[0]).to_pylist():
        listing.append(f"{row['task']}\t{row['status']}\t{row['lines']}\t{','.join(row['files'])}")
        result.counts[str(row["task"])] = int(row["lines"])
    (target / "TASKS.tsv").write_text("\n".join(listing) + "\n", encoding="utf-8")
    result.files.append("TASKS.tsv")
    return result
