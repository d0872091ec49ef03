"""The samples a run scores, matched to their responses: work items built when asked for."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from datbench_cli.batch.judge_store import Judges
from datbench_cli.batch.response_store import Responses
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeResponse
from datbench_cli.benchmarks.datbench.scoring import WorkItem


class WorkList(Sequence[WorkItem]):
    """Work items built when asked for, from compact columns: the sample comes from
    ``sample_of(index)`` and the model output from ``responses`` by position (either may
    parse it from a file), so a long run holds no item, sample or response objects. The last
    item built is kept: the caller and the scorer ask for the same item in turn."""

    def __init__(
        self,
        sample_of: Callable[[int], DatBenchSample],
        profile: str,
        responses: Responses,
        judges: Judges | None = None,
    ) -> None:
        self._sample_of = sample_of
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
        self._last: tuple[int, WorkItem] | None = None

    def append(
        self,
        index: int,
        position: int,
        judge_mode: bool,
        judge: int | None,
        status: str | None,
    ) -> None:
        """One item: the sample at ``index`` of ``sample_of``, the response at ``position``
        of ``responses``, its judge response at ``judge`` of ``judges``."""
        if judge is not None:
            self._judged.append(len(self.indices))
            self._judge_positions.append(judge)
        self.indices.append(index)
        self._positions.append(position)
        self._statuses.append(status)
        self._judge_modes.append(judge_mode)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, position: int) -> WorkItem:  # type: ignore[override]
        last = self._last
        if last is not None and last[0] == position:
            return last[1]
        item = WorkItem(
            self._sample_of(self.indices[position]),
            self._responses.response(self._positions[position]).model_output,
            bool(self._judge_modes[position]),
            self._judge_of(position),
            self._profile,
            self._statuses[position],
        )
        self._last = (position, item)
        return item

    def __iter__(self) -> Iterator[WorkItem]:
        for position in range(len(self.indices)):
            yield self[position]

    def _judge_of(self, position: int) -> JudgeResponse | None:
        judged = self._judged
        at = bisect_left(judged, position)
        if at == len(judged) or judged[at] != position:
            return None
        assert self._judge_source is not None
        return self._judge_source.judge(self._judge_positions[at])

    def judge_count(self) -> int:
        return sum(self._judge_modes)
