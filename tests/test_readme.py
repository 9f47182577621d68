"""The README is a contract: every shell command of its quick start and of "Benchmarks built" runs
here, in document order, as a user types it on a fresh clone (issue 18).

Each command runs through bash in an empty directory holding links to the repository's `.venv` and
`fixtures/` (so `.venv/bin/entbench`, `entbench` and `fixtures/…` resolve as in a checkout) and
`make` runs the repository's Makefile there, with its defaults. `/data/…` paths, which stand for a user's
real dumps, are the demo world's files of the same kind: real use then runs on real data, with only
the documented defaults. `make test` is not run: it is the command this test is part of.

The demo world is built once per test session (`world_out`); `entbench-out` starts as a copy of that
build, so `make run` finds every stage done (stage directories are named by fingerprint: what it
would have built is what is there) and every card up to date (the shared build records the same
`--out entbench-out`), and the commands after it build only what differs from it. Likewise `/data/out`
starts with the stages (not the target listings, not the cards) of the session's build of the same
files given as real sources (`real_sources_out`, the targets tests/engine/test_boundary.py checks),
which the real-use builds of WikiReading and WikiEnt from those files would write again.

The quick start's commands, every `make` and every command that needs a shell (a glob, a
redirection, quoting) run in a process of their own, through bash and the console script, as typed.
The other `entbench …` commands of "Benchmarks built" (plain words, nothing for a shell to expand)
run in this process through the console script's own `run`: the same arguments, exit status,
stdout and stderr, without ~1 s of interpreter start-up and imports each (some 25 commands).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import FIXTURES, REPO_ROOT, run_in_process
from tests.world_support import REAL_TARGETS, copy_stages, copy_world

pytestmark = pytest.mark.slow  # every target of the demo world, and real-use builds on its files

README = REPO_ROOT / "README.md"
SECTIONS = ("## Quick start", "## Benchmarks built")
WORLD = FIXTURES / "world"
#: What each `/data/…` path of the README stands for in this test.
DATA = {
    "/data/latest-all.json.gz": WORLD / "wikidata-new.json.gz",
    "/data/wikidata-20210301-all.json.gz": WORLD / "wikidata-old.json.gz",
    "/data/wikidata-20211201-all.json.gz": WORLD / "wikidata-new.json.gz",
    "/data/zhwiki-latest-pages-articles.xml.bz2": FIXTURES / "hansel" / "zhwiki-fixture.xml.bz2",
    "/data/enwiki-latest-pages-articles-multistream.xml.bz2": WORLD / "enwiki.xml.bz2",
    # Hansel from enwiki: real English pages with a Wikidata pair derived for them (hansel-en/)
    "/data/enwiki-latest-pages-articles.xml.bz2": FIXTURES / "hansel-en" / "enwiki-fixture.xml.bz2",
    "/data/wikidata-20180813-all.json.gz": FIXTURES / "hansel-en" / "wikidata-old.json.gz",
    "/data/wikidata-20210315-all.json.gz": FIXTURES / "hansel-en" / "wikidata-new.json.gz",
}
#: Commands whose documented outcome on the demo world's small files is a user error: real-use
#: defaults meant for a full dump (1,000 validation documents; the demo zhwiki has 6, the English
#: Hansel fixture 3).
EXPECTED_ERRORS = {
    "--source zhwiki=": "hansel.validation_docs = 1000 holds out all 6 documents",
    "--source wiki=": "hansel.validation_docs = 1000 holds out all 3 documents",
}
NOT_RUN = {"make test"}
#: Characters a shell gives a meaning to inside a command's arguments: a command holding one runs
#: through bash (`=`, as in `--source name=/path`, means nothing there).
SHELL_SYNTAX = set("$*?[]{}~<>|&;`'\"\\()#!")


def commands() -> list[str]:
    """The shell commands of the README's quick start and benchmark sections, in order."""
    return [command for _heading, command in sectioned_commands()]


def sectioned_commands() -> list[tuple[str, str]]:
    """(section heading, command) of every shell command of `SECTIONS`, in order."""
    text = README.read_text(encoding="utf-8")
    found: list[tuple[str, str]] = []
    for heading in SECTIONS:
        start = text.index(heading)
        end = text.find("\n## ", start + len(heading))
        section = text[start : end if end >= 0 else len(text)]
        for block in re.findall(r"```sh\n(.*?)```", section, re.S):
            joined = block.replace("\\\n", " ")
            for line in joined.splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command:
                    found.append((heading, " ".join(command.split())))
    return found


def in_process_args(heading: str, command: str) -> list[str] | None:
    """The arguments after `entbench` of a command the test runs in the test's process, or None for
    one that runs through bash: the quick start's, and any other than a plain `entbench …`."""
    words = command.split()
    if heading == SECTIONS[0] or words[0] != "entbench":
        return None
    if SHELL_SYNTAX & set(command):
        return None
    assert shlex.split(command) == words  # the words bash would pass
    return words[1:]


def test_the_readme_shows_commands_to_run() -> None:
    found = commands()
    assert found[:2] == ["make run", "make test"]
    assert found[2] == ". .venv/bin/activate"  # once; every later command is a bare `entbench`
    assert not any(c.startswith(".venv/bin/entbench") for c in found)
    assert any(c.startswith("entbench inspect") for c in found)
    assert sum(c.startswith("entbench build") for c in found) >= 8
    paths = {p for c in found for p in re.findall(r"/data/[^\s]+", c)}
    assert paths - {"/data/out"} <= set(DATA), "a /data path the test does not map"


@pytest.mark.timeout(1800)  # some 40 commands, a dozen of them builds
def test_every_readme_command_runs_on_the_demo_world(
    tmp_path: Path,
    world_out: Path,
    real_sources_out: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    venv = Path(sys.executable).parent.parent
    (tmp_path / ".venv").symlink_to(venv)
    (tmp_path / "fixtures").symlink_to(FIXTURES)
    copy_world(world_out, tmp_path / "entbench-out")
    copy_stages(real_sources_out, tmp_path / "data-out", REAL_TARGETS)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    in_process = 0
    for heading, shown in sectioned_commands():
        if shown in NOT_RUN:
            continue
        command = shown.replace("/data/out", str(tmp_path / "data-out"))
        for path, stands_for in DATA.items():
            command = command.replace(path, str(stands_for))
        args = in_process_args(heading, command)
        if args is not None:
            done = run_in_process(tmp_path, capsys, monkeypatch, args)
            in_process += 1
        elif command.startswith("make "):
            # The repository's Makefile with its own defaults (`.venv`, `OUT=entbench-out`), run here
            # as in a checkout; its install step is marked done (the `.venv` link is installed).
            target = command.split()[1]
            args = ["make", "-f", str(REPO_ROOT / "Makefile"), "-o", ".venv/.installed", target]
            done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        else:
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
            )
        expected = next((m for key, m in EXPECTED_ERRORS.items() if key in command), None)
        if expected is not None:
            assert done.returncode == 2 and expected in done.stderr, (command, done.stderr[-2000:])
            continue
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, command
        if command == "make run":
            # The one-screen summary: every target with its final tables, none empty.
            summary = done.stdout[done.stdout.rindex("alias-table:") :]
            assert "empty table" not in summary and "hansel-train:" in summary, summary
    assert in_process >= 20  # the README's benchmark commands are plain words, as a user copies them


def python_examples() -> list[str]:
    """The Python blocks of the README's "Python API" section."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Python API")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


def test_the_python_api_example_runs_on_the_demo_world(tmp_path: Path, world_out: Path) -> None:
    (example,) = python_examples()
    (tmp_path / "fixtures").symlink_to(FIXTURES)
    copy_world(world_out, tmp_path / "entbench-out" / "api")  # the example's `out`: its build is done
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    built = tmp_path / done.stdout.splitlines()[0]  # the example prints the stage directory first
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in built.glob("*.parquet"))
    assert "benchmarks/wikient/v" in str(built) and rows > 0, done.stdout
    assert f"num_rows: {rows}" in done.stdout, done.stdout  # what datasets loads is what was built
