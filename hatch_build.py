"""Hatch build hook: compiles the native Wikidata scanner (src/entbench/_native/wdscan.c).

The extension is a fast path only (builders/wikidata/native.py): when no C compiler is available
the build warns and produces a pure-Python package whose scan takes the reference path. Set
ENTBENCH_REQUIRE_NATIVE=1 to make a failed compile an error instead (CI does).
`python hatch_build.py` (or `make native`) recompiles in place after editing the C source.
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

SOURCE = Path("src/entbench/_native/wdscan.c")
MODULE = "_wdscan"


def compile_native(root: Path) -> Path | None:
    """Compile the extension next to the package's sources; its path, or None if it could not be built."""
    source = root / SOURCE
    target = root / "src" / "entbench" / f"{MODULE}{sysconfig.get_config_var('EXT_SUFFIX')}"
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
            raise RuntimeError(f"compiling {SOURCE} failed: {detail}") from exc
        print(
            f"entbench: could not compile {SOURCE} ({detail.strip()[:300]}); "
            "the Wikidata scan will use its slower pure-Python path",
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
        built = compile_native(Path(self.root))
        if built is None:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":  # an editable install imports it from src/ directly
            build_data["force_include"][str(built)] = f"entbench/{built.name}"


if __name__ == "__main__":
    os.environ.setdefault("ENTBENCH_REQUIRE_NATIVE", "1")
    print(compile_native(Path(__file__).resolve().parent))
