"""Set-up of the processes entbench owns: the `entbench` command and its pool workers.

pyarrow imports pandas on its first list-to-array conversion whenever pandas is installed (it
checks whether the list is "array-like"), which costs ~0.5 s and ~50 MB in every process and
worker. entbench never uses pandas, so in processes it owns (never in a library user's process,
where pandas may be wanted) it makes pandas unimportable.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NoPandas(MetaPathFinder):
    """An import hook that reports pandas as not installed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """Refuse `pandas` and its submodules; leave every other import to the next finder."""
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not used in entbench processes", name=fullname)
        return None


def without_pandas() -> None:
    """Make `import pandas` fail in this process, unless pandas is already imported."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
