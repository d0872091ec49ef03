"""``datbench agent``: every exported VisualToolBench turn through the tool loop, resumably.

Reads ``tasks.jsonl`` (and the images it names, only inside the run directory), writes
``trajectories.jsonl`` (one answered trajectory per turn, plus one line per errored attempt),
``responses.jsonl`` (the answer lines ``score`` reads; an errored turn gets an errored batch
line, counted by ``score``) and ``agent.json`` (the run's settings, the tools it had and whether
it is comparable with the official protocol). Golden history: every turn is independent and
runs in parallel; model history: the turns of a task run in order, each seeing the model's own
earlier answers. Rerunning continues: committed turns are never run again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import re
import shutil
import socket
import stat
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.vistoolbench.agent.journal import Journal
from datbench_cli.benchmarks.vistoolbench.agent.loop import (
    ANSWERED,
    ERRORED,
    LoopSettings,
    TurnInput,
    run_turn,
)
from datbench_cli.benchmarks.vistoolbench.agent.settings import (
    AGENT_FILE,
    check_same_settings,
    settings_record,
)
from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings
from datbench_cli.benchmarks.vistoolbench.agent.transport import AgentAborted, ChatClient
from datbench_cli.benchmarks.vistoolbench.answers import collect_answers, read_answer_lines
from datbench_cli.benchmarks.vistoolbench.model import (
    BENCHMARK,
    Task,
    Turn,
    manifest_context_policy,
)
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import IMAGES, MANIFEST, RESPONSES, TASKS, RunDir

TRAJECTORIES = "trajectories.jsonl"
MODEL_HISTORY = "model_history"


@dataclass
class AgentResult:
    """What a run did."""

    turns: int = 0
    already_done: int = 0
    answered_elsewhere: int = 0
    recovered: int = 0
    answered: int = 0
    errored: int = 0
    max_rounds: int = 0
    repaired: list[str] = field(default_factory=list)
    errored_ids: list[str] = field(default_factory=list)


@dataclass
class _Task:
    id: str
    turns: list[TurnInput]


def _image(run: RunDir, value: Any, where: str) -> tuple[str, bytes]:
    """A turn image named in ``tasks.jsonl``: only a file under ``images/`` of the run."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}: an image must be a path string")
    root = (run.root / IMAGES).resolve()
    path = (run.root / value).resolve()
    if not path.is_relative_to(root) or value.startswith("/"):
        raise InputError(f"{where}: image {value!r} is outside the run's images/ folder")
    try:
        return path.name, path.read_bytes()
    except OSError as exc:
        raise InputError(f"{where}: cannot read image {value!r} ({exc.strerror})") from None


def _history(items: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(items, list):
        raise InputError(f'{where}: "history" must be a list')
    history = []
    for item in items:
        if (
            not isinstance(item, dict)
            or item.get("role") not in ("user", "assistant")
            or not isinstance(item.get("text"), str)
        ):
            raise InputError(f"{where}: history items need a user/assistant role and a text")
        history.append({"role": item["role"], "text": item["text"]})
    return history


def load_tasks(run: RunDir, read_images: bool = True) -> list[_Task]:
    """The tasks of the run's ``tasks.jsonl`` with their turns (images read when asked)."""
    path = run.path(TASKS)
    tasks = []
    for number, obj in jsonio.iter_jsonl(path):
        where = f"{path}:{number}"
        task_id, turns = obj.get("id"), obj.get("turns")
        if not isinstance(task_id, str) or not isinstance(turns, list):
            raise InputError('a task line needs an "id" string and a "turns" list', path, number)
        inputs: list[TurnInput] = []
        for item in turns:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise InputError('each turn needs an "id"', path, number)
            prompt, images = item.get("prompt"), item.get("images", [])
            if not isinstance(prompt, str) or not isinstance(images, list):
                raise InputError('each turn needs a "prompt" and an "images" list', path, number)
            inputs.append(
                TurnInput(
                    item["id"],
                    task_id,
                    int(item.get("index", len(inputs))),
                    prompt,
                    [_image(run, value, where) for value in images] if read_images else [],
                    _history(item.get("history", []), where),
                )
            )
        tasks.append(_Task(task_id, inputs))
    return tasks


def _answered_in_responses(
    path: Path, tasks: list[_Task], warn: Callable[[str], None]
) -> dict[str, str]:
    """The turns ``path`` answers, by turn id, with the answer ``score`` judges: the file is
    read as ``score`` reads it (bare task ids, per-task ``turns`` lines, batch lines whose
    request failed are no answer), so the agent reruns exactly the turns score lacks."""
    if not path.is_file():
        return {}
    scored = [
        Task(
            task.id, "", len(task.turns), "", "", [Turn(t.index, t.prompt, "") for t in task.turns]
        )
        for task in tasks
    ]
    answers = collect_answers(scored, read_answer_lines(path, warn))
    ids = {(task.id, turn.index): turn.id for task in tasks for turn in task.turns}
    return {ids[key]: text for key, text in answers.by_turn.items()}


def _committed(path: Path) -> dict[str, dict[str, Any]]:
    """The answered trajectories of ``path``, by turn id."""
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    for _, obj in jsonio.iter_jsonl(path):
        if obj.get("status") == ANSWERED and isinstance(obj.get("answer"), str):
            done[str(obj.get("id"))] = obj
    return done


def _answer_line(trajectory: dict[str, Any]) -> dict[str, Any]:
    if trajectory["status"] == ANSWERED:
        line = {"id": trajectory["id"], "raw_output": trajectory["answer"]}
        # The final message's finish reason and refusal: score counts the answer as
        # truncated or refused from them, as it does a batch line's.
        for key in ("finish_reason", "refusal"):
            if isinstance(trajectory.get(key), str):
                line[key] = trajectory[key]
        return line
    return {
        "id": f"agent_error_{uuid.uuid4().hex}",
        "custom_id": trajectory["id"],
        "response": None,
        "error": {"code": "agent_error", "message": trajectory.get("error", "failed")},
    }


def _bounded(trajectory: dict[str, Any]) -> dict[str, Any]:
    """``trajectory``, or the same without its steps (their count and size recorded) when it
    is over a quarter of the longest line a reader of ``trajectories.jsonl`` takes (a rerun,
    ``score``): the model's tool-call arguments are recorded every round, and 12 rounds of
    8 MB made a 294 MB line, after which no rerun could read the file."""
    size, limit = len(jsonio.dumps(trajectory)), jsonio.MAX_LINE_BYTES // 4
    if size <= limit:
        return trajectory
    steps = trajectory.get("steps") or []
    reason = f"the trajectory is over the {limit / (1 << 20):g} MiB of a line"
    left_out = {"steps": len(steps), "bytes": size, "reason": reason}
    return {**trajectory, "steps": [], "steps_left_out": left_out}


class _Committer:
    """Writes a finished turn: its trajectory (the commit), then its answer line."""

    def __init__(self, trajectories: Journal, responses: Journal, result: AgentResult) -> None:
        self.trajectories, self.responses, self.result = trajectories, responses, result
        self.lock = threading.Lock()

    def commit(self, trajectory: dict[str, Any]) -> None:
        with self.lock:
            self.trajectories.append(_bounded(trajectory))
            self.responses.append(_answer_line(trajectory))
            if trajectory["status"] == ANSWERED:
                self.result.answered += 1
                self.result.max_rounds += trajectory.get("stop") == "max_tool_rounds"
            else:
                self.result.errored += 1
                self.result.errored_ids.append(trajectory["id"])


@dataclass(frozen=True)
class AgentConfig:
    """Everything one agent run needs besides the run directory and the client."""

    loop: LoopSettings
    tools: ToolSettings
    concurrency: int = 4
    record: dict[str, Any] = field(default_factory=dict)


def _errored(turn: TurnInput, message: str) -> dict[str, Any]:
    return {
        "id": turn.id,
        "task_id": turn.task_id,
        "turn_index": turn.index,
        "status": ERRORED,
        "answer": None,
        "stop": "error",
        "error": message,
        "steps": [],
    }


def _run_unit(
    unit: list[TurnInput],
    done: dict[str, str],
    config: AgentConfig,
    client: ChatClient,
    committer: _Committer,
    model_history: bool,
) -> None:
    """Run the pending turns of one unit (one turn, or a whole task under model history)."""
    history: list[dict[str, str]] = []
    for turn in unit:
        if (
            model_history
            and turn.id not in done
            and any(earlier.id not in done for earlier in unit[: unit.index(turn)])
        ):
            committer.commit(_errored(turn, "an earlier turn of this task has no answer"))
            continue
        if turn.id in done:
            answer = done[turn.id]
        else:
            if model_history:
                turn = TurnInput(
                    turn.id, turn.task_id, turn.index, turn.prompt, turn.images, list(history)
                )
            try:
                trajectory = run_turn(turn, config.loop, config.tools, client)
            except AgentAborted:
                raise
            except Exception as exc:  # noqa: BLE001 - a bug in one turn must not stop the run
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                trajectory = _errored(turn, f"internal error: {detail}")
            committer.commit(trajectory)
            if trajectory["status"] != ANSWERED:
                continue
            answer = trajectory["answer"]
            done[turn.id] = answer
        history += [{"role": "user", "text": turn.prompt}, {"role": "assistant", "text": answer}]


def run_agent(
    run: RunDir,
    config: AgentConfig,
    client: ChatClient,
    *,
    warn: Callable[[str], None],
    advance: Callable[[int], None] | None = None,
    on_plan: Callable[[AgentResult, int], None] | None = None,
) -> AgentResult:
    """Answer every pending turn of the run; raises :class:`AgentAborted` after committing what
    finished when the server refuses or vanishes. Holds the run directory's lock throughout:
    no export, import or second agent writes the directory meanwhile."""
    with run.lock("agent"):
        return _run_agent(run, config, client, warn, advance, on_plan)


def _run_agent(
    run: RunDir,
    config: AgentConfig,
    client: ChatClient,
    warn: Callable[[str], None],
    advance: Callable[[int], None] | None,
    on_plan: Callable[[AgentResult, int], None] | None,
) -> AgentResult:
    manifest = run.read_manifest()
    if manifest.get("benchmark") != BENCHMARK:
        raise InputError(
            f"datbench agent runs VisualToolBench turns; this run directory was exported for "
            f"{manifest.get('benchmark')!r}",
            run.root,
        )
    model_history = manifest_context_policy(manifest, run.path(MANIFEST)) == MODEL_HISTORY
    record = settings_record(config, manifest)
    check_same_settings(run.path(AGENT_FILE), record)
    tasks = load_tasks(run)
    result = AgentResult(turns=sum(len(task.turns) for task in tasks))
    with (
        Journal(run.path(TRAJECTORIES)) as trajectories,
        Journal(run.path(RESPONSES)) as responses,
        _scratch() as scratch,
    ):
        config = replace(config, tools=replace(config.tools, scratch=scratch))
        for journal in (trajectories, responses):
            if journal.repaired:
                result.repaired.append(f"{journal.path}: {journal.repaired}")
        jsonio.write_bytes_atomic(run.path(AGENT_FILE), jsonio.dumps_pretty(record) + b"\n")
        committed = _committed(trajectories.path)
        done = {ident: trajectory["answer"] for ident, trajectory in committed.items()}
        elsewhere = _answered_in_responses(responses.path, tasks, warn)
        for ident, trajectory in committed.items():
            if ident not in elsewhere:
                responses.append(_answer_line(trajectory))
                result.recovered += 1
        units: list[list[TurnInput]] = []
        for task in tasks:
            for turn in task.turns:
                # The responses file decides whose answer a turn has: one that replaced this
                # agent's answer there (import-responses, send) is another runner's.
                if turn.id in elsewhere and elsewhere[turn.id] != done.get(turn.id):
                    result.answered_elsewhere += 1
                    # Answered by another runner: never rerun; model history shows its answer.
                    done[turn.id] = elsewhere[turn.id]
                elif turn.id in done:
                    result.already_done += 1
            pending = [turn for turn in task.turns if turn.id not in done]
            if not pending:
                continue
            if model_history:
                units.append(task.turns)
            else:
                units.extend([turn] for turn in pending)
        if on_plan is not None:
            on_plan(result, sum(1 for unit in units for t in unit if t.id not in done))
        committer = _Committer(trajectories, responses, result)
        _pool(
            units,
            config.concurrency,
            lambda unit: _run_unit(unit, done, config, client, committer, model_history),
            advance,
        )
    return result


#: The file that marks a run's scratch folder, made once the run holds the folder's lock: a
#: folder without it (a user's own, an earlier version's) is never swept.
_MARK = ".datbench-agent-scratch"
# The sweep leaves a folder this young alone.
_SWEEP_AFTER_SECONDS = 60


def _prefix() -> str:
    """The start of this host's scratch folders' names: a lock taken on another host of a
    shared file system may not be seen here, so only this host's folders are swept."""
    host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
    return f"datbench-agent-{host}-"


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    """A private folder for the turns' folders (their images, what the code tools write),
    removed by this thread whatever stops the run. Ctrl-C or SIGTERM leaves turn threads
    mid-turn: the folder is first renamed away, so none of them can add to what is removed
    (their paths no longer resolve). A SIGKILL leaves it behind: the run holds an ``flock`` on
    it, which the kernel drops with the process, and the next run removes it
    (:func:`_sweep_orphans`)."""
    _sweep_orphans(Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=_prefix()))
    try:
        held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        folder.rmdir()
        raise
    try:
        with contextlib.suppress(OSError):  # no locks on this file system: never swept
            fcntl.flock(held, fcntl.LOCK_EX)
            os.close(os.open(_MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=held))
        yield folder
    finally:
        doomed = folder
        with contextlib.suppress(OSError):
            # An empty folder of our own, made just now, is replaced by the rename.
            doomed = Path(tempfile.mkdtemp(prefix=_prefix(), dir=folder.parent))
            os.replace(folder, doomed)
        _remove(folder)
        _remove(doomed)
        os.close(held)


def _remove(folder: Path) -> None:
    """Remove ``folder`` (not a symbolic link to one), its mark last: a SIGKILL meanwhile
    leaves it marked, for a later sweep."""
    if folder.is_symlink():
        return
    with contextlib.suppress(OSError):
        for child in os.scandir(folder):
            if child.name == _MARK:
                continue
            if child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(child.path)
    with contextlib.suppress(OSError):
        (folder / _MARK).unlink()
    shutil.rmtree(folder, ignore_errors=True)


def _sweep_orphans(base: Path) -> None:
    """Remove the scratch folders in ``base`` of agent runs killed where nothing could clean
    up (SIGKILL, the out-of-memory killer): this user's and this host's folders, not symbolic
    links, a minute old or more, marked as a run's (:data:`_MARK`), whose lock nobody holds
    (a live run, in any process namespace, holds its own)."""
    prefix = _prefix()
    try:
        entries = [e for e in os.scandir(base) if e.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            if (
                not stat.S_ISDIR(info.st_mode)
                or info.st_uid != os.getuid()
                or time.time() - info.st_mtime < _SWEEP_AFTER_SECONDS
            ):
                continue
            handle = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if stat.S_ISREG(os.stat(_MARK, dir_fd=handle, follow_symlinks=False).st_mode):
                _remove(Path(entry.path))
        except OSError:
            continue  # a live run's, or not a run's folder
        finally:
            os.close(handle)


def _pool(
    units: list[list[TurnInput]],
    concurrency: int,
    work: Callable[[list[TurnInput]], None],
    advance: Callable[[int], None] | None,
) -> None:
    """Run ``work`` on every unit with ``concurrency`` daemon threads at most (Ctrl-C stops at once);
    the first :class:`AgentAborted` stops new work and is raised once the others finish."""
    jobs: queue.Queue[list[TurnInput] | None] = queue.Queue()
    failures: list[BaseException] = []
    stop = threading.Event()
    finished: queue.Queue[int] = queue.Queue()

    def worker() -> None:
        while (unit := jobs.get()) is not None:
            if not stop.is_set():
                try:
                    work(unit)
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                    failures.append(exc)
                    stop.set()
            finished.put(len(unit))

    for unit in units:
        jobs.put(unit)
    # never more threads than units: --concurrency 100000 started 100000 threads for 6 turns
    count = min(concurrency, len(units))
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(count)]
    for thread in threads:
        jobs.put(None)
        thread.start()
    for _ in units:
        while True:
            try:
                count = finished.get(timeout=0.5)
                break
            except queue.Empty:
                continue
        if advance is not None and not stop.is_set():
            advance(count)
    if failures:
        raise failures[0]
