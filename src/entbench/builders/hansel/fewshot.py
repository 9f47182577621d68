"""Few-shot candidate rules and phrase sampling (Hansel §3.3, appendix A; spec §5).

Rules, applied to every alias-table match in the corpus, in this order (the first that fails is
the reason counted):

1. `single_character`: "heuristically filter out single-character mentions to reduce noise"
   (appendix A (1)); length is counted in code points of the alias-table key (`min_chars`, 2).
2. `p_unlinked`: "We removed the mentions that are over-commonly missing hyperlinks in Wikipedia,
   defined by P(unlinked|m) > 0.98" (appendix A (3); `max_p_unlinked`). A key never found in
   article text has no P(unlinked|m) and is kept.
3. `few_known_candidates`: "we only match ambiguous mentions with at least two entity candidates
   in E_known" (§3.3; `min_known_candidates`, 2).

Sampling (appendix A, "Mention sampling"): "We sample each corpus by two equal criteria to get
sets of mention phrases, then randomly select one example per phrase. The criteria are namely
(1) uniformly sample, and (2) sample only ambiguous mentions with at least two candidates in the
alias table." Half of `size` phrases are drawn uniformly from every phrase that passed the rules,
the other half from the phrases with at least `ambiguous_candidates` (`AMBIGUOUS_CANDIDATES`, 2)
alias-table candidates not drawn already; each drawn phrase gets one of its occurrences, drawn
uniformly. One seeded
`random.Random` makes every draw, over sorted inputs. With the default rule 3, every kept phrase
already has two E_known candidates, so both halves draw from the same set; the criteria differ
when `min_known_candidates` is lowered to 1 (appendix A's own wording).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

UNIFORM, AMBIGUOUS = "uniform", "ambiguous"
#: Drop reasons, in the order the rules are applied.
REASONS = ("single_character", "p_unlinked", "few_known_candidates")


@dataclass(frozen=True)
class Phrase:
    """What the rules need to know about one alias-table key."""

    key: str
    p_unlinked: float | None  # P(unlinked|m); None when m never occurs in article text
    candidates: int  # alias-table candidates (any entity)
    known_candidates: int  # candidates in E_known


@dataclass(frozen=True)
class Rules:
    """The thresholds of the few-shot rules, with appendix A's values as defaults (the stage's
    parameters take their defaults from here)."""

    min_chars: int = 2
    max_p_unlinked: float = 0.98
    min_known_candidates: int = 2


#: The sampling's second criterion: phrases with at least this many alias-table candidates.
AMBIGUOUS_CANDIDATES = 2


def drop_reason(phrase: Phrase, rules: Rules) -> str | None:
    """Why a matched phrase is not a few-shot candidate, or None when it is."""
    if len(phrase.key) < rules.min_chars:
        return "single_character"
    if phrase.p_unlinked is not None and phrase.p_unlinked > rules.max_p_unlinked:
        return "p_unlinked"
    if phrase.known_candidates < rules.min_known_candidates:
        return "few_known_candidates"
    return None


@dataclass(frozen=True)
class Draw:
    """A sampled phrase, the criterion that drew it and which of its occurrences (0-based)."""

    key: str
    criterion: str
    occurrence: int


def sample_phrases(
    occurrences: Mapping[str, int],
    ambiguous: Sequence[str],
    size: int,
    seed: int,
) -> list[Draw]:
    """Draw up to `size` phrases, half uniformly and half among `ambiguous`, one occurrence each.

    `occurrences` maps every phrase that passed the rules to its number of matches in the corpus;
    `ambiguous` lists the phrases eligible for the second criterion. The result is in draw order.
    """
    if size < 0:
        raise ValueError("size must be >= 0")
    rng = random.Random(seed)
    pool = sorted(occurrences)
    n_uniform = size // 2
    uniform = rng.sample(pool, min(n_uniform, len(pool)))
    drawn = set(uniform)
    rest = sorted(p for p in set(ambiguous) if p in occurrences and p not in drawn)
    second = rng.sample(rest, min(size - n_uniform, len(rest)))
    draws = [(key, UNIFORM) for key in uniform] + [(key, AMBIGUOUS) for key in second]
    return [Draw(key, criterion, rng.randrange(occurrences[key])) for key, criterion in draws]
