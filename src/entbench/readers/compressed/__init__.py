"""Compressed and plain dump streams: compression detection, line-aligned blocks and byte
ranges, sequential decompression (isal, rapidgzip), gzip seek indexes, read-ahead threads."""
