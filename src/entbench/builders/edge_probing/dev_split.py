"""The paper's 10% rule: a dev split reserved from train for datasets whose source has none.

Ray Choudhury & Kalra (2023), §2.2: "Where development data was not available from the source, 10%
of the data from the training set was reserved for validation." (CoNLL-Chunking and
Semeval-Rel-Cls print ``-`` for dev in Table 1.) `filter mem --dev-from-train FRACTION` draws that
share of the train *sentences* (all items of a sentence stay together, so no sentence is in both
splits) with `random.Random(seed).sample`, writes them as `dev.jsonl` and audits the test split
against the train that is left, the one a probe is trained on. Dev items with a label the left
train never has are dropped and counted, as EPtest's converter does for a dev file.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from entbench.errors import UserError
from entbench.filters.memorization import Item, Mode, select_test_items
from entbench.readers.edge_probing.items import EPItem

#: The dev draw's default seed.
DEFAULT_DEV_SEED = 0


@dataclass(frozen=True)
class DevSplit:
    """Train split into what is left and the reserved dev, with the counts the card shows."""

    train: list[EPItem]
    dev: list[EPItem]  # the dev items written (those whose labels the left train has)
    fraction: float
    seed: int
    train_sentences: int  # sentences of the train input
    dev_sentences: int
    dev_items: int  # items of the dev sentences, before the unseen-label drop
    dev_unseen_label_drops: int  # (item, label) pairs dropped, as the test split counts them

    def stats(self) -> dict[str, float | int]:
        """The split's parameters and counts, for `stats.json`."""
        return {
            "fraction": self.fraction,
            "seed": self.seed,
            "train_sentences": self.train_sentences,
            "dev_sentences": self.dev_sentences,
            "dev_items": self.dev_items,
            "dev_unseen_label_drops": self.dev_unseen_label_drops,
            "dev_items_written": len(self.dev),
            "train_items_left": len(self.train),
        }


def check_fraction(fraction: float) -> float:
    """`fraction` if it is strictly between 0 and 1, else a user error."""
    if not 0.0 < fraction < 1.0:
        raise UserError(
            f"--dev-from-train must be a fraction between 0 and 1 (the paper: 0.1), got {fraction}"
        )
    return fraction


def split_dev(items: Sequence[EPItem], fraction: float, *, seed: int, mode: Mode) -> DevSplit:
    """Reserve round(`fraction` x sentences) train sentences, drawn with `seed`, as dev."""
    check_fraction(fraction)
    sentences = sorted({item.sentence_index for item in items})
    n_dev = int(fraction * len(sentences) + 0.5)
    if not 0 < n_dev < len(sentences):
        raise UserError(
            f"--dev-from-train {fraction} of {len(sentences)} train sentences leaves "
            f"{'no dev' if n_dev == 0 else 'no train'} sentence"
        )
    chosen = set(random.Random(seed).sample(sentences, n_dev))
    train = [item for item in items if item.sentence_index not in chosen]
    reserved = [item for item in items if item.sentence_index in chosen]
    labels = {label for item in train for label in item.labels}
    selection = select_test_items(labels, [Item(it.span_texts, it.labels) for it in reserved], mode)
    # `eptest` keeps a multi-label item once per label train has (C1); a file holds it once.
    dev = [reserved[i] for i in sorted(set(selection.kept))]
    return DevSplit(
        train=train,
        dev=dev,
        fraction=fraction,
        seed=seed,
        train_sentences=len(sentences),
        dev_sentences=n_dev,
        dev_items=len(reserved),
        dev_unseen_label_drops=len(selection.dropped),
    )
