"""EFP task stage (EntEval §3.3; spec §8): `enteval_efp`, FEVER claims with an evidence page as the
entity mention, sampled into train/dev/test (`enteval.efp`).

Each file of `source` is read as it streams (one FEVER file is ~145k claims); only the lines to
write are held. NOT ENOUGH INFO claims and claims in which no evidence page is found are left out
and counted; so are repeats of a line already made (`dropped_duplicate_claim`: FEVER has claims
written twice) and every copy of a line made with both labels (`dropped_conflicting_label`). The
lines left are put in a seeded order and cut into `sizes` (proportionally smaller when there are
fewer), so no claim is in two splits.

Counts: `claims_read`, `dropped_not_enough_info`, `dropped_no_evidence_page`,
`dropped_no_page_in_claim`, `dropped_duplicate_claim`, `dropped_conflicting_label`,
`claims_several_pages` (one picked by the seed), `instances_written_<split>`,
`instances_beyond_splits`, `label_<label>` (lines written per label) and `labels` (how many).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Annotated, ClassVar

from msgspec import Meta

from entbench.builders.enteval import efp
from entbench.builders.enteval.errors import SourceError
from entbench.builders.enteval.sampling import proportional, seeded_order
from entbench.builders.enteval.stages.common import TaskOutput, TaskStage
from entbench.builders.enteval.stages.sources import SourceLines, TaskParams
from entbench.builders.enteval.tokens import Tokenizer
from entbench.engine.stage import StageContext
from entbench.engine.stats import Stats


@dataclass(frozen=True)
class EfpParams(TaskParams):
    """`source`: FEVER jsonl files (one path or a list); `sizes`: train, dev, test (§3.3: 10,000 /
    2,000 / 2,000); `seed` (mention choice and sampling); `lowercase` claims; `ignore_case`: also
    find a page whose text differs from the claim's only in case."""

    SOURCE_FIELDS: ClassVar[tuple[str, ...]] = ("source",)

    source: Annotated[
        tuple[str, ...],
        Meta(description="FEVER jsonl file(s): a path or a list of paths"),
    ] = ()
    sizes: Annotated[
        tuple[int, ...],
        Meta(description="train, dev, test sizes"),
    ] = (10000, 2000, 2000)
    seed: Annotated[
        int,
        Meta(description="mention choice and sampling seed"),
    ] = 1111
    lowercase: Annotated[
        bool,
        Meta(description="lowercase claims"),
    ] = True
    ignore_case: Annotated[
        bool,
        Meta(description="also find a page whose text differs from the claim's only in case"),
    ] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.sizes) != 3 or min(self.sizes) < 0:
            raise ValueError("sizes must be three sizes (train, dev, test)")


class EfpStage(TaskStage[EfpParams]):
    """Entity factuality prediction: FEVER claims with one evidence page as the mention (`enteval.efp`)."""

    name = "enteval_efp"
    version = 1
    description = "EntEval EFP: FEVER claims without NOT ENOUGH INFO, an evidence page as the mention"
    task = "efp"
    files = tuple(efp.FILES.values())

    def build(self, ctx: StageContext[EfpParams], p: EfpParams, stats: Stats) -> TaskOutput:
        """Claims -> mention -> unique lines -> seeded splits."""
        tokenizer = Tokenizer.shared()
        labels: dict[tuple[str, int, int], set[str]] = {}
        copies: dict[tuple[str, int, int], int] = {}
        for path in p.source_paths("source"):
            source = SourceLines(path)
            try:
                for claim in efp.iter_fever(iter(source)):
                    stats.add("claims_read")
                    key = self._instance(claim, tokenizer, p, stats)
                    if key is not None:
                        labels.setdefault(key, set()).add(claim.label)
                        copies[key] = copies.get(key, 0) + 1
            except SourceError as exc:
                raise source.error(exc) from exc
        kept: list[tuple[str, str, int, int]] = []
        for key, found in labels.items():
            if len(found) > 1:
                stats.add("dropped_conflicting_label", copies[key])
                continue
            stats.add("dropped_duplicate_claim", copies[key] - 1)
            kept.append((next(iter(found)), *key))
        ordered = seeded_order(kept, lambda k: (k[1], str(k[2]), str(k[3]), k[0]), p.seed)
        output = TaskOutput()
        start = 0
        written: set[str] = set()
        for split, size in zip(efp.SPLITS, proportional(len(ordered), p.sizes), strict=True):
            chosen = ordered[start : start + size]
            output.lines[efp.FILES[split]] = [
                efp.efp_line(label, claim.split(" "), s, e) for label, claim, s, e in chosen
            ]
            for label, *_ in chosen:
                stats.add(f"label_{label}")
                written.add(label)
            stats.add(f"instances_written_{split}", len(chosen))
            start += size
        stats.add("instances_beyond_splits", len(ordered) - start)
        stats.add("labels", len(written))
        return output

    @staticmethod
    def _instance(
        claim: efp.Claim, tokenizer: Tokenizer, p: EfpParams, stats: Stats
    ) -> tuple[str, int, int] | None:
        """(claim words joined by spaces, start, end) of a claim kept, else None (counted)."""
        if claim.label == efp.NOT_ENOUGH_INFO:
            stats.add("dropped_not_enough_info")
            return None
        if not claim.pages:
            stats.add("dropped_no_evidence_page")
            return None
        text = unicodedata.normalize("NFC", claim.claim)
        tokens = tokenizer.tokens(text)
        found = efp.mentions(text, tokens, claim.pages, p.ignore_case)
        if not found:
            stats.add("dropped_no_page_in_claim")
            return None
        if len(found) > 1:
            stats.add("claims_several_pages")
        mention = efp.pick(claim, found, p.seed)
        words = [t.text.lower() if p.lowercase else t.text for t in tokens]
        return " ".join(words), mention.start, mention.end
