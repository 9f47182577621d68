"""Few-shot rules and phrase sampling as pure functions (Hansel §3.3, appendix A; spec §5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from entbench.builders.hansel.fewshot import AMBIGUOUS, UNIFORM, Phrase, Rules, drop_reason, sample_phrases

RULES = Rules()


@pytest.mark.parametrize(
    ("phrase", "reason"),
    [
        (Phrase("后", 0.2, 5, 4), "single_character"),
        (Phrase("后", 0.99, 1, 0), "single_character"),  # the first failing rule is the reason
        (Phrase("中国", 0.981, 3, 3), "p_unlinked"),
        (Phrase("中国", 0.98, 3, 3), None),  # "> 0.98" drops, 0.98 itself stays
        (Phrase("逻辑", None, 2, 2), None),  # never seen in article text: no P(unlinked|m) to test
        (Phrase("逻辑", 0.5, 3, 1), "few_known_candidates"),
        (Phrase("希腊", 0.5, 2, 2), None),
    ],
)
def test_rules(phrase: Phrase, reason: str | None) -> None:
    assert drop_reason(phrase, RULES) == reason


def test_thresholds_are_parameters() -> None:
    assert drop_reason(Phrase("后", 0.2, 5, 4), Rules(min_chars=1)) is None
    assert drop_reason(Phrase("中国", 0.99, 3, 3), Rules(max_p_unlinked=1.0)) is None
    assert drop_reason(Phrase("逻辑", 0.5, 3, 1), Rules(min_known_candidates=1)) is None


OCC = {f"p{i:02d}": i % 5 + 1 for i in range(40)}
AMBIG = [f"p{i:02d}" for i in range(0, 40, 4)]  # 10 ambiguous phrases


def test_half_uniform_half_ambiguous_one_occurrence_per_phrase() -> None:
    draws = sample_phrases(OCC, AMBIG, 12, seed=3)
    assert [d.criterion for d in draws] == [UNIFORM] * 6 + [AMBIGUOUS] * 6
    assert len({d.key for d in draws}) == 12
    assert all(d.key in AMBIG for d in draws if d.criterion == AMBIGUOUS)
    assert all(0 <= d.occurrence < OCC[d.key] for d in draws)


def test_seeded() -> None:
    assert sample_phrases(OCC, AMBIG, 12, 3) == sample_phrases(
        dict(reversed(OCC.items())), AMBIG[::-1], 12, 3
    )
    assert sample_phrases(OCC, AMBIG, 12, 3) != sample_phrases(OCC, AMBIG, 12, 4)


def test_small_pools_give_what_they_have() -> None:
    draws = sample_phrases(OCC, AMBIG, 100, seed=0)
    assert sum(d.criterion == UNIFORM for d in draws) == 40  # the uniform half takes every phrase
    assert not [d for d in draws if d.criterion == AMBIGUOUS]
    assert sample_phrases({}, [], 10, 0) == []
    # an ambiguous phrase that did not pass the rules is never drawn
    assert all(d.key in OCC for d in sample_phrases(OCC, ["elsewhere"], 80, 0))


@given(st.integers(0, 60), st.integers(0, 2**31))
def test_sizes(size: int, seed: int) -> None:
    draws = sample_phrases(OCC, AMBIG, size, seed)
    uniform = [d for d in draws if d.criterion == UNIFORM]
    assert len(uniform) == min(size // 2, len(OCC))
    assert len(draws) - len(uniform) == min(size - size // 2, len(set(AMBIG) - {d.key for d in uniform}))
    assert len({d.key for d in draws}) == len(draws)
