"""The build hook that compiles the native extensions: a missing compiler degrades, CI can insist."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import hatch_build  # noqa: E402 - the repository root is not a package


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the source layout the hook compiles in."""
    for source in hatch_build.EXTENSIONS.values():
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / source, tmp_path / source)
    return tmp_path


def _no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sysconfig.get_config_var

    def fake(name: str) -> Any:
        return "/nonexistent/cc -shared" if name == "LDSHARED" else real(name)

    monkeypatch.setattr(hatch_build.sysconfig, "get_config_var", fake)


def test_without_a_compiler_the_build_warns_and_stays_pure_python(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ENTBENCH_REQUIRE_NATIVE", raising=False)
    _no_compiler(monkeypatch)
    assert hatch_build.compile_native(tree) is None
    assert hatch_build.compile_native(tree, "_wtrender") is None
    err = capsys.readouterr().err
    assert "the Wikidata scan will use its slower pure-Python path" in err
    assert "wikitext rendering will use its slower pure-Python path" in err
    assert not list((tree / "src" / "entbench").glob("_w*")), "no partial build left behind"
    assert not list((tree / "src" / "entbench").glob(".*tmp"))


def test_required_native_build_fails_loudly(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTBENCH_REQUIRE_NATIVE", "1")
    _no_compiler(monkeypatch)
    with pytest.raises(RuntimeError, match="compiling"):
        hatch_build.compile_native(tree)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_compiled_module_scans_a_line(tree: Path) -> None:
    built = hatch_build.compile_native(tree)
    assert built is not None and built.exists()
    assert hatch_build.compile_native(tree) == built  # up to date: not rebuilt
    spec = importlib.util.spec_from_file_location("_wdscan", built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scanner = module.Scanner(("en",), ("enwiki",))
    line = b'{"type":"item","id":"Q42","labels":{"en":{"language":"en","value":"Douglas Adams"}}}\n'
    entities, lines, opens, closes, fallbacks = scanner.scan(b"[\n" + line + b"]\n", 0, 0, len(line) + 4)
    assert (entities, lines, opens, closes, fallbacks) == (1, 1, 1, 1, [])
    columns = scanner.columns()
    n, _nulls, _valid, _offsets, data = columns["e.id"][1:]
    assert n == 1 and bytes(memoryview(data)) == b"Q42"
    assert bytes(memoryview(columns["e.label.0"][5])) == b"Douglas Adams"


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_compiled_renderer_finds_template_spans(tree: Path) -> None:
    built = hatch_build.compile_native(tree, "_wtrender")
    assert built is not None and built.exists()
    spec = importlib.util.spec_from_file_location("_wtrender", built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.template_spans("a {{b|{{c}}}} d {{e}}") == [(2, 13), (16, 21)]


# --- warnings and sanitizers ------------------------------------------------------------------------------
HAS_COMPILER = shutil.which("cc") is not None or shutil.which("gcc") is not None
#: A small extension for the tests below: `index(n)` reads byte n of an 8-byte heap buffer (n = 8 is
#: one past its end); `add(n)` adds n to INT_MAX (n > 0 overflows).
PROBE_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdlib.h>

static volatile size_t size = 8; /* not known when compiling: left to ASan, not UBSan */

static PyObject *probe_index(PyObject *Py_UNUSED(module), PyObject *arg) {
    long n = PyLong_AsLong(arg);
    volatile char *p = calloc(size, 1);
    if (!p) return PyErr_NoMemory();
    int value = p[n];
    free((void *)p);
    return PyLong_FromLong(value);
}

static PyObject *probe_add(PyObject *Py_UNUSED(module), PyObject *arg) {
    int n = (int)PyLong_AsLong(arg);
    return PyLong_FromLong(n + INT_MAX);
}

static PyMethodDef methods[] = {{"index", probe_index, METH_O, NULL}, {"add", probe_add, METH_O, NULL},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_probe", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__probe(void) { return PyModule_Create(&module); }
"""


def _probe_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> Path:
    """A tree holding only `_probe` (the hook's list of extensions patched to it)."""
    (tmp_path / "probe.c").write_text(source)
    monkeypatch.setattr(hatch_build, "EXTENSIONS", {"_probe": Path("probe.c")})
    monkeypatch.setattr(hatch_build, "PURPOSE", {"_probe": "the probe"})
    return tmp_path


@pytest.mark.skipif(not HAS_COMPILER, reason="no C compiler")
def test_a_warning_fails_a_strict_build_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make install` and CI (ENTBENCH_REQUIRE_NATIVE=1) build with -Wall -Wextra -Werror; a user's
    install with a compiler that warns about something new still gets the fast path."""
    warned = PROBE_SOURCE.replace("long n = PyLong_AsLong(arg);", "long n = PyLong_AsLong(arg), unused;")
    root = _probe_tree(tmp_path, monkeypatch, warned)
    monkeypatch.setenv("ENTBENCH_REQUIRE_NATIVE", "1")
    with pytest.raises(RuntimeError, match=r"unused variable .unused. \[-Werror=unused-variable\]"):
        hatch_build.compile_native(root, "_probe")
    monkeypatch.delenv("ENTBENCH_REQUIRE_NATIVE")
    built = hatch_build.compile_native(root, "_probe")
    assert built is not None and built.exists()
    assert capsys.readouterr().err == ""


def _run_probe(directory: Path, call: str) -> subprocess.CompletedProcess[str]:
    """`_probe.<call>` in a Python process with the sanitizer runtimes preloaded, as `make sanitize` runs."""
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=" ".join(map(str, hatch_build.sanitizer_preload())),
        ASAN_OPTIONS="detect_leaks=0:malloc_context_size=0",  # the Makefile's SANITIZE_ASAN_OPTIONS
        PYTHONMALLOC="malloc",
    )
    code = f"import sys; sys.path.insert(0, {str(directory)!r}); import _probe; print(_probe.{call})"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)


@pytest.mark.skipif(not HAS_COMPILER, reason="no C compiler")
def test_the_sanitizer_build_stops_at_a_memory_error_or_undefined_behaviour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `make sanitize` relies on: ENTBENCH_SANITIZE builds go to build/sanitize/ (the normal
    build is not touched), import with the preloaded runtimes, and abort the process with a report
    at the first error: a green run means none happened."""
    root = _probe_tree(tmp_path, monkeypatch, PROBE_SOURCE)
    built = hatch_build.compile_native(root, "_probe", sanitize=True)
    assert built is not None and built.parent == root / hatch_build.SANITIZE_DIR
    assert not (root / "src").exists(), "the normal build's place is left alone"
    fine = _run_probe(built.parent, "index(7) + _probe.add(-1)")
    assert (fine.returncode, fine.stdout) == (0, f"{2**31 - 2}\n"), fine.stderr
    overflow = _run_probe(built.parent, "index(8)")
    assert overflow.returncode != 0 and "AddressSanitizer: heap-buffer-overflow" in overflow.stderr
    assert "probe.c" in overflow.stderr, "the report names the line"
    undefined = _run_probe(built.parent, "add(1)")
    assert undefined.returncode != 0 and "runtime error: signed integer overflow" in undefined.stderr
    assert undefined.stdout == "", "UBSan stops the process instead of going on"


@pytest.mark.skipif(not HAS_COMPILER, reason="no C compiler")
def test_extensions_compiled_at_once_each_get_the_platform_suffix(tmp_path: Path) -> None:
    """`compile_all` in a fresh interpreter, as `make install` and `make sanitize` run it: Python
    3.11's sysconfig fills its table on first use with no lock, and before compile_all read it
    first, threads asking at once got `EXT_SUFFIX` None (`_wtrenderNone`, which nothing imports)."""
    names = ("_probe_a", "_probe_b", "_probe_c")
    for name in names:
        (tmp_path / f"{name}.c").write_text(PROBE_SOURCE)
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); import hatch_build; from pathlib import Path\n"
        f"hatch_build.EXTENSIONS = {{n: Path(n + '.c') for n in {names!r}}}\n"
        f"print('\\n'.join(str(p) for p in hatch_build.compile_all(Path({str(tmp_path)!r})).values()))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert done.stdout.split() == [str(tmp_path / "src" / "entbench" / f"{n}{suffix}") for n in names]
