"""Pure statistics on per-sample scores: standard errors, intervals, the paired bootstrap,
McNemar's exact test, Holm's adjustment and the minimum detectable difference.

Every function takes plain sequences of numbers and returns plain floats (``None`` where the
quantity is undefined, e.g. a standard error over fewer than two samples). Nothing here knows
about benchmarks; the report and comparison modules group the samples and call these.

Definitions (written out in ``docs/statistics.md``):

- CLT standard error: ``sqrt(s^2 / n)`` with ``s^2`` the sample variance (``n - 1``).
- Clustered standard error (Miller 2024, "Adding Error Bars to Evals", eq. 4):
  ``sqrt(SE_CLT^2 + (1/n^2) * sum_c sum_i sum_{j != i} (s_ic - m)(s_jc - m))``.
- 95% interval of a mean of scores in [0, 1] (:func:`bounded_interval`): the Wilson score
  interval with continuity correction (Newcombe 1998, method 4; scipy's ``wilsoncc``) of
  ``k = n * mean`` in ``n``: for 0/1 scores the binomial interval, for partial-credit scores a
  conservative one (a score in [0, 1] with mean ``m`` varies at most as much as a 0/1 score of
  rate ``m``). Closed form, so ``score`` imports no scipy for it. With a clustered standard error the
  same interval at the effective sample size ``n / deff``, ``deff = max(1, SE_cl^2 / SE^2)``
  (Kish's design effect; Korn and Graubard 1998). It never leaves [0, 1], and 8/8 is not
  certainty: [0.598, 1]. Over scores outside [0, 1] (:func:`mean_interval`; an ARS under
  negative rubric weights) the mean +/- z CLT standard errors instead.
- Paired bootstrap: the percentile interval of ``mean(b - a)`` over resamples of sample ids,
  drawn with replacement inside each stratum (source dataset) so a resample keeps the
  benchmark's mix of datasets.
- McNemar's exact test: two-sided binomial test of ``b`` successes in ``b + c`` trials, p = 1/2.
- Minimum detectable paired difference at 80% power:
  ``(z_{1-alpha/2} + z_{power}) * sqrt(var_d / n)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from datbench_cli.metrics.averaging import float_sum, mean_or_none
from datbench_cli.stats_defaults import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES
from datbench_cli.stats_defaults import DEFAULT_SEED as DEFAULT_SEED
from datbench_cli.stats_defaults import MAX_RESAMPLES as MAX_RESAMPLES

CONFIDENCE = 0.95
POWER = 0.80
_CHUNK_CELLS = 1 << 21  # draws held at once (16 MB of int64)
_DEVIATION_CHUNK = 1 << 16  # deviations from the mean held at once (512 KB)
# Below this many samples per distinct value, drawing ids is faster than a multinomial.
_MULTINOMIAL_RATIO = 8


# ``scipy.stats.norm.ppf`` at the probabilities every report uses (the default confidence and
# power), so ``score`` does not import scipy.stats (~0.3 s of start-up) to look them up;
# tests/stats/test_stats.py checks each entry against scipy.
_KNOWN_QUANTILES = {0.5 + CONFIDENCE / 2: 1.959963984540054, POWER: 0.8416212335729143}


def normal_quantile(probability: float) -> float:
    """``scipy.stats.norm.ppf(probability)``, the same float (its ``ndtri`` for other values)."""
    known = _KNOWN_QUANTILES.get(probability)
    if known is not None:
        return known
    from scipy.special import ndtri  # what norm.ppf computes (times scale 1, plus loc 0)

    return float(ndtri(probability))


def z_value(confidence: float = CONFIDENCE) -> float:
    """The two-sided normal quantile for ``confidence`` (1.959963... for 0.95)."""
    return normal_quantile(0.5 + confidence / 2)


# The arithmetic mean (``None`` over no samples), summed left to right like every accuracy.
mean = mean_or_none


def clt_se(scores: Sequence[float] | np.ndarray) -> float | None:
    """CLT standard error of the mean: ``sqrt(var / n)``, sample variance (``None`` for n < 2)."""
    n = len(scores)
    if n < 2:
        return None
    values = np.asarray(scores, dtype=float)
    return float(math.sqrt(float(np.var(values, ddof=1)) / n))


def clustered_se(
    scores: Sequence[float] | np.ndarray, clusters: Sequence[Hashable] | np.ndarray
) -> float | None:
    """Standard error clustered by ``clusters`` (Miller 2024, eq. 4).

    The CLT variance plus the within-cluster cross products of deviations from the overall
    mean, ``(1/n^2) * sum_c [(sum_i d_ic)^2 - sum_i d_ic^2]``. ``None`` for n < 2. The cross
    term can be negative; the variance is floored at 0.
    """
    if len(scores) != len(clusters):
        raise ValueError("scores and clusters differ in length")
    return _clustered_se(scores, clusters, clt_se(scores))


def _clustered_se(
    scores: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray,
    base: float | None,
) -> float | None:
    """:func:`clustered_se` given the CLT error ``base`` of the same scores."""
    if base is None:
        return None
    n = len(scores)
    values = np.asarray(scores, dtype=float)
    center = values.mean()
    codes = _sorted_codes(clusters)
    sums = np.zeros(int(codes.max()) + 1)
    squares = np.zeros(len(sums))
    # Each cluster's sums run in sample order, as np.bincount's would (``add.at`` adds one
    # entry at a time in order, so chunks give the same bits); a chunk's deviations at a time,
    # not an array of n of them.
    for start in range(0, n, _DEVIATION_CHUNK):
        chunk = slice(start, start + _DEVIATION_CHUNK)
        deviations = values[chunk] - center
        np.add.at(sums, codes[chunk], deviations)
        deviations *= deviations
        np.add.at(squares, codes[chunk], deviations)
    cross = float(np.sum(sums * sums - squares))
    return float(math.sqrt(max(base * base + cross / (n * n), 0.0)))


def _sorted_codes(clusters: Sequence[Hashable] | np.ndarray) -> np.ndarray:
    """Each cluster's rank among the distinct ``str`` of the clusters, sorted (the codes
    ``np.unique(..., return_inverse=True)`` gives, so the per-cluster sums add up in the same
    order), without a fixed-width string array of every entry (4 bytes per character of the
    longest name, times n: 48 MB for 200,000 samples). Integer codes (see :func:`describe`)
    are made dense in their own order."""
    if _is_ranked(clusters):
        # The inverse of np.unique, from a table of the codes present (no sort of n items).
        if not len(clusters):
            return np.zeros(0, dtype=np.intp)
        dense = np.cumsum(_present(clusters)) - 1
        return dense.astype(np.min_scalar_type(max(len(dense), 1)))[clusters]
    names = [str(c) for c in clusters]
    rank = {name: code for code, name in enumerate(sorted(set(names)))}
    return np.fromiter((rank[name] for name in names), dtype=np.intp, count=len(names))


def _is_ranked(clusters: object) -> TypeGuard[np.ndarray]:
    return isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu"


def _present(codes: np.ndarray) -> np.ndarray:
    """Which of the codes ``0 .. max(codes)`` occur (``codes`` not empty)."""
    if int(codes.min()) < 0:
        raise ValueError("cluster codes must be non-negative")
    present = np.zeros(int(codes.max()) + 1, dtype=bool)
    present[codes] = True
    return present


def wilson_cc(
    successes: float | np.ndarray, n: float | np.ndarray, confidence: float = CONFIDENCE
) -> tuple[Any, Any]:
    """The continuity-corrected Wilson score interval of ``successes`` in ``n`` trials
    (Newcombe 1998, method 4): the same numbers as
    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilsoncc")`` for whole counts, which
    tests/stats check; its coverage stays at or above 95% at every rate for n = 5, 50, 500.
    ``successes`` and ``n`` may be fractional (an effective sample size, a sum of partial
    credit) and arrays (then arrays come back); the interval always holds ``successes / n``;
    a count within half a unit of 0 pins the low end at 0, within half a unit of ``n`` the
    high end at 1 (where the correction's half unit reaches the end: past it the formula's
    bound would fall back towards the estimate), so the bounds grow with the count."""
    x, size = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    if np.any(~(size > 0)) or np.any(~((x >= 0) & (x <= size))):
        raise ValueError("need 0 <= successes <= n and n > 0")
    z = z_value(confidence)
    p = x / size
    spread = 4 * p * size * (1 - p)
    below = z * np.sqrt(np.maximum(z * z - 2 - 1 / size + spread + 4 * p, 0.0))
    above = z * np.sqrt(np.maximum(z * z + 2 - 1 / size + spread - 4 * p, 0.0))
    denominator = 2 * (size + z * z)
    # Whole counts: only 0 and n are pinned. A fractional count (partial credit) between 0
    # and 1/2 (or n - 1/2 and n) would get a low (high) bound that shrinks back to the
    # estimate as the count nears the end: 4 scores of mean 0.985 had the upper bound 0.985.
    low = np.where(2 * x <= 1, 0.0, np.maximum((2 * x + z * z - 1 - below) / denominator, 0.0))
    high = np.where(
        2 * (size - x) <= 1, 1.0, np.minimum((2 * x + z * z + 1 + above) / denominator, 1.0)
    )
    # A fractional count below 1 (or above n - 1) could still move a bound past the estimate:
    # the correction assumes whole counts. The interval always holds the estimate.
    low, high = np.minimum(low, p), np.maximum(high, p)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def design_effect(se: float | None, se_clustered: float | None) -> float:
    """Kish's design effect ``SE_cl^2 / SE^2``, at least 1 (1 when either is undefined or 0):
    clustering never makes an interval narrower than the independent one."""
    if se is None or se_clustered is None or se <= 0:
        return 1.0
    return max(1.0, (se_clustered / se) ** 2)


def bounded_interval(
    center: float | None, n: int, deff: float = 1.0, confidence: float = CONFIDENCE
) -> list[float] | None:
    """The 95% interval of a mean ``center`` of ``n`` scores in [0, 1]: :func:`wilson_cc` of
    ``n_eff * center`` in ``n_eff = n / deff`` (``None`` over no samples). Always within
    [0, 1]; see the module docstring for why it holds for partial-credit scores."""
    if center is None or n <= 0:
        return None
    size = n / deff
    low, high = wilson_cc(min(max(center, 0.0), 1.0) * size, size, confidence)
    return [low, high]


def mean_interval(
    scores: Sequence[float] | np.ndarray, center: float | None, deff: float = 1.0
) -> list[float] | None:
    """The 95% interval of the mean ``center`` of ``scores``: :func:`bounded_interval` when
    every score is in [0, 1]; else (a VisualToolBench ARS under negative rubric weights, which
    the bounded interval would clamp into [0, 1], leaving the mean outside its own interval)
    ``center`` +/- z CLT standard errors, widened by ``sqrt(deff)``."""
    values = np.asarray(scores, dtype=float)
    if center is None or not len(values) or (values.min() >= 0 and values.max() <= 1):
        return bounded_interval(center, len(values), deff)
    se = clt_se(values)
    if se is None:
        return None
    half = z_value() * se * math.sqrt(deff)
    return [center - half, center + half]


@dataclass(frozen=True)
class Bootstrap:
    """A paired-bootstrap result: the observed mean difference and its percentile interval."""

    difference: float
    low: float
    high: float
    resamples: int
    seed: int


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    strata: Sequence[Hashable] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Bootstrap | None:
    """Percentile interval of ``mean(b) - mean(a)`` over paired resamples of sample ids.

    Each resample draws, inside every stratum, as many ids as it holds, with replacement, and
    takes the mean difference over all drawn ids. For a stratum with few distinct differences
    (0/1 scores) this is computed as a draw of how often each distinct value occurs (a
    multinomial over the values' frequencies: the same distribution, much faster); otherwise
    the ids are drawn from the sorted differences. Either way the result does not depend on
    the order of the samples. The generator is ``numpy.random.default_rng(seed)``, so a seed
    reproduces every digit.
    ``None`` over no samples.
    """
    if len(a) != len(b):
        raise ValueError("a and b differ in length")
    n = len(a)
    if n == 0:
        return None
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"resamples must be between 1 and {MAX_RESAMPLES}")
    if seed < 0:
        raise ValueError("the seed must be 0 or more")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    labels = ["" for _ in range(n)] if strata is None else [str(s) for s in strata]
    if len(labels) != n:
        raise ValueError("strata and scores differ in length")
    rng = np.random.default_rng(seed)
    totals = np.zeros(resamples)
    order: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        order.setdefault(label, []).append(index)
    for label in sorted(order):
        stratum = np.sort(diffs[order[label]])
        values, counts = np.unique(stratum, return_counts=True)
        size = len(stratum)
        if len(values) == 1:
            totals += values[0] * size
        elif len(values) * _MULTINOMIAL_RATIO <= size:
            _add_multinomial(totals, rng, values, counts, size)
        else:
            _add_drawn_ids(totals, rng, stratum)
    means = totals / n
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Bootstrap(float(diffs.mean()), float(low), float(high), resamples, seed)


def _add_multinomial(
    totals: np.ndarray, rng: np.random.Generator, values: np.ndarray, counts: np.ndarray, size: int
) -> None:
    """Few distinct values: draw how often each occurs (one multinomial per resample)."""
    step = max(1, _CHUNK_CELLS // len(values))
    for start in range(0, len(totals), step):
        stop = min(start + step, len(totals))
        totals[start:stop] += rng.multinomial(size, counts / size, size=stop - start) @ values


def _add_drawn_ids(totals: np.ndarray, rng: np.random.Generator, stratum: np.ndarray) -> None:
    """Many distinct values: draw the ids themselves (``stratum`` sorted, so the result does
    not depend on the order of the samples)."""
    size = len(stratum)
    step = max(1, _CHUNK_CELLS // size)
    for start in range(0, len(totals), step):
        stop = min(start + step, len(totals))
        picks = rng.integers(0, size, size=(stop - start, size))
        totals[start:stop] += stratum[picks].sum(axis=1)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``
    (``scipy.stats.binomtest(b, b + c, 0.5)``; 1.0 when there is no discordant pair)."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest  # heavy; only `compare` needs it

    return float(binomtest(b, b + c, 0.5).pvalue)


def fisher_exact(right_a: int, n_a: int, right_b: int, n_b: int) -> float:
    """Two-sided exact p-value that two independent samples share one rate of 0/1 outcomes
    (Fisher's exact test, ``scipy.stats.fisher_exact`` on the 2 x 2 table)."""
    if not (0 <= right_a <= n_a and 0 <= right_b <= n_b):
        raise ValueError("counts must lie within their sample sizes")
    from scipy.stats import fisher_exact as fisher  # heavy; only the leaderboard needs it

    table = [[right_a, n_a - right_a], [right_b, n_b - right_b]]
    return float(fisher(table, alternative="two-sided").pvalue)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the defined p-values (``None`` stays ``None``)."""
    defined = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(defined)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, index) in enumerate(sorted(defined)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def mdd(
    variance: float | None, n: int, *, power: float = POWER, confidence: float = CONFIDENCE
) -> float | None:
    """Minimum detectable paired difference: ``(z_{1-alpha/2} + z_power) * sqrt(variance / n)``,
    ``variance`` being the per-sample variance of the paired difference (``None`` for n = 0)."""
    if variance is None or n <= 0:
        return None
    factor = z_value(confidence) + normal_quantile(power)
    return float(factor * math.sqrt(max(variance, 0.0) / n))


def mdd_single(accuracy: float | None, n: int, **kwargs: float) -> float | None:
    """The minimum detectable difference a single report implies: the paired-difference variance
    taken as ``2 p (1 - p)`` (a second run with the same accuracy and per-sample outcomes
    uncorrelated with this one's, an upper bound for correlated runs). ``p`` is kept inside
    ``[1/(2n), 1 - 1/(2n)]`` so an accuracy of 0 or 1 does not claim that any difference is
    detectable; ``None`` for n < 2, like the standard error."""
    if accuracy is None or n < 2:
        return None
    edge = 1 / (2 * n)
    p = min(max(accuracy, edge), 1 - edge)
    return mdd(2 * p * (1 - p), n, **kwargs)


def mdd_discordance(b: int, c: int, n: int, **kwargs: float) -> float | None:
    """The minimum detectable difference from an observed comparison of 0/1 outcomes: the
    paired-difference variance under no difference is the discordance rate ``(b + c) / n``
    (:func:`mdd_paired` of the outcomes)."""
    if n <= 0:
        return None
    return _mdd_from_mean_square((b + c) / n, n, **kwargs)


def mdd_paired(a: Sequence[float], b: Sequence[float], **kwargs: float) -> float | None:
    """The minimum detectable difference from paired per-sample scores: the variance of the
    difference under no difference is the mean squared difference (for 0/1 outcomes, the
    discordance rate). With no discordant pair at all it is taken as half a pair,
    ``1 / (2n)``, so a comparison of identical runs does not claim that any difference is
    detectable."""
    n = len(a)
    if n != len(b):
        raise ValueError("a and b differ in length")
    if n == 0:
        return None
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return _mdd_from_mean_square(float(np.mean(diffs * diffs)), n, **kwargs)


def _mdd_from_mean_square(mean_square: float, n: int, **kwargs: float) -> float | None:
    return mdd(mean_square if mean_square > 0 else 1 / (2 * n), n, **kwargs)


def describe(
    scores: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
) -> dict[str, Any]:
    """One group's error bars: ``n``, ``mean`` (left-to-right sum, so it equals the report's
    own mean bit for bit), ``se``, ``ci95`` (:func:`bounded_interval`), ``mdd80``; with
    ``clusters`` also ``clusters`` (how many), ``se_clustered``, ``design_effect`` and
    ``ci95_clustered`` (the interval at ``n / design_effect``). Undefined numbers are ``None``.
    ``clusters`` are names, or an integer array of codes that sort as the names do (a large
    run's columns, without one string per sample)."""
    center = float_sum(float(s) for s in scores) / len(scores) if len(scores) else None
    se = clt_se(scores)
    entry: dict[str, Any] = {
        "n": len(scores),
        "mean": center,
        "se": se,
        "ci95": mean_interval(scores, center),
        "mdd80": mdd_single(center, len(scores)),
    }
    if clusters is not None:
        clustered = None
        if len(scores):
            if len(scores) != len(clusters):
                raise ValueError("scores and clusters differ in length")
            clustered = _clustered_se(scores, clusters, se)  # se: the same CLT error
        if _is_ranked(clusters):
            entry["clusters"] = int(np.count_nonzero(_present(clusters))) if len(clusters) else 0
        else:
            entry["clusters"] = len({str(c) for c in clusters})
        deff = design_effect(se, clustered)
        entry["se_clustered"] = clustered
        entry["design_effect"] = deff if clustered is not None else None
        entry["ci95_clustered"] = (
            mean_interval(scores, center, deff) if clustered is not None else None
        )
    return entry
