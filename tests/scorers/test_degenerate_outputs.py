"""Degenerate outputs (issue 36): MathVision's whole-text fast paths are the parser's outcome.

- The leafless class rests on a fact about the grammar: no rule derives a string of brackets
  alone. Checked here on the parser's own ATN (a fixpoint over its transitions).
- Property tests: generated letter texts (with differentials, ``e`` and ``I``) and bracket
  texts, in a fresh and in a differential-poisoned module state; whenever the fast path decides,
  the real ``latex2sympy`` gives no number and leaves the module state the fast path leaves.
- Differential cases: every family of tests/degenerate_texts.py, cut short enough for the
  parser, scores the same with and without the fast paths; at full size the fast path decides
  the families' slow texts without running the parser.

(Timing is `make bench`'s business: `--only degenerate`.)
"""

from __future__ import annotations

import unittest
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli.runtime.stack import call_with_reference_headroom
from datbench_cli.scorers import mathvision
from datbench_cli.scorers.mathvision_nonnumbers import (
    LEAFLESS_TOKENS,
    UNREAD_AFTER_NO_BRACE,
    cut_at_unread_token,
    settled_not_a_number,
)
from tests.degenerate_texts import FAMILIES
from tests.hypothesis_profiles import examples
from tests.scorers.test_mathvision_nonnumbers import _module, _state, parser_gives_a_number


def derivable_rules(parser_class: Any, tokens: set[int]) -> set[int]:
    """Indexes of the rules that derive some string (the empty one included) made of ``tokens``
    only. Over-approximates: predicates, wildcards and negated sets count as passable."""
    from antlr4.atn.ATNState import RuleStopState
    from antlr4.atn.Transition import NotSetTransition, RuleTransition, WildcardTransition

    atn = parser_class.atn
    derivable: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, start in enumerate(atn.ruleToStartState):
            if index in derivable:
                continue
            seen: set[int] = set()
            todo = [start]
            while todo:
                state = todo.pop()
                if state.stateNumber in seen:
                    continue
                seen.add(state.stateNumber)
                if isinstance(state, RuleStopState):
                    derivable.add(index)
                    changed = True
                    break
                for transition in state.transitions:
                    if isinstance(transition, RuleTransition):
                        if transition.target.ruleIndex in derivable:
                            todo.append(transition.followState)
                    elif transition.isEpsilon or isinstance(
                        transition, NotSetTransition | WildcardTransition
                    ):
                        todo.append(transition.target)
                    elif transition.label is not None and any(
                        token in transition.label for token in tokens
                    ):
                        todo.append(transition.target)
    return derivable


class GrammarTests(unittest.TestCase):
    def test_no_rule_derives_brackets_alone(self) -> None:
        _module()
        from gen.PSParser import PSParser

        brackets = {getattr(PSParser, name) for name in LEAFLESS_TOKENS}
        math = PSParser.ruleNames.index("math")
        self.assertNotIn(math, derivable_rules(PSParser, brackets))
        # Not vacuous: with letters the start rule derives something.
        self.assertIn(math, derivable_rules(PSParser, brackets | {PSParser.LETTER_NO_E}))


def two_character_tokens(lexer_class: Any, chars: str) -> list[str]:
    """The pairs of ``chars`` some lexer rule can match the start of (an empty list: every token
    of a text made of ``chars`` is one character long). Walks the lexer's ATN from its start
    state, rule calls with their return states, predicates and actions counted as passable."""
    from antlr4.atn.ATNState import RuleStopState
    from antlr4.atn.Transition import RuleTransition

    def consuming(configs: list[Any]) -> list[Any]:
        out, seen, todo = [], set(), list(configs)
        while todo:
            state, stack = todo.pop()
            key = (state.stateNumber, tuple(s.stateNumber for s in stack))
            if key in seen:
                continue
            seen.add(key)
            if isinstance(state, RuleStopState):
                if stack:
                    todo.append((stack[-1], stack[:-1]))
                continue
            for transition in state.transitions:
                if isinstance(transition, RuleTransition):
                    todo.append((transition.target, (*stack, transition.followState)))
                elif transition.isEpsilon:
                    todo.append((transition.target, stack))
                else:
                    out.append((transition, stack))
        return out

    first = consuming([(lexer_class.atn.modeToStartState[0], ())])
    pairs = []
    for one in chars:
        after = [(t.target, stack) for t, stack in first if t.matches(ord(one), 0, 0x10FFFF)]
        second = consuming(after)
        pairs += [
            one + two for two in chars if any(t.matches(ord(two), 0, 0x10FFFF) for t, _ in second)
        ]
    return pairs


def consumed_right_before(parser_class: Any, token: int) -> set[int | None]:
    """The token types a parse (or a prediction, whose SLL closure follows every return edge)
    can have consumed just before consuming ``token``; ``None`` when it can be the first token
    of ``math``. Walks the parser's ATN backwards over epsilon edges (rule calls, the return
    edges of rule stop states, predicates) from every transition that consumes ``token``;
    wildcards and negated sets count as consuming anything."""
    atn = parser_class.atn
    top = atn.maxTokenType
    epsilon_into: dict[int, list[int]] = {}
    consumed_into: dict[int, set[int]] = {}
    consuming = []
    for state in atn.states:
        for transition in state.transitions:
            target = transition.target.stateNumber
            if transition.isEpsilon:
                epsilon_into.setdefault(target, []).append(state.stateNumber)
                continue
            matched = {k for k in range(1, top + 1) if transition.matches(k, 1, top)}
            consumed_into.setdefault(target, set()).update(matched)
            if token in matched:
                consuming.append(state.stateNumber)
    start = atn.ruleToStartState[parser_class.ruleNames.index("math")].stateNumber
    before: set[int | None] = set()
    seen: set[int] = set()
    while consuming:
        number = consuming.pop()
        if number in seen:
            continue
        seen.add(number)
        before.update(consumed_into.get(number, ()))
        if number == start:
            before.add(None)
        consuming.extend(epsilon_into.get(number, ()))
    return before


def rule_strings(lexer_class: Any, name: str) -> set[str]:
    """Every string the lexer rule ``name`` matches, for a rule made of literals only (no rule
    calls, no loops, one character per transition: asserted while walking its ATN)."""
    from antlr4.atn.ATNState import RuleStopState
    from antlr4.atn.Transition import RuleTransition

    atn = lexer_class.atn
    out: set[str] = set()
    todo = [(atn.ruleToStartState[lexer_class.ruleNames.index(name)], "")]
    while todo:
        state, text = todo.pop()
        assert len(text) < 40, (name, text)  # no loop
        if isinstance(state, RuleStopState):
            out.add(text)
            continue
        for transition in state.transitions:
            assert not isinstance(transition, RuleTransition), name
            if transition.isEpsilon:
                todo.append((transition.target, text))
                continue
            chars = [c for c in range(0x3000) if transition.matches(c, 0, 0x10FFFF)]
            assert len(chars) == 1, (name, chars)
            todo.append((transition.target, text + chr(chars[0])))
    return out


class LexerTests(unittest.TestCase):
    def test_no_token_spans_two_brackets(self) -> None:
        _module()
        from gen.PSLexer import PSLexer

        self.assertEqual(two_character_tokens(PSLexer, "()[]{}"), [])
        # Not vacuous: a differential, a function name, a number span two characters.
        self.assertEqual(two_character_tokens(PSLexer, "dx"), ["dd", "dx"])
        self.assertIn("gc", two_character_tokens(PSLexer, "gcd"))
        self.assertIn("12", two_character_tokens(PSLexer, "12"))


class PeriodGrammarTests(unittest.TestCase):
    def test_no_parser_transition_consumes_a_period(self) -> None:
        _module()
        from gen.PSParser import PSParser

        top = PSParser.atn.maxTokenType
        consuming = [
            PSParser.ruleNames[state.ruleIndex]
            for state in PSParser.atn.states
            for transition in state.transitions
            if not transition.isEpsilon and transition.matches(PSParser.PERIOD, 1, top)
        ]
        self.assertEqual(consuming, [])
        # Not vacuous: commas are consumed (lists, function arguments).
        self.assertTrue(
            any(
                not transition.isEpsilon and transition.matches(PSParser.COMMA, 1, top)
                for state in PSParser.atn.states
                for transition in state.transitions
            )
        )

    def test_operator_names_are_consumed_only_right_after_a_brace(self) -> None:
        _module()
        from gen.PSParser import PSParser

        for name in UNREAD_AFTER_NO_BRACE:
            with self.subTest(token=name):
                before = consumed_right_before(PSParser, getattr(PSParser, name))
                self.assertEqual(before, {PSParser.L_BRACE})
        # Not vacuous: a number may come first, or after many kinds of token.
        before = consumed_right_before(PSParser, PSParser.NUMBER)
        self.assertIn(None, before)
        self.assertIn(PSParser.COMMA, before)
        self.assertEqual(consumed_right_before(PSParser, PSParser.PERIOD), set())

    def test_every_spelling_of_an_operator_name_is_seen_before_lexing(self) -> None:
        _module()
        from gen.PSLexer import PSLexer

        from datbench_cli.scorers.mathvision_nonnumbers import _MAY_NAME

        for name in UNREAD_AFTER_NO_BRACE:
            spellings = rule_strings(PSLexer, name)
            self.assertTrue(spellings, name)
            for spelling in spellings:
                self.assertTrue(_MAY_NAME.search(spelling), (name, spelling))
        # Not vacuous: the walk finds every spelling of a rule with alternatives.
        self.assertEqual(rule_strings(PSLexer, "FUNC_EIGENVALS_NAME"), {"eigenvals", "eigenvalues"})

    def test_the_lexer_has_no_predicates(self) -> None:
        _module()
        from antlr4.atn.Transition import AbstractPredicateTransition
        from gen.PSLexer import PSLexer

        kinds = {type(t) for state in PSLexer.atn.states for t in state.transitions}
        self.assertFalse(any(issubclass(kind, AbstractPredicateTransition) for kind in kinds))


class _StateTest(unittest.TestCase):
    def setUp(self) -> None:
        self.module = _module()
        for name in ("frac_type", "VARIABLE_VALUES", "variances", "var"):
            self.addCleanup(setattr, self.module, name, getattr(self.module, name))

    def start_state(self, poisoned: bool) -> None:
        """The import's state, or the one a converted differential leaves (var a Symbol)."""
        import sympy

        i, j = sympy.Symbol("i"), sympy.Symbol("j")
        self.module.variances = {i: sympy.I, j: sympy.I}
        self.module.var = (
            sympy.Symbol("q") if poisoned else {"i": sympy.I, "j": sympy.I, "x_{1}": sympy.I}
        )
        self.module.frac_type = "<before>"

    def check(self, text: str, poisoned: bool, must_decide: bool) -> None:
        self.start_state(poisoned)
        decided = settled_not_a_number(text, self.module)
        if must_decide:
            self.assertTrue(decided, text)
        if not decided:
            return
        fast = _state(self.module)
        self.start_state(poisoned)
        self.assertFalse(parser_gives_a_number(self.module, text), text)
        self.assertEqual(_state(self.module), fast, text)


class LetterTextTests(_StateTest):
    @settings(max_examples=examples(0.2))
    @given(st.text(alphabet="abcdexyzdddeI", min_size=1, max_size=30), st.booleans())
    def test_letter_texts_equal_the_parser(self, text: str, poisoned: bool) -> None:
        self.check(text, poisoned, must_decide=True)

    @settings(max_examples=examples(0.2))
    @given(
        st.text(alphabet="abdexI", min_size=1, max_size=20),
        st.sampled_from(("1", "+", "(", "}", "E", "\\", " ", ".", "gcd", "rank", "ones", "^")),
        st.integers(min_value=0, max_value=20),
        st.booleans(),
    )
    def test_letter_texts_with_a_stranger_decline_or_agree(
        self, text: str, stranger: str, at: int, poisoned: bool
    ) -> None:
        self.check(text[:at] + stranger + text[at:], poisoned, must_decide=False)

    def test_a_differential_past_the_shallow_part_declines(self) -> None:
        self.start_state(False)
        self.assertFalse(settled_not_a_number("a" * 150 + "dx", self.module))
        self.assertTrue(settled_not_a_number("a" * 150, self.module))


def parser_outcome(module: Any, text: str) -> Any:
    """What ``evaluate(str(latex2sympy(text)))`` gives: its value, or "failed"."""
    from datbench_cli.metrics.safe_arith import evaluate

    def run() -> Any:
        return evaluate(str(module.latex2sympy(text)))

    try:
        return call_with_reference_headroom(run)
    except Exception:  # noqa: BLE001 - any failure is "not a number" for every caller
        return "failed"


PERIOD_PIECES = ("a", "b", "d", "x", "e", "I", "dx", "1", "2", "12", "3.5", "0", ".", ".", ",")
PERIOD_PIECES += (":", ";", "(", ")", "{", "}", "[", "]", "+", "-", "*", "/", "^", "_", "=", " ")
PERIOD_PIECES += ("!", "%", "<", "'", "|", "gcd", "rank", "E", "..", ".5", "5.", "ones", "tr")


class CutAtPeriodTests(_StateTest):
    @settings(max_examples=examples(0.3))
    @given(
        st.lists(st.sampled_from(PERIOD_PIECES), min_size=1, max_size=24),
        st.booleans(),
    )
    def test_the_cut_text_is_the_whole_texts_outcome(self, pieces: list[str], poisoned: bool):
        text = "".join(pieces)
        cut = cut_at_unread_token(text)
        if cut == text:
            return
        self.assertTrue(text.startswith(cut), (text, cut))
        self.start_state(poisoned)
        whole = parser_outcome(self.module, text), _state(self.module)
        self.start_state(poisoned)
        short = parser_outcome(self.module, cut), _state(self.module)
        self.assertEqual(short, whole, (text, cut))

    def test_cuts_are_made_where_expected(self) -> None:
        self.assertEqual(cut_at_unread_token("ab,cd.ef"), "ab,cd.")
        self.assertEqual(cut_at_unread_token("3.5+x.y"), "3.5+x.")  # a decimal point is no period
        self.assertEqual(cut_at_unread_token("ab.\\frac{1}{2}"), "ab.\\frac{1}{2}")  # preprocessed
        self.assertEqual(cut_at_unread_token("(a)_{b}.c"), "(a)_{b}.c")
        self.assertEqual(cut_at_unread_token("abc"), "abc")
        self.assertEqual(cut_at_unread_token("a,bonesc.d"), "a,bones")
        self.assertEqual(cut_at_unread_token("xtry"), "xtr")
        self.assertEqual(cut_at_unread_token("{x}tr"), "{x}tr")  # a brace: only at a period
        self.assertEqual(cut_at_unread_token("{x}tr.y"), "{x}tr.")

    def test_a_cut_text_of_each_operator_name_equals_the_whole(self) -> None:
        from gen.PSLexer import PSLexer

        from datbench_cli.scorers.mathvision_nonnumbers import _tokens

        spelled = {"TRACE": "tr", "DIAGONALIZE": "eig", "EIGENVECTORS": "eigenvects"}
        for name in UNREAD_AFTER_NO_BRACE:
            stem = name.removeprefix("FUNC_").removesuffix("_NAME")
            literal = spelled.get(stem, stem.lower())
            self.assertEqual([t.type for t in _tokens(literal)], [getattr(PSLexer, name)])
            for text in (f"ab,c{literal}1,d", f"2:x{literal}+3", f"{literal}dx"):
                cut = cut_at_unread_token(text)
                with self.subTest(text=text, cut=cut):
                    self.assertNotEqual(cut, text)
                    for poisoned in (False, True):
                        self.start_state(poisoned)
                        whole = parser_outcome(self.module, text), _state(self.module)
                        self.start_state(poisoned)
                        short = parser_outcome(self.module, cut), _state(self.module)
                        self.assertEqual(short, whole)


LIST_FACTOR_PIECES = ("a", "b", "x", "I", "e", "dx", "dy", "da", "7", "12", "3.5", "1,234")


def list_texts(pieces: tuple[str, ...] = LIST_FACTOR_PIECES) -> Any:
    """Texts of items separated by commas, each of factors separated by colons, with empty
    items and factors (syntax errors) and a period, a stray token or an operator name after."""
    factor = st.lists(st.sampled_from(pieces), min_size=0, max_size=4).map("".join)
    item = st.lists(factor, min_size=1, max_size=3).map(":".join)
    ending = st.sampled_from(("", "", ".", ".ab,c", ":", "tr", "ones,dx", "+1", "(x)", "^2"))
    return st.tuples(st.lists(item, min_size=1, max_size=5).map(",".join), ending).map("".join)


class ListTextTests(_StateTest):
    @settings(max_examples=examples(0.4))
    @given(list_texts(), st.booleans())
    def test_list_texts_equal_the_parser(self, text: str, poisoned: bool) -> None:
        self.check(text, poisoned, must_decide=False)

    @settings(max_examples=examples(0.3))
    @given(list_texts(("a", "b", "I", "e", "dx", "dy", "7 ")), st.booleans())
    def test_list_texts_without_stray_tokens_are_decided(self, text: str, poisoned: bool):
        text = text.replace(" ", "")
        if "," not in cut_at_unread_token(text) or "7e" in text or "(x)" in text:
            return  # no list, 7e.. an E_NOTATION, or a bracket
        if text.endswith(("+1", "^2")):
            return
        self.check(text, poisoned, must_decide=True)

    def test_cases(self) -> None:
        cases = {
            "1,2,3": True,
            "1,2,": True,
            "1,,2": True,
            ",1": True,
            "ab,dx,cd": True,
            "ab,dx": True,
            "a:,b": True,
            "a::b,c": True,
            "12:,5": True,
            "1,2:": True,
            "1,:2": True,
            "dx,a:,": True,
            "a,b:,c": True,
            "a,b::c": True,
            "dx,b:c:,y": True,
            "ab,cd,.": True,
            "1+2,3": False,
        }
        for text, decided in cases.items():
            for poisoned in (False, True):
                with self.subTest(text=text, poisoned=poisoned):
                    self.check(text, poisoned, must_decide=decided)
                    if not decided:
                        self.start_state(poisoned)
                        self.assertFalse(settled_not_a_number(text, self.module))

    def test_a_full_size_number_loop_equals_the_parser(self) -> None:
        text = FAMILIES["number loop"]["1, 2, 3"].replace(" ", "")
        for poisoned in (False, True):
            self.check(text, poisoned, must_decide=True)
            self.check(text.rstrip(","), poisoned, must_decide=True)


class BracketTextTests(_StateTest):
    @settings(max_examples=examples(0.3))
    @given(st.text(alphabet="()[]{}", min_size=1, max_size=30), st.booleans())
    def test_bracket_texts_equal_the_parser(self, text: str, poisoned: bool) -> None:
        self.check(text, poisoned, must_decide=True)


class FamilyTests(unittest.TestCase):
    def test_each_family_cut_short_scores_as_without_fast_paths(self) -> None:
        for family, variants in FAMILIES.items():
            for name, output in variants.items():
                for sample in ({"answer": "12", "options": []}, {"answer": "B", "options": []}):
                    with self.subTest(family=family, variant=name, gold=sample["answer"]):
                        short = output[:160]
                        fast = call_with_reference_headroom(mathvision.score_sample, sample, short)
                        with mock.patch.object(
                            mathvision, "settled_not_a_number", lambda *a: False
                        ):
                            slow = call_with_reference_headroom(
                                mathvision.score_sample, sample, short
                            )
                        self.assertEqual(fast, slow)

    def test_full_size_slow_families_are_not_parsed(self) -> None:
        module = _module()
        slow = [
            FAMILIES["prose loop"]["shaded part"],
            FAMILIES["prose loop"]["16 KB, no punctuation"],
            FAMILIES["bracket loop"]["4096 { then }"],
            FAMILIES["bracket loop"]["(((("],
            FAMILIES["bracket loop"]["({["],
            FAMILIES["prose loop"]["commas and periods"],
            FAMILIES["number loop"]["1, 2, 3"],
            FAMILIES["long chain of thought, no answer"]["reasoning"],
        ]
        for name in ("var", "variances", "frac_type", "VARIABLE_VALUES"):
            self.addCleanup(setattr, module, name, getattr(module, name))
        for output in slow:
            for gold, options in (("12", []), ("B", ["3", "5"])):
                # Any exception is swallowed as "not equal": count the calls instead.
                mathvision._MEMO.clear()
                with mock.patch.object(module.PSParser, "math") as math:
                    details = mathvision.score_sample({"answer": gold, "options": options}, output)
                self.assertEqual(details["score"], 0.0)
                math.assert_not_called()


if __name__ == "__main__":
    unittest.main()
