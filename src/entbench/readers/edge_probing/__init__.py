"""Edge-probing inputs: jiant JSON lines, CoNLL-U, CoNLL column files, and the format table."""
