"""Plain functions behind the CLI commands (callable from Python and tests): the one layer that
composes a build (or a `filter mem` run) with its card (`entbench.cards`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import entbench.builders  # declares every dataset's pipeline to the registry the runner reads
from entbench.builders.edge_probing.dev_split import DEFAULT_DEV_SEED
from entbench.engine import registry
from entbench.engine.build_out import is_store_url, local_build, local_dir
from entbench.engine.config import load_config
from entbench.engine.runner import Builder
from entbench.engine.shards import atomic_write_text
from entbench.engine.stage import BuildOptions
from entbench.engine.store import Store, default_work_dir
from entbench.errors import UserError
from entbench.filters.memorization import DEFAULT_SEED
from entbench.readers.edge_probing.items import DEFAULT_NEGATIVE_SEED

if TYPE_CHECKING:
    from entbench.builders.edge_probing.filter_mem import FilterMemResult
    from entbench.cards.model import CardResult, Invocation
    from entbench.cards.publish import PublishResult


def build_location(out: str | Path, work_dir: str | Path | None = None) -> tuple[Path, Store | None]:
    """Where a build runs, and the store it publishes to if `out` is a store URL (`s3://…`).

    A store's work directory is `work_dir`, else one under the user's cache per URL; builds with
    several machines (`--executor dask`) need one every worker can read and write."""
    if not is_store_url(out):
        if work_dir is not None:
            raise UserError("--work-dir is only for an --out URL (s3://…); here --out is the work directory")
        return local_dir(out), None
    store = Store(str(out))
    return (Path(work_dir) if work_dir is not None else default_work_dir(store.url)), store


def published_location(out: str | Path, work_dir: Path, path: Path) -> str:
    """Where a file or stage directory a build wrote under `work_dir` can be read: at the same
    relative path in the store for a store build, else `path` itself."""
    if is_store_url(out):
        return f"{str(out).rstrip('/')}/{path.relative_to(work_dir).as_posix()}"
    return str(path)


def build(
    target: str,
    *,
    config: str | Path | None = None,
    sources: Sequence[str] = (),
    params: Sequence[str] = (),
    out: str | Path = "entbench-out",
    work_dir: str | Path | None = None,
    workers: int = 1,
    executor: str = "local",
    dask_address: str | None = None,
    force: bool = False,
    max_bad_lines: int = 0,
    chunk_mb: int = 64,
    progress: bool = True,
    log: object = None,
    card: bool = True,
    shuffle_groups: int = BuildOptions.shuffle_groups,
    limit: int | None = None,
) -> dict[str, Path]:
    """Build `target` into `out`; returns stage name -> output directory.

    `sources` are `NAME=PATH` overrides, `params` are `STAGE.KEY=VALUE` overrides; with neither a
    `config` nor `sources` the bundled demo world is built (and said so on stderr), otherwise only
    what is given applies, on top of each stage's documented defaults. `out` may be a store URL
    (`s3://bucket/prefix`, any fsspec URL with its driver installed): the build then runs in
    `work_dir` (default: one under the user's cache) and publishes every complete stage there
    (`engine.store`); the returned directories are in the work directory. With `card` (default)
    the target's dataset card is written to `<out>/cards/<target>/` afterwards (`entbench.cards`).
    `shuffle_groups` tunes the map-reduce
    shuffle (`engine.shuffle`), never the output. `limit` makes a trial build from the first `limit`
    entities, pages or lines of each dump (`engine.sources.limit_sources`): its own fingerprints,
    marked in the card.
    """
    if workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if max_bad_lines < 0:
        raise UserError(f"--max-bad-lines must be >= 0, got {max_bad_lines}")
    if chunk_mb < 1:
        raise UserError(f"--chunk-mb must be >= 1, got {chunk_mb}")
    if executor not in ("local", "dask"):
        raise UserError(f"--executor must be local or dask, got {executor!r}")
    work, store = build_location(out, work_dir)
    cfg = load_config(config, sources, params)
    say = log if callable(log) else _stderr
    if cfg.demo:
        say(
            f"entbench: no --config and no --source: building the bundled demo world ({cfg.path}); "
            "pass --source NAME=PATH (or --config FILE) to build from your own dumps"
        )
    options = BuildOptions(
        workers=workers,
        max_bad_lines=max_bad_lines,
        chunk_bytes=chunk_mb << 20,
        executor=executor,
        dask_address=dask_address,
        progress=progress,
        shuffle_groups=shuffle_groups,
    )
    builder = Builder(work, cfg, options, log=log, store=store, limit=limit)
    dirs = builder.build(target, force=force)
    if card:
        # The dataset card (`<out>/cards/<target>/`); it never raises: a failed plot is counted.
        from entbench.cards.model import Invocation

        invocation = Invocation(
            None if config is None else str(config), tuple(sources), tuple(params), str(out), limit
        )
        _write_card(builder, store, work, target, dirs, invocation, log if callable(log) else None)
    return dirs


def dry_run(
    target: str,
    *,
    config: str | Path | None = None,
    sources: Sequence[str] = (),
    params: Sequence[str] = (),
    out: str | Path = "entbench-out",
    work_dir: str | Path | None = None,
    workers: int = 1,
    limit: int | None = None,
) -> list[str]:
    """`entbench build --dry-run`: the lines saying what a build would run, from which sources, and
    about how long, how much memory and scratch it would take (`engine.dry_run`); builds nothing."""
    from entbench.engine.dry_run import dry_run as plan_dry_run
    from entbench.engine.dry_run import load_rates

    if workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")
    work, _ = build_location(out, work_dir)
    cfg = load_config(config, sources, params)
    options = BuildOptions(workers=workers, progress=False)
    rates = load_rates(Path(entbench.builders.__file__).with_name("rates.json"))
    lines = plan_dry_run(target, cfg, options, work, rates, limit=limit)
    if cfg.demo:
        lines.insert(0, f"the bundled demo world ({cfg.path}): no --config and no --source")
    return lines


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _write_card(
    builder: Builder,
    store: Store | None,
    work: Path,
    target: str,
    dirs: dict[str, Path],
    invocation: Invocation,
    log: Callable[[str], None] | None,
) -> None:
    """Write the card in the work directory; for a store build, publish it too. The card reads
    every stage of the target, so stages found only in the store are downloaded first, unless
    nothing was built and the store already has this target's card."""
    from entbench.cards.writer import CARD_JSON, card_after_build, card_dir, recorded_invocation

    if store is None:
        # Nothing built and the card already says so: a no-op writes nothing (the build directory
        # may even be read-only). `entbench card` regenerates a card on demand.
        if builder.built_any or recorded_invocation(card_dir(work, target)) != invocation:
            card_after_build(work, target, invocation, log=log)
        return
    rel = card_dir(work, target).relative_to(work).as_posix()
    if not builder.built_any and store.exists(f"{rel}/{CARD_JSON}"):
        return
    builder.fetch_from_store(list(dirs.values()))
    if card_after_build(work, target, invocation, log=log) is not None:
        store.publish_tree(card_dir(work, target), rel)


def card(target: str, build_out: str | Path) -> CardResult:
    """`entbench card`: (re)write the dataset card of `target` from the build in `build_out` (a
    directory, or the store URL it was published to, where the card is then published too)."""
    from entbench.cards.writer import card_dir, write_card

    registry.get_target(target)  # an unknown target is named as such, not as one not built yet
    root = local_build(build_out, target)
    result = write_card(root, target)
    if is_store_url(build_out):
        Store(str(build_out)).publish_tree(card_dir(root, target), f"cards/{target}")
    return result


def filter_mem(
    *,
    train: str | Path,
    test: str | Path,
    out: str | Path,
    input_format: str = "jiant",
    mode: str = "eptest",
    seed: int = DEFAULT_SEED,
    negative_seed: int = DEFAULT_NEGATIVE_SEED,
    dev_from_train: float | None = None,
    dev_seed: int = DEFAULT_DEV_SEED,
    paper_row: str | None = None,
) -> FilterMemResult:
    """`entbench filter mem`: audit `test` against `train` (`builders.edge_probing.filter_mem`), then
    write the run's card, `out/README.md` (`cards.edge_probing`)."""
    from entbench.builders.edge_probing.filter_mem import run_filter_mem
    from entbench.cards.edge_probing import filter_mem_card

    done = run_filter_mem(
        train=train,
        test=test,
        out=out,
        input_format=input_format,
        mode=mode,
        seed=seed,
        negative_seed=negative_seed,
        dev_from_train=dev_from_train,
        dev_seed=dev_seed,
        paper_row=paper_row,
    )
    # Edge probing has no build target, so this card is where its leakage audit is read (issue 10).
    atomic_write_text(done.out / "README.md", filter_mem_card(done.report, done.stats, str(out)))
    return done


def publish(target: str, build_out: str | Path, out: str | Path) -> PublishResult:
    """`entbench publish`: `target`'s build in `build_out` (a directory, or the store URL it was
    published to) as a Hugging Face dataset folder in `out` (`cards.publish`)."""
    from entbench.cards.publish import publish as publish_folder

    registry.get_target(target)
    if is_store_url(out):
        raise UserError(f"--out {out}: publish writes a local folder; upload it with huggingface-cli upload")
    root = local_build(build_out, target)
    return publish_folder(root, target, local_dir(out))


def audit_leakage(build_out: str | Path) -> tuple[str, dict[str, object]]:
    """`entbench audit leakage`: every benchmark built in `build_out` (a build's --out directory)
    against every other one (`cards.cross_leakage`); the Markdown report and the JSON."""
    from entbench.cards.cross_leakage import audit_leakage as audit
    from entbench.cards.cross_leakage_report import leakage_markdown

    if is_store_url(build_out):
        raise UserError(f"--from {build_out}: audit leakage reads a build directory, not a store URL")
    report = audit(local_dir(build_out))
    return leakage_markdown(report), report.to_json()
