"""The `entbench` command line: thin click commands over plain functions."""
