"""Texts that latex2sympy 1.9.1 provably cannot turn into a number, decided without parsing.

The parser's full-context ANTLR prediction costs about a millisecond per token, so an 8 KB
repetition loop takes seconds only to fail. MathVision needs one fact from it: does
``evaluate(str(latex2sympy(text)))`` give a number? This module answers "no" for a class of
texts by an argument over the grammar (``PS.g4``) and the converter, and otherwise leaves the
question to the parser.

The argument, for a text with none of the barred characters below and a first token (after any
run of ``( [ { + -``) that is a plain letter (``LETTER_NO_E``):

1. latex2sympy's preprocessing leaves the text unchanged (every pattern it rewrites needs a
   backslash command outside :data:`_COMMANDS`, a ``~``, a ``$`` or ``)_{``), so the lexer sees
   the text itself, and every nested call (a letter function's arguments) sees a contiguous
   piece of it (no skipped whitespace).
2. The start rule ``math`` has no EOF: a parse succeeds on some prefix or raises (the error
   listener raises on every lexer or parser error, so no token is ever skipped silently). Any
   successful parse starts at token 0. At a start position, ``(`` can only open a ``group``,
   ``[``/``{`` a ``group`` or a ``relation_list`` (a ``binom`` needs ``\\choose``), ``+``/``-``
   a signed ``unary``; so by induction the letter is the leftmost leaf of the first expression,
   an ``atom_expr`` (a Symbol) or the head of a letter function (an undefined Function); an
   ``e`` there is ``func: EXP_E supexpr?``, which without a ``^`` after it is ``exp(1)``, the
   constant ``E``.
3. Every conversion on the way up keeps it: groups return their inner expression; signs,
   products, quotients, sums and powers are built with ``evaluate=False``; ``!`` gives an
   unevaluated factorial; a transpose keeps a scalar; a relation keeps both sides; a list
   fails in ``round``. The substitutions that could drop it (``|_{x=...}``), the matrix
   operations that call ``doit()`` and every evaluating function need characters or commands
   barred here. So the printed result names that letter (``t``, ``t_{1}``, ``t(3 + 4)``, ``I``)
   and the arithmetic evaluation refuses it, as the reference's ``eval`` raises ``NameError``
   or ``SyntaxError`` (its module has no one-letter globals).
4. Nothing in the text changes latex2sympy's module state: ``=`` (assignment) and ``\\in``
   are barred, and :func:`_state_allows` covers ``var`` (letter atoms read it; a converted
   differential rebinds it, so none may be in the text). What a call always sets (``frac_type``
   for a text with ``\\frac``, an empty ``VARIABLE_VALUES``) is set by :func:`settle_state` as
   the call would.

tests/scorers/test_mathvision_nonnumbers.py checks the answer against the parser itself on
generated repetition loops, mutations of them and random texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Backslash commands allowed in a text (each is a plain operator or constant for the
# converter): the whole letter run after the backslash must be one of these.
_COMMANDS = frozenset({"frac", "times", "cdot", "div", "sqrt", "pi", "infty"})
_COMMAND = re.compile(r"\\([a-zA-Z]*)")
# Whitespace and what preprocessing turns into it (skipped tokens break nested calls' text),
# "=" (assignment, relations), "|" (evaluation at a point substitutes symbols), and the
# permutation rewrite latex2sympy applies to "(a)_{b}".
_BARRED = re.compile(r"[ \t\r\n~$=|]|\)_\{")
# A possible differential ("d" then a letter or a command: the DIFFERENTIAL token).
_DIFFERENTIAL = re.compile(r"d[a-zA-Z\\]")


def _state_allows(text: str, module: Any) -> bool:
    """The call leaves latex2sympy's state as it is.

    The text must hold no differential (converting one rebinds ``var`` to its Symbol: the
    letter and list classes below reproduce that). ``var`` must be a Symbol (a differential's
    earlier rebinding: every lookup raises ``TypeError``) or a dict mapping no letter-led name
    to anything but the imaginary unit (``i``, ``j``), so a letter atom's lookup cannot build a
    matrix symbol or write ``variances``.
    """
    return not _DIFFERENTIAL.search(text) and _lookups_harmless(module)


def _first_token(text: str, skipped: set[int]) -> Any:
    """The first token of ``text`` (as latex2sympy's lexer makes it) whose type is not in
    ``skipped``; ``ValueError`` when the lexer fails before it."""
    lexer = _lexer(text)
    token = lexer.nextToken()
    while token.type in skipped:
        token = lexer.nextToken()
    return token


def _lexer(text: str) -> Any:
    """latex2sympy's lexer over ``text``, raising ``ValueError`` where it fails."""
    from antlr4 import InputStream
    from antlr4.error.ErrorListener import ErrorListener
    from gen.PSLexer import PSLexer

    class _Raise(ErrorListener):
        def syntaxError(self, *args: Any) -> None:  # noqa: N802 - the ANTLR interface
            raise ValueError("lexer error")

    lexer = PSLexer(InputStream(text))
    lexer.removeErrorListeners()
    lexer.addErrorListener(_Raise())
    return lexer


def _first_token_is_a_letter(text: str) -> bool:
    """After any run of ``( [ { + -``, the first token is a plain letter, or an ``e`` without a
    ``^`` after it (``func: EXP_E supexpr?`` without its superscript: ``exp(1)``, printed ``E``)."""
    from gen.PSLexer import PSLexer

    openers = {PSLexer.L_PAREN, PSLexer.L_BRACKET, PSLexer.L_BRACE, PSLexer.ADD, PSLexer.SUB}
    try:
        token = _first_token(text, openers)
        if token.type == PSLexer.EXP_E:
            after = _first_token(text[token.stop + 1 :], set())
            return bool(after.type != PSLexer.CARET)
    except ValueError:
        return False
    return bool(token.type == PSLexer.LETTER_NO_E)


def _lexer_fails_on(text: str) -> bool:
    """The lexer stops with an error on the first token of ``text``."""
    try:
        _first_token(text, set())
    except ValueError:
        return True
    return False


def _commands_allowed(text: str) -> bool:
    """Every backslash command is in :data:`_COMMANDS`, except that the text may end inside one
    (an output cut at its token limit) if the lexer fails there: no token can begin with those
    characters, and none before can reach into them (every token with an inner backslash,
    ``^{\\top}``, ``\\not\\equiv``, ``\\$\\infty``, ``\\infty\\%``, ``\\variable{..}``,
    needs a barred character or command, or a character other than a letter after it)."""
    names = _COMMAND.findall(text)
    if not names:
        return True
    *complete, last = names
    if any(name not in _COMMANDS for name in complete):
        return False
    if last in _COMMANDS:
        return True
    cut = "\\" + last
    return (
        text.endswith(cut)
        and any(name.startswith(last) for name in _COMMANDS)
        and _lexer_fails_on(cut)
    )


def provably_not_a_number(text: str, module: Any) -> bool:
    """True only when ``module.latex2sympy(text)`` raises or gives something whose printed form
    names a letter (so no number), and the call would leave the module's state as it is."""
    if _BARRED.search(text) or not _commands_allowed(text):
        return False
    return _state_allows(text, module) and _first_token_is_a_letter(text)


def settle_state(text: str, module: Any) -> None:
    """Set what ``module.latex2sympy(text)`` sets on every call (``frac_type``: only ``\\frac`` can
    be in such a text; ``VARIABLE_VALUES``: a fresh empty dict)."""
    if "\\frac" in text:
        module.frac_type = "\\frac"
    module.VARIABLE_VALUES = {}


# ----------------------------------------------------------------------------- whole-text classes
#
# Two more classes, decided from the real lexer's tokens (the lexer is linear and cheap; the
# parser's prediction is what costs seconds):
#
# - Leafless texts: every character is a bracket, so every token is one of
#   :data:`LEAFLESS_TOKENS` (one per character, see :func:`_char_tokens`). No rule of the
#   grammar derives a string of those tokens alone, not even the empty one (checked on the
#   parser's own ATN by tests/scorers/test_mathvision_nonnumbers.py), so no prefix of the text
#   parses: the parser reports a syntax error (the listener raises) or runs out of stack, before
#   any conversion. The call raises; it sets only what every call sets (:func:`settle_state`).
# - Letter texts: every character is an ASCII letter and every token a plain letter
#   (``LETTER_NO_E``), ``e`` (``EXP_E``) or a differential (``DIFFERENTIAL``, ``d`` and a
#   letter). Such a token sequence is one implicit product (``postfix+``), converted left to
#   right by ``convert_postfix_list``: a letter is a Symbol after a lookup in ``var`` (or ``I``,
#   without one), ``e`` is ``E``, a differential rebinds ``var`` to its Symbol (``global var``
#   in ``convert_atom``). Once ``var`` is a Symbol, the next letter other than ``I`` raises
#   ``TypeError`` on the lookup; a product that converts whole names a letter. Either way no
#   number; the state the call leaves is ``var`` bound to the last differential converted before
#   that letter, which :func:`letter_text_outcome` computes, provided everything that changes
#   state happens within :data:`_SHALLOW` tokens (far inside the recursion limit, so no
#   ``RecursionError`` can come first). The parser stops at an operator name (``tr``, ``ones``:
#   see :func:`cut_at_unread_token`), so the product ends there.

LEAFLESS_TOKENS = ("L_PAREN", "R_PAREN", "L_BRACKET", "R_BRACKET", "L_BRACE", "R_BRACE")
_LEAFLESS_CHARS = frozenset("()[]{}")
_LETTERS = re.compile(r"[A-Za-z]+")
_SHALLOW = 100  # tokens: where a state change may happen in a letter text


def _tokens(text: str) -> Iterator[Any]:
    """The lexer's tokens of the whole ``text``, one at a time (none kept); ``ValueError`` when
    the lexer fails."""
    from antlr4 import Token

    lexer = _lexer(text)
    token = lexer.nextToken()
    while token.type != Token.EOF:
        yield token
        token = lexer.nextToken()


# The last whole text lexed and its tokens (``None``: the lexer failed). A text is lexed to cut
# it (:func:`cut_at_unread_token`), then classified, and each prediction is converted twice
# (against the gold answer and the gold option): the lexer is a function of the text alone.
_LAST_LEXED: list[tuple[str, list[Any] | None]] = [("", [])]


def _all_tokens(text: str) -> list[Any] | None:
    """Every token of ``text`` (``None`` when the lexer fails), from the last text's if it is
    the same text."""
    last_text, last_tokens = _LAST_LEXED[0]
    if last_text == text:
        return last_tokens
    tokens: list[Any] | None = []
    try:
        tokens = list(_tokens(text))
    except ValueError:
        tokens = None
    _LAST_LEXED[0] = (text, tokens)
    return tokens


def _char_tokens() -> dict[str, int]:
    """The token type the lexer gives each bracket character alone. No lexer rule matches two
    or more of these characters (checked on the lexer's ATN by
    tests/scorers/test_degenerate_outputs.py), so a text of them lexes one token per character,
    of these types: the text need not be lexed."""
    if not _CHAR_TOKENS:
        for char in sorted(_LEAFLESS_CHARS):
            try:
                tokens = list(_tokens(char))
            except ValueError:
                continue
            if len(tokens) == 1:
                _CHAR_TOKENS[char] = tokens[0].type
    return _CHAR_TOKENS


_CHAR_TOKENS: dict[str, int] = {}


def leafless(text: str) -> bool:
    """Every token of ``text`` is a bracket: latex2sympy raises on it without converting."""
    if not text or not set(text) <= _LEAFLESS_CHARS:
        return False
    from gen.PSLexer import PSLexer

    allowed = {getattr(PSLexer, name) for name in LEAFLESS_TOKENS}
    types = _char_tokens()
    return all(char in types and types[char] in allowed for char in set(text))


_NO_CHANGE = object()


def _lookups_harmless(module: Any) -> bool:
    """A letter atom's lookup in ``var`` changes nothing: ``var`` is a Symbol (the lookup raises
    ``TypeError``), or a dict mapping no letter-led name to anything but ``I`` (no matrix
    symbol is built, ``variances`` is not written)."""
    import sympy

    var = module.var
    if type(var) is dict:
        return all(not str(k)[:1].isalpha() or v is sympy.I for k, v in var.items())
    return type(var) is sympy.Symbol


def letter_text_outcome(text: str, module: Any) -> Any:
    """For a letter text (see above): ``None`` when undecided, else what ``var`` is after the
    call (``_NO_CHANGE``, or the Symbol to bind). The call gives no number either way."""
    import sympy

    if not _LETTERS.fullmatch(text) or not _lookups_harmless(module):
        return None
    var = module.var
    from gen.PSLexer import PSLexer

    kinds = (PSLexer.LETTER_NO_E, PSLexer.EXP_E, PSLexer.DIFFERENTIAL)
    unread = _unread_types(text)
    outcome: Any = _NO_CHANGE
    symbol_now, stopped = type(var) is sympy.Symbol, False
    tokens = _all_tokens(text)
    if tokens is None:
        return None
    for index, token in enumerate(tokens):
        if token.type in unread:
            break  # the parser never reads past it (see cut_at_unread_token)
        if token.type not in kinds:
            return None  # another token anywhere: the parse may differ or fail
        if stopped:
            continue
        if token.type == PSLexer.LETTER_NO_E and token.text != "I" and symbol_now:
            stopped = True  # TypeError here: ``name in var`` with var a Symbol
        elif token.type == PSLexer.DIFFERENTIAL:
            if index >= _SHALLOW:
                return None
            name = module.get_differential_var_str(token.text)
            outcome = sympy.Symbol(name, real=module.is_real)
            symbol_now = True
    return outcome


def settled_not_a_number(text: str, module: Any) -> bool:
    """True only when ``module.latex2sympy(text)`` provably raises or gives no number; the
    module's state is then left as the call would leave it."""
    if provably_not_a_number(text, module) or leafless(text):
        settle_state(text, module)
        return True
    outcome = letter_text_outcome(text, module)
    if outcome is None:
        outcome = list_text_outcome(text, module)
    if outcome is None:
        return False
    settle_state(text, module)
    if outcome is not _NO_CHANGE:
        module.var = outcome
    return True


# ----------------------------------------------------------------------------- comma lists
#
# List texts: every token is a plain letter, ``e``, a differential, a number (``NUMBER``), a
# colon (``COLON``, a division in ``mp``) or a comma, with at least one comma, up to the first
# token the parser cannot read (a period, an operator name: see :func:`cut_at_unread_token`).
# Split at the commas into items and each item at the colons into factors. Without brackets a
# comma can only be the separator of ``relation_list_content`` (every other rule that consumes
# one is inside a bracket or a matrix), an item is a relation and a factor an implicit product
# (``postfix+``).
# The parser then (checked against latex2sympy itself on generated texts, in a fresh and an
# already-changed state, by tests/scorers/test_degenerate_outputs.py):
#
# - raises, before any conversion, when the first item is malformed (an empty factor: a
#   leading comma, ``a:,b``, ``a::b,c``), or a later item is empty or starts with a colon
#   (``1,,2``, a trailing comma ``1,2,``, ``a,:b``); only :func:`settle_state`'s state is set;
# - else stops before the first colon of a later item that has no factor after it (``a,b:,c``
#   and ``a,b::c`` parse as ``a,b``: the rest is never read) and converts the items it read in
#   order into a list, which is no number (``evaluate`` refuses a list; the reference's
#   ``round`` raises on one). The conversion goes token by token from the left (items, then
#   factors, then the product's terms): a differential rebinds ``var`` to its Symbol and
#   converts to the Symbol ``d<x>``; a plain letter other than ``I`` raises ``TypeError`` once
#   ``var`` is a Symbol, which ends the call; numbers, ``e`` and ``I`` never read ``var``. So
#   ``var`` ends bound to the last differential before that letter.
#
# Any item of :data:`_SHALLOW` tokens or more is left to the parser (conversion recursion).
_LIST_KINDS = ("LETTER_NO_E", "EXP_E", "DIFFERENTIAL", "NUMBER", "COLON", "COMMA")


def _well_formed(item: list[Any], colon: int) -> bool:
    """The item's tokens are factors separated by single colons, none empty."""
    if not item or item[0].type == colon or item[-1].type == colon:
        return False
    return all(a.type != colon or b.type != colon for a, b in zip(item, item[1:], strict=False))


def _well_formed_prefix(item: list[Any], colon: int) -> list[Any]:
    """The item up to its first colon that has no factor after it (the whole item if none)."""
    for index, token in enumerate(item):
        if token.type == colon and (index + 1 == len(item) or item[index + 1].type == colon):
            return item[:index]
    return item


def list_text_outcome(text: str, module: Any) -> Any:
    """For a list text (see above): ``None`` when undecided, else what ``var`` is after the
    call (``_NO_CHANGE``, or the Symbol to bind). The call gives no number either way."""
    import sympy

    if "," not in text or not _lookups_harmless(module):
        return None
    from gen.PSLexer import PSLexer

    kinds = {getattr(PSLexer, name) for name in _LIST_KINDS}
    unread = _unread_types(text)
    every = _all_tokens(text)
    if every is None:
        return None
    tokens = []
    for token in every:
        if token.type in unread:
            break  # the parser never reads past it (see cut_at_unread_token)
        tokens.append(token)
    if any(token.type not in kinds for token in tokens):
        return None
    items: list[list[Any]] = [[]]
    for token in tokens:
        if token.type == PSLexer.COMMA:
            items.append([])
        else:
            items[-1].append(token)
    if len(items) < 2 or any(len(item) >= _SHALLOW for item in items):
        return None
    colon = PSLexer.COLON
    if not _well_formed(items[0], colon):
        return _NO_CHANGE  # a syntax error: nothing is converted
    read = list(items[0])
    for item in items[1:]:
        if not item or item[0].type == colon:
            return _NO_CHANGE  # a syntax error: nothing is converted
        kept = _well_formed_prefix(item, colon)
        read += kept
        if len(kept) < len(item):
            break  # the parser stops before that colon; the rest is never read
    outcome: Any = _NO_CHANGE
    symbol_now = type(module.var) is sympy.Symbol
    for token in read:
        if token.type == PSLexer.LETTER_NO_E and token.text != "I" and symbol_now:
            break  # TypeError here: ``name in var`` with var a Symbol
        if token.type == PSLexer.DIFFERENTIAL:
            name = module.get_differential_var_str(token.text)
            outcome = sympy.Symbol(name, real=module.is_real)
            symbol_now = True
    return outcome


# ----------------------------------------------------------------------- cut at an unread token
#
# No rule of the grammar consumes a ``.`` token (``PERIOD``), and the operator names of
# ``\operatorname{...}`` (``ones``, ``rank``, ``eye``, ...: :data:`UNREAD_AFTER_NO_BRACE`) are
# consumed only right after an ``L_BRACE`` (``{``). Both are checked on the parser's ATN by
# tests/scorers/test_degenerate_outputs.py: walking back over epsilon edges (rule calls and
# returns included) from every transition that consumes such a token finds only ``L_BRACE`` as
# the token consumed just before, and never the start of ``math``. So in a text without ``{``
# no configuration of the parser or of its prediction (SLL's follow links included) can
# consume the first such token. The start rule has no EOF: every decision stops looking ahead
# there, the parse, and so the conversion, of the text is that of the text up to and including
# that token, and the token stream never lexes past it (it fetches one token past the last
# consumed). Lexing a prefix ending at a token boundary gives the same tokens (the lexer's
# rules depend only on the characters they match: no predicates). The cut is made only where
# latex2sympy's preprocessing is the identity (no backslash, ``~``, ``$`` or ``)_{``), so the
# call sees exactly these texts and sets the same state (no ``\frac`` anywhere).
_PREPROCESSED = re.compile(r"[\\~$]|\)_\{")
# Every spelling of an operator name holds one of these (checked against the lexer's rules by
# tests/scorers/test_degenerate_outputs.py): a text with none needs no lexing to be cut.
_MAY_NAME = re.compile(
    r"arsinh|arcsinh|arcosh|arccosh|artanh|arctanh|gcd|lcm|floor|ceil|eye|zeros|ones|cols|rows"
    r"|diag|norm|rank|tr|rref|stack|orth|nullspace|eig|svd|SVD"
)
UNREAD_AFTER_NO_BRACE = tuple(
    f"FUNC_{name}_NAME"
    for name in (
        "ARSINH ARCSINH ARCOSH ARCCOSH ARTANH ARCTANH GCD LCM FLOOR CEIL EYE ZEROS ONES COLS ROWS "
        "DIAG NORM RANK TRACE RREF HSTACK VSTACK ORTHOGONALIZE NULLSPACE DIAGONALIZE EIGENVALS "
        "EIGENVECTORS SVD"
    ).split()
)


def cut_at_unread_token(text: str) -> str:
    """``text`` up to and including its first token the parser cannot read (a ``PERIOD``; an
    operator name too when the text has no ``{``), or ``text`` itself when there is none, the
    lexer fails first, or preprocessing could change the text: latex2sympy gives the same
    result, or raises, and leaves the same state, for both."""
    if _PREPROCESSED.search(text):
        return text
    if "." not in text and ("{" in text or not _MAY_NAME.search(text)):
        return text  # no unread token can be in it
    unread = _unread_types(text)
    last_text, last_tokens = _LAST_LEXED[0]
    if last_text == text:  # lexed whole before
        for token in last_tokens or ():
            if token.type in unread:
                return text[: token.stop + 1]
        return text
    tokens = []
    try:
        for token in _tokens(text):
            if token.type in unread:
                return text[: token.stop + 1]
            tokens.append(token)
    except ValueError:
        _LAST_LEXED[0] = (text, None)
        return text
    _LAST_LEXED[0] = (text, tokens)  # lexed whole: the classes below need the same tokens
    return text


def _unread_types(text: str) -> set[int]:
    """The token types the parser cannot read anywhere in ``text`` (see above)."""
    from gen.PSLexer import PSLexer

    unread = {PSLexer.PERIOD}
    if "{" not in text:
        unread |= {getattr(PSLexer, name) for name in UNREAD_AFTER_NO_BRACE}
    return unread
