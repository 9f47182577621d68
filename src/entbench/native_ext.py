"""The compiled extensions (src/entbench/_native/, built by hatch_build.py), loaded the one way
every fast path loads them.

Each extension is optional: without a C compiler the install still succeeds and its caller takes
the Python reference path. An extension whose `ABI` constant is not the one its caller was written
for (an old .so next to newer sources) is ignored rather than misused. `ENTBENCH_NATIVE=0` switches
every fast path off. One module at the bottom of the layers so that readers and builders share it.
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def load_extension(name: str, abi: int) -> Any:
    """The extension module `entbench.<name>` if it is built and its `ABI` is `abi`, else None."""
    try:
        module = importlib.import_module(f"entbench.{name}")
    except ImportError:  # built without a C compiler: the reference path does all the work
        return None
    return module if getattr(module, "ABI", None) == abi else None


def native_switched_on() -> bool:
    """Whether the environment allows the fast paths (`ENTBENCH_NATIVE` is not "0")."""
    return os.environ.get("ENTBENCH_NATIVE", "1") != "0"


def extension_function(name: str, function: str) -> Any:
    """`entbench.<name>.<function>` if the extension is built with it and the fast paths are on,
    else None: for a helper whose signature is its own contract, whatever the module's `ABI`
    (the routing hash `_wdscan.string_shards`, which the engine uses for any string key)."""
    if not native_switched_on():
        return None
    try:
        module = importlib.import_module(f"entbench.{name}")
    except ImportError:
        return None
    return getattr(module, function, None)
