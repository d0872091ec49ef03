"""VQA soft accuracy: the EvalAI/VQA answer normalization and leave-one-out averaging.

Two entry points share one pipeline: ``normalize_vqa_answer`` (VQAv2, LAVIS ``vqa_eval`` steps)
and ``normalize_evalai_answer`` (TextVQA, MMF ``EvalAIAnswerProcessor``, which first deletes
commas and question marks and splits off ``'s``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from datbench_cli.metrics.averaging import float_sum

# The ASCII-apostrophe VQA contraction map (MMF / LAVIS / lmms-eval), 120 entries. The four
# capitalized keys can never match (tokens are lower-cased), and "somebody'd" maps the wrong way
# round; both are kept as in the reference.
# fmt: off
CONTRACTIONS: dict[str, str] = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've",
    "couldnt": "couldn't", "couldn'tve": "couldn't've", "couldnt've": "couldn't've",
    "didnt": "didn't", "doesnt": "doesn't", "dont": "don't", "hadnt": "hadn't",
    "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't", "havent": "haven't",
    "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd",
    "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm",
    "Ive": "I've", "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've",
    "itll": "it'll", "let's": "let's", "maam": "ma'am", "mightnt": "mightn't",
    "mightnt've": "mightn't've", "mightn'tve": "mightn't've", "mightve": "might've",
    "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't", "notve": "not've",
    "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at",
    "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've", "she'dve": "she'd've",
    "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've", "somebodyll": "somebody'll",
    "somebodys": "somebody's", "someoned": "someone'd", "someoned've": "someone'd've",
    "someone'dve": "someone'd've", "someonell": "someone'll", "someones": "someone's",
    "somethingd": "something'd", "somethingd've": "something'd've",
    "something'dve": "something'd've", "somethingll": "something'll", "thats": "that's",
    "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've",
    "therere": "there're", "theres": "there's", "theyd": "they'd", "theyd've": "they'd've",
    "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're", "theyve": "they've",
    "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've", "weve": "we've",
    "werent": "weren't", "whatll": "what'll", "whatre": "what're", "whats": "what's",
    "whatve": "what've", "whens": "when's", "whered": "where'd", "wheres": "where's",
    "whereve": "where've", "whod": "who'd", "whod've": "who'd've", "who'dve": "who'd've",
    "wholl": "who'll", "whos": "who's", "whove": "who've", "whyll": "why'll", "whyre": "why're",
    "whys": "why's", "wont": "won't", "wouldve": "would've", "wouldnt": "wouldn't",
    "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all",
    "yall'll": "y'all'll", "y'allll": "y'all'll", "yall'd've": "y'all'd've",
    "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've",
    "you'dve": "you'd've", "youll": "you'll", "youre": "you're", "youve": "you've",
}
# fmt: on

NUMBER_WORDS: dict[str, str] = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip

ARTICLES = frozenset({"a", "an", "the"})

# Processed in this order; each is either deleted or replaced by a space.
PUNCTUATION: tuple[str, ...] = (
    ";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`",
    ",", "?", "!",
)  # fmt: skip

# A comma between two digits anywhere switches every punctuation mark to deletion.
DIGIT_COMMA_RE = re.compile(r"\d,\d")
# Quirk: the reference pattern "(?!<=\d)(\.)(?!\d)" has a malformed look-behind that is a no-op
# look-ahead, so it removes every period not followed by a digit.
PERIOD_RE = re.compile(r"\.(?!\d)")
# Quirk: the reference passes re.UNICODE (= 32) in the count position, so at most 32 periods go.
PERIOD_REMOVAL_LIMIT = 32


def process_punctuation(text: str) -> str:
    """Delete or space out each listed mark, then drop periods not followed by a digit."""
    digit_comma = DIGIT_COMMA_RE.search(text) is not None
    processed = text
    for mark in PUNCTUATION:
        # Decided on the input text, not on the text processed so far.
        if digit_comma or mark + " " in text or " " + mark in text:
            processed = processed.replace(mark, "")
        else:
            processed = processed.replace(mark, " ")
    return PERIOD_RE.sub("", processed, count=PERIOD_REMOVAL_LIMIT)


def process_words(text: str) -> str:
    """Lower-case, drop articles, number words to digits, contractions restored."""
    words = [NUMBER_WORDS.get(word, word) for word in text.lower().split() if word not in ARTICLES]
    return " ".join(CONTRACTIONS.get(word, word) for word in words)


def _finish(text: str) -> str:
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return process_words(process_punctuation(text))


def normalize_vqa_answer(answer: str) -> str:
    """VQAv2 normalization ("" for a falsy answer)."""
    if not answer:
        return ""
    return _finish(answer.lower().strip())


def normalize_evalai_answer(answer: str) -> str:
    """TextVQA (EvalAI) normalization.

    No falsy check: a non-string answer fails in ``lower`` as in the reference. Commas are
    deleted first, so the digit-comma rule of ``process_punctuation`` can never fire here.
    """
    text = answer.lower().replace(",", "").replace("?", "").replace("'s", " 's")
    return _finish(text.strip())


def leave_one_out_accuracy(prediction: str, references: list[str]) -> float:
    """Mean over positions ``i`` of ``min(1, #{j != i : references[j] == prediction} / 3)``.

    Both sides must already be normalized; 0.0 for no references. A single reference always
    scores 0.0.
    """
    if not references:
        return 0.0
    matches = [reference == prediction for reference in references]
    total = sum(matches)
    per_position = [min(1.0, float(total - own) / 3.0) for own in matches]
    return float_sum(per_position) / len(per_position)


def vqa_accuracy(
    prediction: str, references: Iterable[str], normalize: Callable[[str], str]
) -> float:
    """Leave-one-out accuracy after ``normalize`` (0.0, with nothing normalized, if no references)."""
    if not references:
        return 0.0
    normalized_prediction = normalize(prediction)
    return leave_one_out_accuracy(normalized_prediction, [normalize(ref) for ref in references])
