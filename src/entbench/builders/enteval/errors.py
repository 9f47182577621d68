"""The one error the task-source parsers raise; builders turn it into a `DataError` naming the file."""

from __future__ import annotations


class SourceError(ValueError):
    """A task source line that does not have the expected shape; `line` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
