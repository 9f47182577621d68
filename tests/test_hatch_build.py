"""The build hook that compiles the native extensions: a missing compiler degrades, CI can insist."""

from __future__ import annotations

import importlib.util
import shutil
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
