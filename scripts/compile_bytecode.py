"""Compile the bytecode of entbench and of what it needs at run time, after `make install`.

`make install` installs with `pip install --no-compile`: pip's own step compiles every module of
every installed package, one file at a time (~22 s of the install's ~43 s here, most of it for the
test and lint tools' packages, pandas and scipy among them, whose modules the tests mostly never
import). This compiles, on every core, only entbench's own modules and those of its run-time
dependencies, transitively (its `[project] dependencies`, not the `dev` or `dask` extras): what
`entbench …` imports, so that a command run where PYTHONDONTWRITEBYTECODE is set (many container
images set it) does not compile them again at each start. The rest is compiled as it is first
imported, as Python does by default (the test targets let it write bytecode: see the Makefile).

Usage: `python scripts/compile_bytecode.py` with the virtual environment's interpreter.
"""

from __future__ import annotations

import compileall
import functools
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: The distribution whose run-time closure is compiled.
ROOT = "entbench"


def run_time_closure(root: str = ROOT) -> list[metadata.Distribution]:
    """The installed distributions `root` needs at run time, `root` first: its requirements without
    an extra, then theirs, transitively (a requirement whose marker does not hold here is skipped;
    one not installed is too, as pip would have failed to install it)."""
    seen: set[str] = set()
    found: list[metadata.Distribution] = []
    todo = [root]
    while todo:
        name = todo.pop()
        if canonicalize_name(name) in seen:
            continue
        seen.add(canonicalize_name(name))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found.append(dist)
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def sources(dists: list[metadata.Distribution]) -> Iterator[str]:
    """The Python source files of `dists`, and of entbench's package directory (an editable install
    records none of its modules: they stay in the checkout's `src/`)."""
    import entbench

    for directory in entbench.__path__:
        yield from (str(p) for p in sorted(Path(directory).rglob("*.py")))
    for dist in dists:
        yield from (str(f.locate()) for f in dist.files or () if f.suffix == ".py")


#: Compile one module, silently; False if it does not compile (left as it is, as in pip's compile
#: step). A module whose bytecode is already up to date is skipped: a re-install compiles only
#: what changed.
compile_module = functools.partial(compileall.compile_file, quiet=2)


def main() -> int:
    """Compile the closure's modules in parallel; a summary line on stdout."""
    paths = list(sources(run_time_closure()))
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        current = sum(pool.map(compile_module, paths, chunksize=64))
    print(f"bytecode up to date: {current} of {len(paths)} modules of {ROOT} and its run-time deps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
