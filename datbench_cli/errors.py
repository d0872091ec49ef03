"""Exceptions that map to the command line's exit codes.

Every error the tool reports on purpose derives from :class:`DatbenchError`; the CLI prints its
message as one sentence on stderr and exits with its ``exit_code``. Anything else is a bug.
"""

from __future__ import annotations

from collections.abc import Sequence

_MAX_IDS_NAMED = 10
_MAX_ID_SHOWN = 120


def _short(ident: str) -> str:
    """An id as a message shows it: a longer one (untrusted text) cut, its length said."""
    if len(ident) <= _MAX_ID_SHOWN:
        return ident
    return f"{ident[:_MAX_ID_SHOWN]}... ({len(ident)} characters)"


def name_ids(ids: Sequence[str]) -> str:
    """A short, readable list of ids for a message ("a, b, c and 12 more"); an id longer
    than 120 characters is cut."""
    shown = ", ".join(_short(ident) for ident in ids[:_MAX_IDS_NAMED])
    extra = len(ids) - _MAX_IDS_NAMED
    return f"{shown} and {extra} more" if extra > 0 else shown


class DatbenchError(Exception):
    """Base class: a message for the user and an exit code (``hint``: at most one more line
    that names the fix)."""

    exit_code = 2
    hint: str | None = None


class InputError(DatbenchError):
    """Bad input: an unreadable or malformed file, an unknown name, an inconsistent run directory.

    ``path`` and ``line`` (1-based), when given, are prefixed to the message.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        path: object | None = None,
        line: int | None = None,
        *,
        hint: str | None = None,
    ):
        self.hint = hint
        self.path = str(path) if path is not None else None
        self.line = line
        self.bare_message = message
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(f"{where}{message}")


class UsageError(DatbenchError):
    """The command was called in a way that cannot work."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None):
        self.hint = hint
        super().__init__(message)


class BadArgument(UsageError, ValueError):
    """An argument value outside its choices: a usage error (exit 2) on the command line, a
    ``ValueError`` to a library caller."""


class CheckFailed(DatbenchError):
    """The evaluation ran but failed a check the user asked for (strict judge, --fail-under)."""

    exit_code = 1


class OutputError(DatbenchError):
    """A file could not be written (disk full, read-only or missing directory, ...).

    Raised only after the partial output was removed, so the message can say nothing was
    half-written.
    """

    exit_code = 2

    def __init__(self, path: object, exc: OSError):
        self.path = str(path)
        self.reason = exc.strerror or str(exc) or type(exc).__name__
        super().__init__(f"cannot write {self.path}: {self.reason}")


class StrictJudgeError(ValueError):
    """Strict judging found samples (or rubrics) without a usable verdict: missing, unparsed
    or stale. A ``ValueError``, as the seed's ``compute_metrics(strict_judge=True)`` promises."""


class ScorerFailed(RuntimeError):
    """A scorer raised (on a sample, or aggregating a dataset) and strict scoring was requested."""


class DatbenchWarning(UserWarning):
    """A warning of this library's own (coverage gaps, scorer failures, ...). The command line
    prints these; warnings from other libraries are not shown as ours."""


class CoverageWarning(DatbenchWarning):
    """Samples left unscored for want of a response. ``datbench score`` states this once
    itself (the note under its table, ``summary.coverage``, the coverage check), so the run
    directory stage does not repeat the warning; Python callers see it as a warning."""
