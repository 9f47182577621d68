"""Hatch build hook: compiles the native extensions in src/entbench/_native/.

`wdscan.c` is the Wikidata scanner (builders/wikidata/native.py), `wtrender.c` the wikitext inline
renderer (readers/wikitext/native.py), `mentionparts.c` the matcher of a part of an alias vocabulary
(builders/alias/native.py). Each is a fast path only: when no C compiler is available
the build warns and produces a pure-Python package whose scans take the reference paths. Set
ENTBENCH_REQUIRE_NATIVE=1 to make a failed compile an error instead (`make install` and CI do);
then a compiler warning is an error too.
`python hatch_build.py` (or `make native`) recompiles in place after editing a C source.
`ENTBENCH_SANITIZE=1 python hatch_build.py` (part of `make sanitize`) compiles them all with
AddressSanitizer and UndefinedBehaviorSanitizer into `build/sanitize/` instead, leaving the normal
builds alone; `tests/conftest.py` loads them from there under the same variable, and
`python hatch_build.py --sanitizer-preload` prints the runtimes that the Python process must preload.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script (`python hatch_build.py`, `make native`) outside a build
    BuildHookInterface = object

#: Extension module name -> its C source (one file each).
EXTENSIONS = {
    "_wdscan": Path("src/entbench/_native/wdscan.c"),
    "_wtrender": Path("src/entbench/_native/wtrender.c"),
    "_mentionparts": Path("src/entbench/_native/mentionparts.c"),
}
#: What each one speeds up, for the warning when it cannot be built.
PURPOSE = {
    "_wdscan": "the Wikidata scan",
    "_wtrender": "wikitext rendering",
    "_mentionparts": "matching a vocabulary in parts (mention_stats)",
}
#: Where the sanitizer builds go, relative to the repository root (never next to the normal ones: a
#: sanitized extension cannot be imported without the ASan runtime preloaded).
SANITIZE_DIR = Path("build/sanitize")
#: Every warning the code is kept free of (a strict build, ENTBENCH_REQUIRE_NATIVE=1, adds -Werror).
WARNINGS = ["-Wall", "-Wextra"]
#: A sanitizer build: every memory error, overflow or undefined operation aborts the process with a
#: report (no recovery), optimised little so that the reports point at the right lines.
SANITIZE = [
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
]


def compile_flags(*, sanitize: bool = False, strict: bool = False) -> list[str]:
    """The compiler flags of a build (besides the include path and the files).

    `strict` (ENTBENCH_REQUIRE_NATIVE=1: `make install`, CI) turns warnings into errors. A user's
    install does not: a newer compiler's new warning must not cost them the fast path.
    """
    return [
        *(SANITIZE if sanitize else ["-O3"]),
        "-fPIC",
        "-fvisibility=hidden",
        *WARNINGS,
        *(["-Werror"] if strict or sanitize else []),
    ]


def compile_native(root: Path, module: str = "_wdscan", *, sanitize: bool = False) -> Path | None:
    """Compile one extension next to the package's sources (with `sanitize`: into SANITIZE_DIR);
    its path, or None if it could not be built."""
    source = root / EXTENSIONS[module]
    directory = root / SANITIZE_DIR if sanitize else root / "src" / "entbench"
    target = directory / f"{module}{sysconfig.get_config_var('EXT_SUFFIX')}"
    # Stale when its source or this recipe (the flags) changed since.
    newest_input = max(source.stat().st_mtime, Path(__file__).stat().st_mtime)
    if target.exists() and target.stat().st_mtime >= newest_input:
        return target
    directory.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    strict = os.environ.get("ENTBENCH_REQUIRE_NATIVE") == "1"
    command = [
        *_linker(),
        *compile_flags(sanitize=sanitize, strict=strict),
        f"-I{sysconfig.get_paths()['include']}",
        str(source),
        "-o",
        str(partial),
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
        # A new file, not one rewritten in place: a process that has the old build loaded keeps
        # its mapping instead of crashing.
        os.replace(partial, target)
    except (OSError, subprocess.CalledProcessError) as exc:
        partial.unlink(missing_ok=True)
        detail = getattr(exc, "stderr", "") or str(exc)
        if os.environ.get("ENTBENCH_REQUIRE_NATIVE") == "1":
            raise RuntimeError(f"compiling {EXTENSIONS[module]} failed: {detail}") from exc
        print(
            f"entbench: could not compile {EXTENSIONS[module]} ({detail.strip()[:300]}); "
            f"{PURPOSE[module]} will use its slower pure-Python path",
            file=sys.stderr,
        )
        return None
    return target


def compile_all(root: Path, *, sanitize: bool = False) -> dict[str, Path | None]:
    """Compile every extension (`compile_native` each), all at once: each is one compiler process
    working on one core, and a build of the three one after the other left the other cores idle
    (the sanitizer build: ~7 s on one core of two)."""
    # Python 3.11's sysconfig fills its variables on first use with no lock: threads asking at once
    # can read a half-filled table (EXT_SUFFIX None, a module written as `_wtrenderNone`).
    sysconfig.get_config_vars()
    with ThreadPoolExecutor(max_workers=len(EXTENSIONS)) as pool:
        built = {name: pool.submit(compile_native, root, name, sanitize=sanitize) for name in EXTENSIONS}
        return {name: future.result() for name, future in built.items()}


def _linker() -> list[str]:
    """The compile-and-link command Python's own extensions are built with (`gcc -shared …`)."""
    return shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")


def sanitizer_preload() -> list[Path]:
    """The libraries a Python process must preload (LD_PRELOAD) to import a sanitized extension.

    The ASan runtime has to come before anything else. The C++ runtime too: ASan intercepts
    `__cxa_throw`, and finds the real one only if libstdc++ is loaded when ASan starts, not later
    with pyarrow or DuckDB (a C++ exception would otherwise abort the process).
    """
    return [_compiler_file("libasan.so"), _compiler_file("libstdc++.so")]


def _compiler_file(name: str) -> Path:
    """A runtime library of the compiler that builds the extensions (`cc -print-file-name`)."""
    compiler = _linker()[0]
    try:
        found = subprocess.run(
            [compiler, f"-print-file-name={name}"], check=True, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"cannot ask {compiler} where {name} is: {exc}") from exc
    # A compiler without it echoes the bare name back.
    if not os.path.isabs(found) or not os.path.exists(found):
        raise RuntimeError(f"{compiler} has no {name}, which a sanitizer build needs (gcc has it)")
    return Path(os.path.realpath(found))


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Builds the extension for wheels and editable installs."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        # Never sanitized (ENTBENCH_SANITIZE is for `python hatch_build.py` alone): a wheel's
        # extensions must import in a plain Python process.
        if self.target_name != "wheel":
            return
        for built in compile_all(Path(self.root)).values():
            if built is None:
                continue
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            if version != "editable":  # an editable install imports it from src/ directly
                build_data["force_include"][str(built)] = f"entbench/{built.name}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--sanitizer-preload"]:
        print(" ".join(map(str, sanitizer_preload())))
        sys.exit(0)
    os.environ.setdefault("ENTBENCH_REQUIRE_NATIVE", "1")
    sanitize = os.environ.get("ENTBENCH_SANITIZE") == "1"
    for built in compile_all(Path(__file__).resolve().parent, sanitize=sanitize).values():
        print(built)
