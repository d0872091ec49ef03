"""The samples a run scores, matched to their responses: work items in their raw form (a
stored sample's and response's line bytes), parsed where they are scored."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from datbench_cli.batch.judge_store import JudgeStore
from datbench_cli.batch.response_store import ResponseStore
from datbench_cli.benchmarks.datbench.references import ReferenceFile
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeResponse, VLMResponse
from datbench_cli.benchmarks.datbench.scoring import WorkItem
from datbench_cli.files.run_store import MANY

#: A work item as it travels to a worker: (sample, response, judge mode, judge response or
#: ``None``, status, judge problem), each input in the raw form its source gives (see
#: :meth:`WorkList.build`).
RawItem = tuple[Any, Any, bool, Any, str | None, str | None]


class WorkList:
    """Work items from compact columns: the places of the sample in ``samples``, the response
    in ``responses`` and the judge response in ``judges``; an item is those inputs' raw forms
    (for a stored input, its line number and bytes), so a long run holds no item, sample or
    response objects and the parsing is done by the workers (:meth:`build`, in parallel)."""

    def __init__(
        self,
        samples: ReferenceFile,
        profile: str,
        responses: ResponseStore,
        judges: JudgeStore | None = None,
    ) -> None:
        self._samples = samples
        self._profile = profile
        self._responses = responses
        self._judge_source = judges
        # About 25 bytes an item: the sample's and response's places, the status (a name
        # shared by many), judges only where given.
        self.indices, self._positions = array("q"), array("q")
        # The items that have a judge response (ascending) and its position in ``judges``.
        self._judged, self._judge_positions = array("q"), array("q")
        self._statuses: list[str | None] = []
        self._judge_modes = bytearray()
        # The items whose judge lines all errored or were a refusal (see WorkItem).
        self._judge_problems: dict[int, str] = {}

    def append(
        self,
        index: int,
        position: int,
        judge_mode: bool,
        judge: int | None,
        status: str | None,
        judge_problem: str | None = None,
    ) -> None:
        """One item: the sample at ``index`` of ``samples``, the response at ``position``
        of ``responses``, its judge response at ``judge`` of ``judges`` (``judge_problem``:
        see :class:`~datbench_cli.benchmarks.datbench.scoring.WorkItem`)."""
        if judge_problem is not None:
            self._judge_problems[len(self.indices)] = judge_problem
        if judge is not None:
            self._judged.append(len(self.indices))
            self._judge_positions.append(judge)
        self.indices.append(index)
        self._positions.append(position)
        self._statuses.append(status)
        self._judge_modes.append(judge_mode)

    def __len__(self) -> int:
        return len(self.indices)

    def __iter__(self) -> Iterator[RawItem]:
        for start in range(0, len(self.indices), MANY):
            yield from self._items(start, min(start + MANY, len(self.indices)))

    def _items(self, start: int, end: int) -> Iterator[RawItem]:
        """The items from ``start`` to ``end`` (at most ``MANY``), their inputs read in one
        query per input, not one per item."""
        samples = self._samples.raws(self.indices[start:end])
        responses = self._responses.raws(self._positions[start:end])
        judged = self._judged
        first, last = bisect_left(judged, start), bisect_left(judged, end)
        judges: dict[int, Any] = {}
        if last > first:
            assert self._judge_source is not None
            found = self._judge_source.raws(self._judge_positions[first:last])
            judges = dict(zip(judged[first:last], found, strict=True))
        for offset, position in enumerate(range(start, end)):
            yield (
                samples[offset],
                responses[offset],
                bool(self._judge_modes[position]),
                judges.get(position),
                self._statuses[position],
                self._judge_problems.get(position),
            )

    def build(self) -> Callable[[RawItem], WorkItem]:
        """A function (picklable: sent to the workers) from a raw item to its work item."""
        judges = self._judge_source
        return partial(
            _work_item,
            self._samples.parser(),
            self._responses.parser(),
            None if judges is None else judges.parser(),
            self._profile,
        )

    def judge_problem(self, item: int) -> str | None:
        """The judge problem of the ``item``-th item (``None``: none)."""
        return self._judge_problems.get(item)

    def judge_count(self) -> int:
        return sum(self._judge_modes)


def raw_size(raw: RawItem) -> int:
    """The bytes of a raw item's stored lines (what travels to a worker)."""
    return sum(len(part[1]) for part in (raw[0], raw[1], raw[3]) if part is not None)


def _work_item(
    sample: Callable[[Any], DatBenchSample],
    response: Callable[[Any], VLMResponse],
    judge: Callable[[Any], JudgeResponse] | None,
    profile: str,
    raw: RawItem,
) -> WorkItem:
    judged = raw[3]
    return WorkItem(
        sample(raw[0]),
        response(raw[1]).model_output,
        raw[2],
        None if judged is None or judge is None else judge(judged),
        profile,
        raw[4],
        raw[5],
    )
