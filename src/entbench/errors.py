"""The kinds of failure a user sees.

`UserError` is something the user can fix on the command line or in the config (exit 2);
`DataError` is something wrong with an input file (exit 1) and always names the file and,
where there is one, the byte offset; `StorageError` is a failed operation on the store a build
publishes to (exit 1), naming the store and what was being done; `WorkerLost` is a worker process
that died under a build (exit 1), most often killed by the system for memory. Anything else is a
bug and shows a traceback only with `--verbose`.
"""

from __future__ import annotations

#: The status and the one line of a command stopped by Ctrl-C (128 + SIGINT, as the shell reports
#: it), whenever it comes: the entry point (`cli.main`) and the command group (`cli.app`) both say it.
INTERRUPTED_EXIT = 130
INTERRUPTED = "entbench: interrupted; re-run the same command to resume"


class EntbenchError(Exception):
    """Base of the errors the CLI turns into one clear line."""

    exit_code = 1


class UserError(EntbenchError):
    """A usage or configuration mistake: missing file, unknown flag value, malformed config."""

    exit_code = 2


class DataError(EntbenchError):
    """An input file that cannot be processed as asked."""

    exit_code = 1

    def __init__(
        self, message: str, *, path: str | None = None, offset: int | None = None, offset_in: str = ""
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}"
            if offset is not None:
                # `offset_in` says which bytes the offset counts when they are not the file's own
                # (a compressed file's decompressed stream)
                where += f" at byte offset {offset}" + (f" of {offset_in}" if offset_in else "")
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.offset = offset


class StorageError(EntbenchError):
    """A store operation (upload, download, listing) failed: network, permissions, quota."""

    exit_code = 1


class WorkerLost(EntbenchError):
    """A worker process died while it ran a task (killed by a signal, or it exited): the build
    stops, what finished is kept, and a re-run resumes."""

    exit_code = 1
