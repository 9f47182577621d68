"""Where tasks run."""
