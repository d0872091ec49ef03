"""WorkList reads its items' inputs a block of MANY items at a time: each item is its sample,
its response and its judge response, across block boundaries, with responses in any order, a
response shared by two samples, and judge responses on some items only."""

from __future__ import annotations

import random
import unittest
from collections.abc import Callable, Sequence
from typing import Any

from datbench_cli.batch.answers import JudgeResponse, VLMResponse
from datbench_cli.batch.judge_store import held_judges
from datbench_cli.batch.response_store import held_responses
from datbench_cli.benchmarks.datbench.work import WorkList
from datbench_cli.files.run_store import MANY


class _Samples:
    """Samples whose raw form is their index (only what WorkList reads)."""

    def raws(self, indices: Sequence[int]) -> list[Any]:
        return [("sample", index) for index in indices]

    def parser(self) -> Callable[[Any], Any]:
        return lambda raw: raw


class WorkListTests(unittest.TestCase):
    def test_items_across_blocks(self) -> None:
        rng = random.Random(7)
        count = 2 * MANY + 37
        ids = [f"s{index}" for index in range(count)]
        order = ids[:]
        rng.shuffle(order)
        responses = held_responses([VLMResponse(ident, f"text {ident}") for ident in order])
        judged = {ident for ident in ids if rng.random() < 0.1} | {ids[MANY - 1], ids[MANY]}
        judges = held_judges([JudgeResponse(ident, f"verdict {ident}") for ident in sorted(judged)])
        last_response, last_judge = responses.last_by_id(), judges.last_by_id()
        work = WorkList(_Samples(), "reference", responses, judges)  # type: ignore[arg-type]
        expected = []
        for index, ident in enumerate(ids):
            # The last sample answers with the first one's response (a duplicate id's case).
            answer = ids[0] if index == count - 1 else ident
            judge = last_judge.get(ident)
            work.append(index, last_response[answer], judge is not None, judge, "answered")
            expected.append((index, answer, ident if judge is not None else None))
        items = list(work)
        self.assertEqual(len(items), count)
        parse_response, parse_judge = responses.parser(), judges.parser()
        for item, (index, answer, judge) in zip(items, expected, strict=True):
            self.assertEqual(item[0], ("sample", index))
            self.assertEqual(parse_response(item[1]), VLMResponse(answer, f"text {answer}"))
            self.assertEqual(item[2], judge is not None)
            if judge is None:
                self.assertIsNone(item[3])
            else:
                self.assertEqual(parse_judge(item[3]).raw_judge_output, f"verdict {judge}")
            self.assertEqual(item[4], "answered")
        self.assertEqual(work.judge_count(), len(judged))
        responses.close()
        judges.close()


if __name__ == "__main__":
    unittest.main()
