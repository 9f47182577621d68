"""Hatch build hook: compiles the native extensions in src/entbench/_native/.

`wdscan.c` is the Wikidata scanner (builders/wikidata/native.py), `wtrender.c` the wikitext inline
renderer (readers/wikitext_native.py). Each is a fast path only: when no C compiler is available
the build warns and produces a pure-Python package whose scans take the reference paths. Set
ENTBENCH_REQUIRE_NATIVE=1 to make a failed compile an error instead (CI does).
`python hatch_build.py` (or `make native`) recompiles in place after editing a C source.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
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
}
#: What each one speeds up, for the warning when it cannot be built.
PURPOSE = {"_wdscan": "the Wikidata scan", "_wtrender": "wikitext rendering"}


def compile_native(root: Path, module: str = "_wdscan") -> Path | None:
    """Compile one extension next to the package's sources; its path, or None if it could not be built."""
    source = root / EXTENSIONS[module]
    target = root / "src" / "entbench" / f"{module}{sysconfig.get_config_var('EXT_SUFFIX')}"
    if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    linker = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    command = [
        *linker,
        "-O3",
        "-fPIC",
        "-fvisibility=hidden",
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


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Builds the extension for wheels and editable installs."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        for module in EXTENSIONS:
            built = compile_native(Path(self.root), module)
            if built is None:
                continue
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            if version != "editable":  # an editable install imports it from src/ directly
                build_data["force_include"][str(built)] = f"entbench/{built.name}"


if __name__ == "__main__":
    os.environ.setdefault("ENTBENCH_REQUIRE_NATIVE", "1")
    for name in EXTENSIONS:
        print(compile_native(Path(__file__).resolve().parent, name))
