"""The output guard: the one rule every command applies to a path it is about to write.

A command may write a path only when it is

- not one of the command's inputs (by file identity: a link or a second name counts),
- not a directory, and not a symlink (a descriptor link such as ``/dev/stdout`` excepted),
- not a file of a run directory that the command does not own: in a folder holding a
  manifest (``datbench.json``), each fixed file name belongs to the stages that write it
  (``references.jsonl`` to the export, ``responses.jsonl`` to the agent, ``send`` and
  ``import-responses``, ``report.json`` to ``score``...); a name the run does not use (a
  comparison file put beside the report) is free.

What passes is written through :func:`jsonio.atomic_writer` (a temporary file renamed into
place), or in place when it is a character device or pipe the user named. The check runs
before anything is read or written, so a refused output costs nothing.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from datbench_cli.errors import UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.locking import hold_lock
from datbench_cli.files.rundir import (
    IMAGES,
    JUDGE_DIGESTS,
    JUDGE_RESPONSES,
    JUDGE_TASKS,
    MANIFEST,
    REFERENCES,
    REPORT,
    RESPONSES,
    TASKS,
    RunDir,
)

PAGE = "report.html"
TRAJECTORIES = "trajectories.jsonl"
AGENT_SETTINGS = "agent.json"
REQUESTS = "requests"

# Which command writes each fixed file of a run directory (a folder: everything inside it).
_OWNERS: dict[str, frozenset[str]] = {
    MANIFEST: frozenset({"export-tasks"}),
    TASKS: frozenset({"export-tasks"}),
    REFERENCES: frozenset({"export-tasks"}),
    IMAGES: frozenset({"export-tasks"}),
    REQUESTS: frozenset({"export-tasks", "make-judge-tasks"}),
    RESPONSES: frozenset({"agent", "send", "import-responses"}),
    TRAJECTORIES: frozenset({"agent"}),
    AGENT_SETTINGS: frozenset({"agent"}),
    JUDGE_TASKS: frozenset({"make-judge-tasks"}),
    JUDGE_DIGESTS: frozenset({"make-judge-tasks"}),
    JUDGE_RESPONSES: frozenset({"send"}),
    REPORT: frozenset({"score"}),
    PAGE: frozenset({"score", "view"}),
}


def landing(path: Path) -> Path:
    """Where writing ``path`` lands: its folder with every link resolved (the kernel follows
    ``link/..`` to the link target's parent, ``abspath`` would drop both), its own name kept
    (a link there is judged by the guard itself); a descriptor link (``/dev/stdout``,
    ``/proc/self/fd/3``), written in place, lands in the file it leads to."""
    name = Path(path).name
    if name in ("", "..") or jsonio.is_descriptor_link(path):
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(Path(path).parent)) / name


def run_root_of(path: Path) -> Path | None:
    """The run directory ``path`` lands in (its folder, or the nearest folder above holding a
    manifest: ``images/<task>/...``), else ``None``."""
    for candidate in landing(path).parents:
        if (candidate / MANIFEST).is_file():
            return candidate
    return None


def _run_file(path: Path) -> tuple[Path, str] | None:
    """``(run directory, fixed name)`` when ``path`` is one of a run directory's files."""
    root = run_root_of(path)
    if root is None:
        return None
    parts = landing(path).relative_to(root).parts
    name = parts[0]
    if name not in _OWNERS or (len(parts) > 1 and name not in (IMAGES, REQUESTS)):
        return None
    return root, name


def _linked_run_file(path: Path, inputs: Iterable[Path | None]) -> tuple[Path, str] | None:
    """``(run directory, fixed name)`` when ``path`` is a second name (a hard link) of a fixed
    file of the run directory an input lies in: ``send`` appends to what it names, so a hard
    link to ``tasks.jsonl`` would append to the export's file."""
    try:
        if os.lstat(path).st_nlink < 2:
            return None
    except OSError:
        return None
    roots = {run_root_of(p) for p in inputs if p is not None}
    for root in sorted(r for r in roots if r is not None):
        for name in _OWNERS:
            if name not in (IMAGES, REQUESTS) and same_file(path, root / name):
                return root, name
    return None


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (a link or second name counts)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one is not there yet: where writing it would land
        return landing(a) == landing(b)


def guard_output(
    path: Path,
    command: str,
    inputs: Iterable[Path | None] = (),
    *,
    option: str = "the output",
) -> Path:
    """``path`` when ``command`` may write it; else a :class:`UsageError` naming the file
    (exit 2). A character device or pipe (``/dev/stdout``, ``/dev/null``, or a link to one)
    passes, unless it stands at a run directory's fixed name: it is written in place, and no
    file is replaced; any other file that is not a regular file (a socket, a block device)
    never does."""
    inputs = list(inputs)
    own: int | None = None
    target: int | None = None
    with contextlib.suppress(OSError):
        own = os.lstat(path).st_mode
        target = os.stat(path).st_mode
    if target is not None and (stat.S_ISCHR(target) or stat.S_ISFIFO(target)):
        found = _run_file(path)
        if found is not None and found[1] not in (IMAGES, REQUESTS):
            # A run's own files are files: a pipe there would block the command (after all
            # its work) until something reads it, and no later stage could read it again.
            raise UsageError(
                f"{option} {path} is the run directory's {found[1]}, but a pipe or device, "
                "not a file; remove it (or name a pipe elsewhere with --out)"
            )
        return path
    if own is not None and stat.S_ISLNK(own) and not jsonio.is_descriptor_link(path):
        raise UsageError(
            f"{option} {path} is a symlink; datbench never writes through a link it did not "
            "make: name the file itself"
        )
    if target is not None and stat.S_ISDIR(target):
        raise UsageError(f"{option} {path} is a directory; name a file")
    if target is not None and not stat.S_ISREG(target):
        # A socket or block device: neither replaced nor written in place (refused here, not
        # when the output is saved after all the work).
        raise UsageError(
            f"{option} {path} is a socket or block device, not a file; name a file (or a pipe)"
        )
    for candidate in inputs:
        if candidate is not None and same_file(path, candidate):
            raise UsageError(
                f"{option} {path} is an input of this command ({candidate}); writing it "
                "would replace that input: name another output file"
            )
    # A descriptor link (/proc/self/fd/3, /dev/stdout) is judged by the file it leads to.
    found = _run_file(path) or _linked_run_file(path, inputs)
    if found is not None and command not in _OWNERS[found[1]]:
        name = found[1]
        writers = ", ".join(f"`datbench {c}`" for c in sorted(_OWNERS[name]))
        raise UsageError(
            f"{option} {path} is the run directory's {name} (written by {writers}); "
            f"`datbench {command}` never replaces it: name another output file"
        )
    return path


def guard_outputs(command: str, inputs: Iterable[Path | None], **outputs: Path | None) -> None:
    """:func:`guard_output` for each given output (keyword: the option's name, ``--`` and
    dashes as underscores); two outputs naming one file are refused too."""
    listed = list(inputs)
    given = [(f"--{name.replace('_', '-')}", path) for name, path in outputs.items() if path]
    for index, (option, path) in enumerate(given):
        guard_output(path, command, listed, option=option)
        for other_option, other in given[index + 1 :]:
            if same_file(path, other) and not jsonio.is_stream_output(path):
                raise UsageError(
                    f"{option} and {other_option} both name {path}; give each its own file"
                )


def output_in_run(
    run: RunDir, given: Path | None, default: str, command: str, inputs: Iterable[Path | None] = ()
) -> Path:
    """Where a stage writes: the user's ``given`` path (a device or pipe written in place),
    else the run directory's ``default`` file; checked by :func:`guard_output`."""
    path = run.path(default) if given is None else jsonio.user_output(given)
    return guard_output(path, command, inputs, option="the output" if given is None else "--out")


@contextlib.contextmanager
def locked_runs(
    stage: str, outputs: Iterable[Path | None], *, shared: bool = False, held: Iterable[Path] = ()
) -> Iterator[None]:
    """Hold the lock of each run directory an output lies in (see :mod:`.locking`), besides
    those in ``held`` (already locked by this command), for the whole block; a directory
    another writer holds refuses at once, naming it."""
    seen = {os.path.realpath(root) for root in held}
    roots = []
    for path in outputs:
        root = run_root_of(path) if path is not None else None
        if root is not None and os.path.realpath(root) not in seen:
            seen.add(os.path.realpath(root))
            roots.append(root)
    with contextlib.ExitStack() as stack:
        for root in roots:
            stack.enter_context(hold_lock(root, stage, shared=shared))
        yield
