"""Property tests of the verdict parsers: ``parse_judge_verdict`` agrees with an independent
oracle written from the seed's four rules (as the README reads them) on inputs generated from the
rule space, and neither parser ever raises or changes its mind."""

from __future__ import annotations

import json
import unittest
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli import parse_judge_verdict
from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict
from tests.hypothesis_profiles import examples

TRUE_WORDS = ("correct", "true", "yes")
FALSE_WORDS = ("incorrect", "false", "no")
LINE_WORDS = ("true", "false", "yes", "no")

# --------------------------------------------------------------------------- the oracle


def _ascii_lower(text: str) -> str:
    """Lower-case the ASCII letters only: "case-insensitive" for the rules' ASCII words."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _token(value: Any) -> bool | None:
    """A verdict word (trimmed, any case) or a boolean; else ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = _ascii_lower(value.strip())
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None


def _unfenced(text: str) -> str:
    """The content of one ``` fence spanning the whole text (an optional tag after the opening
    backticks), else the text itself."""
    newline = text.find("\n")
    if text.startswith("```") and newline != -1 and text.endswith("```"):
        return text[newline + 1 : -3].strip()
    return text


def _rule_json(text: str) -> bool | None:
    try:
        value = json.loads(_unfenced(text))
    except ValueError:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            if _ascii_lower(key) == "answer":
                return _token(item)
    return None


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _rule_answer_lines(text: str) -> bool | None:
    found = None
    for line in text.split("\n"):
        rest = line.lstrip(" \t")
        if _ascii_lower(rest[:6]) != "answer":
            continue
        rest = rest[6:].lstrip(" \t")
        if not rest.startswith(":"):
            continue
        rest = rest[1:].lstrip(" \t")
        for word in LINE_WORDS:
            head, tail = rest[: len(word)], rest[len(word) :]
            if _ascii_lower(head) == word and not (tail and _is_word_char(tail[0])):
                found = word in ("true", "yes")
    return found


def oracle(verdict: Any, raw: Any) -> bool | None:
    """The seed's rules, first hit wins: the verdict field; the output as (fenced) JSON; the last
    ``answer: <word>`` line; the whole output as one word."""
    from_field = _token(verdict)
    if from_field is not None:
        return from_field
    if not isinstance(raw, str) or not raw.strip():
        return None
    text = raw.strip()
    for rule in (_rule_json, _rule_answer_lines, _token):
        hit = rule(text)
        if hit is not None:
            return hit
    return None


# --------------------------------------------------------------------------- generators

# Letters that case-insensitive Unicode regexes equate with ASCII ones ("ſ" ~ "s", "K" ~ "k",
# "ı"/"İ" ~ "i"): a verdict word spelled with them is not the word.
CONFUSABLES = {"s": "ſ", "S": "ſ", "k": "K", "K": "K", "i": "ı", "I": "İ"}


@st.composite
def spelled(draw: st.DrawFn, word: str) -> str:
    """``word`` in random case, sometimes with a look-alike letter."""
    letters = [c.upper() if draw(st.booleans()) else c for c in word]
    swappable = [at for at, c in enumerate(letters) if c in CONFUSABLES]
    if swappable and draw(st.integers(0, 3)) == 0:
        at = draw(st.sampled_from(swappable))
        letters[at] = CONFUSABLES[letters[at]]
    return "".join(letters)


all_words = TRUE_WORDS + FALSE_WORDS + ("maybe", "unsure", "True.", "n/a", "")
spaces = st.text(st.sampled_from(" \t"), max_size=3)
edges = st.text(st.sampled_from(" \t\r\n\u3000\xa0"), max_size=3)
noise = st.text(max_size=40)
words = st.sampled_from(all_words).flatmap(spelled)
padded_words = st.tuples(edges, words, edges).map("".join)


@st.composite
def json_outputs(draw: st.DrawFn) -> str:
    """A JSON verdict (an object with or without an answer key, a boolean, an array), maybe
    inside a fence, maybe broken."""
    kind = draw(st.sampled_from(["object", "boolean", "array", "string"]))
    if kind == "object":
        others = draw(
            st.dictionaries(
                st.sampled_from(["reason", "verdict", "score", "answer_text", "explanation"]),
                st.one_of(padded_words, st.integers(), st.booleans(), noise),
                max_size=3,
            )
        )
        items = list(others.items())
        if draw(st.booleans()):
            value = draw(st.one_of(st.booleans(), padded_words, st.integers(), st.none()))
            items.insert(draw(st.integers(0, len(items))), (draw(spelled("answer")), value))
        value: Any = dict(items)
    elif kind == "boolean":
        value = draw(st.booleans())
    elif kind == "array":
        value = draw(st.lists(st.booleans(), max_size=2))
    else:
        value = draw(padded_words)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 5)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    if draw(st.booleans()):
        tag = draw(st.sampled_from(["", "json", "JSON", " json ", "text"]))
        close = draw(st.sampled_from(["\n```", "```", "\n\n```"]))
        text = f"```{tag}\n{text}{close}"
    return draw(edges) + text + draw(edges)


@st.composite
def answer_lines(draw: st.DrawFn) -> str:
    """``answer: <word>`` with random case, spacing, look-alikes and what follows the word."""
    key = draw(spelled("answer"))
    word = draw(st.sampled_from(LINE_WORDS + ("correct", "maybe")).flatmap(spelled))
    after = draw(st.sampled_from(["", ".", " because it matches", "ly", "_x", "é", "1", "\r", "-"]))
    colon = draw(st.sampled_from([":", ":", " :", "=", ""]))
    return f"{draw(spaces)}{key}{draw(spaces)}{colon}{draw(spaces)}{word}{after}"


prose_lines = st.one_of(
    answer_lines(),
    st.tuples(st.sampled_from(["Reason: ", "", "The answer: ", "- "]), noise).map("".join),
    padded_words,
)
prose_outputs = st.tuples(
    st.lists(prose_lines, min_size=1, max_size=5), st.sampled_from(["\n", "\r\n", "\n\n"])
).map(lambda parts: parts[1].join(parts[0]))

raw_outputs = st.one_of(json_outputs(), prose_outputs, padded_words, noise, st.none())
verdicts = st.one_of(st.none(), st.booleans(), padded_words, noise)
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),
    st.text(st.characters(categories=("Cs", "Co", "Cc", "Zs"))),
    st.lists(st.text(), max_size=3),
    st.dictionaries(st.text(), st.text(), max_size=3),
    st.binary(max_size=20),
)

# --------------------------------------------------------------------------- the tests


class ParseJudgeVerdictProperties(unittest.TestCase):
    def test_oracle_reads_the_documented_examples(self) -> None:
        from tests.benchmarks.test_judge import TABLE

        for verdict, raw, expected in TABLE:
            with self.subTest(verdict=verdict, raw=raw):
                self.assertIs(oracle(verdict, raw), expected)

    @settings(max_examples=examples(10))
    @given(verdicts, raw_outputs)
    def test_agrees_with_the_rules(self, verdict: Any, raw: Any) -> None:
        self.assertIs(parse_judge_verdict(verdict, raw), oracle(verdict, raw))

    @settings(max_examples=examples(5))
    @given(anything, st.one_of(anything, raw_outputs))
    def test_never_raises_and_is_deterministic(self, verdict: Any, raw: Any) -> None:
        first = parse_judge_verdict(verdict, raw)
        self.assertIn(first, (True, False, None))
        self.assertIs(parse_judge_verdict(verdict, raw), first)

    def test_long_outputs_finish(self) -> None:
        for raw in (
            "answer:" + " " * 1_000_000 + "x",
            "\n".join(["answer: maybe"] * 100_000) + "\nanswer: yes",
            "```" + "`" * 1_000_000,
            "{" * 1_000_000,
            '{"answer": ' + "[" * 100_000,
        ):
            with self.subTest(raw=raw[:20]):
                self.assertIn(parse_judge_verdict(None, raw), (True, None))


class ParseVtbVerdictProperties(unittest.TestCase):
    @given(anything, st.one_of(anything, raw_outputs))
    def test_never_raises_and_is_deterministic(self, verdict: Any, raw: Any) -> None:
        first = parse_vtb_verdict(verdict, raw)
        self.assertIn(first, ("met", "not_met", None))
        self.assertEqual(parse_vtb_verdict(verdict, raw), first)
