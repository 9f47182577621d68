"""WikiReading (Hewlett et al. 2016) as pure functions: value rendering, answer consolidation,
entropy and split assignment, and the release/Recycled record formats. No I/O here; the stages
in `entbench.builders.wikireading.pipeline*` read and write the shards.
"""
