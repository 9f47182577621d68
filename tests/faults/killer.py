"""Run `entbench ARGS…` in this process and SIGKILL it at a chosen file operation.

    python tests/faults/killer.py WHEN:NAME:N build wikidata --out DIR …

WHEN is `before` or `after`; the kill hits the N-th `os.replace`/`os.rename` whose destination's
file name contains NAME. Every file the build writes goes through one of the two (temp file, then
rename), so these are exactly the points where a crash can leave a build half-written. The kill is
a real SIGKILL of the build process: no `finally`, no atexit, no flush.

Only this process is hooked (the hook is installed under `__main__`), so with `--workers 2` the
spawned workers run unhooked and are orphaned by the kill, as after an OOM kill of the parent.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any


def install(when: str, name: str, nth: int) -> None:
    """Wrap `os.replace` and `os.rename` to SIGKILL this process at the chosen call."""
    seen = 0

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def operation(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
            nonlocal seen
            hit = name in os.path.basename(os.fspath(dst))
            if hit:
                seen += 1
            if hit and seen == nth and when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            result = real(src, dst, *args, **kwargs)
            if hit and seen == nth and when == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return operation

    os.replace = wrap(os.replace)
    os.rename = wrap(os.rename)


if __name__ == "__main__":
    spec, *arguments = sys.argv[1:]
    point, file_name, count = spec.split(":")
    if point not in ("before", "after"):
        raise SystemExit(f"WHEN must be before or after, got {point!r}")
    install(point, file_name, int(count))
    from entbench.cli.main import main

    sys.argv = ["entbench", *arguments]
    main()
