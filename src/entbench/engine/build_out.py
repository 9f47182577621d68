"""Reading a finished build by its `--out`: a build directory, or the store a build published to.

Commands that read a build (`export … --from`, `card --from`, `eval alias-table --build`) find a
target's stages through `<out>/targets/<TARGET>.json`, the listing of the variant built last.
Every variant a build directory holds (the same target built with other parameters or sources) is
also recorded as `<out>/targets/variants/<TARGET>/<VARIANT>.json`, where VARIANT is the first 12
hex digits of the sha256 of its stage directories (`variant_id`): `--variant VARIANT` (or an
unambiguous prefix of it) makes those commands read that one instead. For a store URL they read a
local copy in the URL's work directory (`store.default_work_dir`, the directory a build to that URL runs in by
default): a stage missing there, or damaged, is downloaded from the store first (hashed in full),
so only the stages a command reads cross the network, and only once.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import hashlib
import json
import shutil
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from entbench.engine.manifest import canonical_json, check_complete, upstream_from_manifest
from entbench.engine.shards import atomic_write_text, is_url
from entbench.engine.stage import UpstreamOutput
from entbench.engine.store import Store, default_work_dir
from entbench.errors import UserError


@contextlib.contextmanager
def build_lock(out: Path, log: Callable[[str], None] | None = None) -> Iterator[None]:
    """The lock on `<out>/.lock`: builds, cards and downloads into one build directory take turns.

    A read-only build directory (a finished build on a read-only mount) cannot be written by anyone,
    so nothing is taken from it: its lock file is opened for reading (a flock needs no write access)
    or, when there is none, no lock is held; a build that finds every stage complete then does
    nothing, and one that must write fails on its first write, naming it."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / ".lock"
    handle = _open_lock(path)
    if handle is None:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if log is not None:
                log(f"waiting for another build holding {path}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _open_lock(path: Path) -> IO[str] | None:
    """The lock file, for writing; for reading in a read-only directory; None if it cannot exist."""
    try:
        return open(path, "a+")
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        return open(path) if path.exists() else None


def is_store_url(out: str | Path) -> bool:
    """Whether `out` names a store (`s3://…`) rather than a directory (a path or a `file://` URL)."""
    return is_url(str(out)) and file_url_path(str(out)) is None


def file_url_path(text: str) -> Path | None:
    """The local path of a `file://` URL (None for any other text)."""
    parsed = urllib.parse.urlparse(text)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(urllib.parse.unquote(parsed.path))
    return None


def local_dir(out: str | Path) -> Path:
    """The directory a non-store `out` names (a path or a `file://` URL); a `UserError` when that
    path is a file."""
    path = file_url_path(str(out)) or Path(out)
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {out}: not a directory (a build writes a directory of stages there)")
    return path


def local_build(
    build_out: str | Path,
    target: str,
    stages: Sequence[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """The directory holding `target`'s build: `build_out` itself, or for a store URL its local copy,
    with the target's listing and its `stages` (all when None) downloaded if not there complete."""
    if not is_store_url(build_out):
        return local_dir(build_out)
    store = Store(str(build_out))
    root = default_work_dir(store.url)
    variant = _VARIANT.get()
    rel_listing = f"targets/{target}.json" if variant is None else f"{VARIANTS_DIR}/{target}/{variant}.json"
    raw = store.read_bytes(rel_listing)
    if raw is None:
        if variant is not None:
            raise UserError(
                f"{store.url}: no variant {variant} of {target} (a store needs the whole 12-digit "
                f"variant; `entbench summary --from` a local copy lists them)"
            )
        raise UserError(
            f"{store.url}: no {target} build found (run `entbench build {target} --out {store.url}` first)"
        )
    listed = _listed_stages(raw, f"{store.location(rel_listing)}")
    wanted = listed if stages is None else {name: listed[name] for name in stages if name in listed}
    say = log or (lambda _msg: None)
    with build_lock(root):
        for name, rel in sorted(wanted.items()):
            local = root / rel
            if local.is_dir() and not check_complete(local):
                continue
            if store.read_manifest(rel) is None:
                raise UserError(f"{store.url}: stage {name} ({rel}) of {target} is not complete in the store")
            if local.exists():
                shutil.rmtree(local)
            store.fetch_stage(rel, local, say)
        atomic_write_text(root / rel_listing, raw.decode("utf-8"))
    return root


def locate_stage(build_out: str | Path, target: str, stage: str) -> UpstreamOutput:
    """A finished stage of `target`'s build in `build_out` (a directory or a store URL)."""
    base = local_build(build_out, target, [stage])
    listing = listing_file(base, target)
    if not listing.is_file():
        raise UserError(f"{base}: no {target} build found (run `entbench build {target} --out {base}` first)")
    listed = _listed_stages(listing.read_bytes(), str(listing))
    if stage not in listed:
        raise UserError(f"{listing}: not a {target} target record (no stage {stage!r})")
    return upstream_from_manifest(base / listed[stage])  # a UserError if not a complete stage


def listed_stages(raw: bytes) -> dict[str, str]:
    """Stage name -> stage directory (relative to the build root) of a `targets/<TARGET>.json`
    listing; a ValueError if `raw` is not one."""
    try:
        stages = json.loads(raw.decode("utf-8"))["stages"]
        return {str(name): str(rel) for name, rel in dict(stages).items()}
    except (KeyError, TypeError) as exc:
        raise ValueError(str(exc)) from exc


def _listed_stages(raw: bytes, where: str) -> dict[str, str]:
    try:
        return listed_stages(raw)
    except ValueError as exc:
        raise UserError(f"{where}: not a target record ({exc})") from exc


# --- variants --------------------------------------------------------------------------------------
#: Where every variant of a target built in a directory is recorded, relative to the directory.
VARIANTS_DIR = "targets/variants"
#: The variant the commands of this context read (`--variant`); None: the one built last.
_VARIANT: contextvars.ContextVar[str | None] = contextvars.ContextVar("entbench_variant", default=None)


def variant_id(stages: dict[str, str]) -> str:
    """The id of a target's variant: the first 12 hex digits of the sha256 of its stage directories
    (`targets/<TARGET>.json`'s `stages`), which name every stage's fingerprint."""
    return hashlib.sha256(canonical_json(stages).encode("utf-8")).hexdigest()[:12]


@contextlib.contextmanager
def reading_variant(variant: str | None) -> Iterator[None]:
    """Within this context, commands read `variant` of a target (a `--variant` value) instead of
    the one built last; None changes nothing."""
    token = _VARIANT.set(variant.strip().lower() if variant else None)
    try:
        yield
    finally:
        _VARIANT.reset(token)


def known_variants(root: Path, target: str) -> list[str]:
    """The variant ids recorded for `target` in the build directory `root`, sorted."""
    return sorted(p.stem for p in (root / VARIANTS_DIR / target).glob("*.json"))


def listing_file(root: Path, target: str) -> Path:
    """The listing commands read for `target` in `root`: `targets/<TARGET>.json`, or under `--variant`
    the recorded variant it names (a prefix of 4 or more digits will do when it is unambiguous)."""
    variant = _VARIANT.get()
    if variant is None:
        return root / "targets" / f"{target}.json"
    known = known_variants(root, target)
    matches = [v for v in known if v.startswith(variant)] if len(variant) >= 4 else []
    if len(matches) != 1:
        why = "matches several" if matches else "is not one"
        listed = ", ".join(known) or "none"
        raise UserError(
            f"--variant {variant} {why} of the variants of {target} in {root} (recorded: {listed})"
        )
    return root / VARIANTS_DIR / target / f"{matches[0]}.json"


def selected_variant(root: Path, target: str) -> str | None:
    """The whole id of the variant `--variant` selects in this context, or None (none selected)."""
    if _VARIANT.get() is None:
        return None
    return listing_file(root, target).stem


def current_variant(root: Path, target: str) -> tuple[str, int] | None:
    """(the id of the variant commands read, how many variants of `target` `root` holds), or None
    when the target was not built there."""
    listing = listing_file(root, target)
    if not listing.is_file():
        return None
    try:
        stages = listed_stages(listing.read_bytes())
    except ValueError:
        return None
    return variant_id(stages), max(1, len(known_variants(root, target)))


def record_variant(root: Path, target: str, text: str) -> str:
    """Record a listing's text as a variant of `target` (once; the same stages, the same file)."""
    variant = variant_id(listed_stages(text.encode("utf-8")))
    path = root / VARIANTS_DIR / target / f"{variant}.json"
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        atomic_write_text(path, text)
    return variant


def variant_note(root: Path, target: str) -> str | None:
    """A line saying which variant of `target` a command reads, when `root` holds several."""
    found = current_variant(root, target)
    if found is None or found[1] < 2:
        return None
    variant, count = found
    which = "the one named by --variant" if _VARIANT.get() else "the one built last"
    return (
        f"{target}: reading variant {variant}, {which}, of the {count} variants of {target} in {root} "
        f"(`--variant ID` reads another; `entbench summary --from {root}` lists them)"
    )
