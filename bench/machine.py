"""Where a benchmark's numbers come from: the machine, its load, the packages and the commit measured."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def load_average() -> float | None:
    """The 1-minute load average (other people's jobs on this shared machine), if the OS has one."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def machine(load_at_start: float | None) -> dict[str, Any]:
    """Where the numbers come from, and how busy the machine was at the start and the end."""
    from importlib import metadata

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    packages: dict[str, str | None] = {}
    for name in ("entbench", "msgspec", "isal", "pyarrow", "qwikidata"):
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "git": git_state(),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_1m_at_start": load_at_start,
        "load_average_1m_at_end": load_average(),
        "packages": packages,
    }


def git_state() -> dict[str, Any]:
    """The commit measured, and whether `src/entbench` had uncommitted changes (shared checkout)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "HEAD")
    changed = git("status", "--porcelain", "--", "src/entbench").splitlines()
    return {"head": head or None, "src_uncommitted_files": len(changed)}
