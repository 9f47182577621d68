"""The framework: stages, planning, running, shards and manifests; it knows no dataset."""
