"""OpenCC Traditional->Simplified accuracy on real sentence pairs (issue 4; quoted in the README).

    .venv/bin/python bench/zh_t2s_accuracy.py

Reads `fixtures/zh-text/ud-zh-gsd.dev.hant-hans.tsv` (500 UD Chinese GSD dev sentences in
Traditional with the GSDSimp Simplified version of each) and prints, for no conversion, entbench's
`t2s` (OpenCC phrases then characters; the `hansel` scheme), `t2s_chars` (character table only;
the `mgenre` scheme) and `t2s_hanziconv` (HanziConv, the `hanziconv` converter, which the Hansel
paper used): character accuracy over position-aligned characters, the share of sentences
converted exactly, and the most frequent residual errors. Alignment by position is sound because
every conversion keeps the number of code points (checked for every sentence).
`tests/filters/test_mentions.py::test_t2s_against_real_simplified_pairs` pins the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from entbench.filters.mentions import t2s, t2s_chars, t2s_hanziconv

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "zh-text" / "ud-zh-gsd.dev.hant-hans.tsv"


def main() -> None:
    """Print the accuracy table in Markdown."""
    lines = PAIRS.read_text(encoding="utf-8").splitlines()[1:]
    pairs = [(hant, hans) for _, hant, hans in (line.split("\t") for line in lines)]
    conversions: list[tuple[str, Callable[[str], str]]] = [
        ("none", lambda text: text),
        ("t2s (hansel)", t2s),
        ("t2s_chars (mgenre)", t2s_chars),
        ("t2s_hanziconv (converter=hanziconv)", t2s_hanziconv),
    ]
    print(f"{len(pairs)} sentence pairs, {sum(len(s) for _, s in pairs)} characters\n")
    print("| conversion | characters right | char accuracy | sentences exact | top residual errors |")
    print("|---|---|---|---|---|")
    for name, convert in conversions:
        right = total = exact = 0
        wrong: Counter[tuple[str, str]] = Counter()
        for hant, hans in pairs:
            out = convert(hant)
            if not len(out) == len(hant) == len(hans):
                raise SystemExit(f"{name} changed the number of code points of {hant!r}")
            right += sum(a == b for a, b in zip(out, hans, strict=True))
            total += len(hans)
            exact += out == hans
            wrong.update((a, b) for a, b in zip(out, hans, strict=True) if a != b)
        top = ", ".join(f"{a}→{b} ×{n}" for (a, b), n in wrong.most_common(5))  # got→expected
        sentences = f"{exact}/{len(pairs)} ({exact / len(pairs):.1%})"
        print(f"| {name} | {right}/{total} | {right / total:.2%} | {sentences} | {top} |")


if __name__ == "__main__":
    main()
