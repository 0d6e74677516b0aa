"""usl_space.stats (and crm_core.agreement's Kendall tau) against hand-computed cases and seeded simulations."""

from __future__ import annotations

import numpy as np
import pytest
from crm_core.agreement import kendall_tau
from scipy.stats import kendalltau
from usl_space.stats import (
    bootstrap_win_rates,
    intervals,
    length_controlled_win_rates,
    rank_upper_bounds,
    win_rates,
)

NAN = np.nan


def test_win_rates_count_ties_as_half_and_skip_missing():
    outcomes = np.array([[1, 0, 0.5], [1, 0.5, NAN], [0, 0.5, 1], [1, 1, NAN]])
    # model 0: 3 wins of 4 = .75; model 1: 0 + .5 + .5 + 1 = 2/4; model 2: (.5 + 1) / 2 answered
    assert win_rates(outcomes).tolist() == [0.75, 0.5, 0.75]
    assert np.isnan(win_rates(np.full((3, 1), NAN))[0])


def test_bootstrap_is_paired_and_seeded():
    rng = np.random.default_rng(1)
    outcomes = rng.integers(0, 2, size=(50, 3)).astype(float)
    outcomes[:, 2] = outcomes[:, 0]  # a model identical to model 0 on every query
    boot = bootstrap_win_rates(outcomes, 200, seed=5)
    assert boot.shape == (200, 3)
    assert np.array_equal(boot[:, 0], boot[:, 2])  # the same resamples for every model
    assert np.array_equal(boot, bootstrap_win_rates(outcomes, 200, seed=5))
    assert not np.array_equal(boot, bootstrap_win_rates(outcomes, 200, seed=6))


def test_bootstrap_interval_covers_the_true_rate_at_about_the_nominal_rate():
    rng = np.random.default_rng(0)
    true_rates = np.array([0.2, 0.5, 0.7])
    trials, covered = 300, np.zeros(3)
    for t in range(trials):
        outcomes = (rng.random((120, 3)) < true_rates).astype(float)
        result = intervals(outcomes, samples=400, seed=t)
        covered += (result.ci_low <= true_rates) & (true_rates <= result.ci_high)
    coverage = covered / trials
    assert np.all((coverage > 0.90) & (coverage < 0.99)), coverage  # nominal 0.95; 300 trials: +-0.025 sd


def test_rank_upper_bound_on_a_constructed_example():
    rng = np.random.default_rng(3)
    n = 400
    strong = (rng.random(n) < 0.9).astype(float)
    strong_twin = strong.copy()  # as good as `strong`, so neither is statistically better than the other
    middle = (rng.random(n) < 0.5).astype(float)
    weak = (rng.random(n) < 0.1).astype(float)
    result = intervals(np.stack([strong, strong_twin, middle, weak], axis=1), samples=500)
    assert result.rank_ub.tolist() == [1, 1, 3, 4]
    assert result.n.tolist() == [n] * 4


def test_rank_upper_bound_needs_confidence_not_just_a_higher_mean():
    boot = np.array([[0.50, 0.49], [0.40, 0.55], [0.60, 0.45]] * 10)  # model 0 higher on average, not always
    assert rank_upper_bounds(boot).tolist() == [1, 1]
    always = np.array([[0.6, 0.4], [0.7, 0.5], [0.8, 0.6]] * 10)
    assert rank_upper_bounds(always).tolist() == [1, 2]


def test_no_bootstrap_draws_give_win_rates_and_no_false_certainty():
    """samples=0 (engine.rank(bootstrap=0), a caller that wants only the order): win rates and exact intervals,
    and Rank (UB) 1 for every model, not an IndexError from an empty quantile."""
    outcomes = np.array([[1, 0, 0.5], [1, 0, 1], [1, 0.5, 0], [1, 0, 1]] * 10, dtype=float)
    result = intervals(outcomes, samples=0)
    assert result.win_rate.tolist() == [1.0, 0.125, 0.625]
    assert result.rank_ub.tolist() == [1, 1, 1]
    assert np.all(result.ci_low <= result.win_rate) and np.all(result.win_rate <= result.ci_high)


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_b_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, 30).astype(float), rng.integers(0, 6, 30).astype(float)
    assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_tau_extremes():
    x = np.arange(10.0)
    assert kendall_tau(x, x) == 1.0 and kendall_tau(x, -x) == -1.0
    assert np.isnan(kendall_tau(x, np.ones(10)))
    with pytest.raises(ValueError, match="differ in length"):
        kendall_tau(x, x[:5])


def lc_of_one(preference: np.ndarray, diff: np.ndarray) -> float:
    """One model's length-controlled win rate, every query answered."""
    return float(length_controlled_win_rates(preference[:, None], diff[:, None], np.ones((len(diff), 1), bool))[0])


def test_length_control_removes_a_pure_length_advantage():
    rng = np.random.default_rng(0)
    diff = rng.normal(150, 200, 2000)  # the model writes longer answers than the baseline, most of the time
    preference = 1 / (1 + np.exp(-3 * np.tanh(diff / np.std(diff))))  # and is preferred for length alone
    assert preference.mean() > 0.7
    assert lc_of_one(preference, diff) == pytest.approx(0.5, abs=0.03)


def test_length_control_keeps_a_real_advantage():
    rng = np.random.default_rng(1)
    diff = rng.normal(0, 200, 2000)  # lengths like the baseline's, yet preferred
    preference = 1 / (1 + np.exp(-(1.0 + 0.2 * np.tanh(diff / np.std(diff)))))
    assert lc_of_one(preference, diff) == pytest.approx(1 / (1 + np.exp(-1.0)), abs=0.03)


def test_length_control_reads_each_model_on_its_own_answers():
    """A model's column depends only on its own answered queries: other models' preferences and its unanswered
    cells change nothing; a model without answers is NaN."""
    rng = np.random.default_rng(2)
    diff = rng.normal(50, 200, (300, 6))
    preference = 1 / (1 + np.exp(-(rng.normal(0, 1, 6) + 2 * np.tanh(diff / 200) + rng.normal(0, 0.5, diff.shape))))
    answered = rng.random(diff.shape) > 0.1
    answered[:, 5] = False  # a model with no answers
    together = length_controlled_win_rates(preference, diff, answered)
    assert np.isnan(together[5]) and np.all((together[:5] > 0) & (together[:5] < 1))
    changed = preference.copy()
    changed[:, 1] = 1 - changed[:, 1]  # another model's verdicts
    changed[~answered[:, 0], 0] = rng.random((~answered[:, 0]).sum())  # model 0's cells without an answer
    again = length_controlled_win_rates(changed, diff, answered)
    assert again[0] == pytest.approx(together[0], abs=1e-9) and again[2:5] == pytest.approx(together[2:5], abs=1e-9)
    assert again[1] < 0.5 < together[1] or again[1] > 0.5 > together[1]


@pytest.mark.parametrize("n", [3, 10, 30, 100])
def test_intervals_keep_their_coverage_at_any_number_of_queries(n):
    """Many boards of n queries from known win probabilities: the 95% interval must hold the truth in about 95%
    of them (at least 93%, as the simulation's own noise allows), for hard wins and for soft preferences."""
    from usl_space.stats import win_rate_intervals

    rng = np.random.default_rng(n)
    truths = np.array([0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95])
    reps = 400  # boards per truth, side by side as "models" of one matrix
    for soft in (False, True):
        truth = np.repeat(truths, reps)
        if soft:  # P(preferred) per query, scattered around the model's true mean
            outcomes = rng.beta(4 * truth, 4 * (1 - truth), size=(n, len(truth)))
        else:
            outcomes = (rng.random((n, len(truth))) < truth).astype(float)
        _, low, high, _ = win_rate_intervals(outcomes, samples=200, seed=1)
        covered = (low <= truth) & (truth <= high)
        for t in truths:
            assert covered[truth == t].mean() >= 0.93, (n, soft, t, covered[truth == t].mean())


def test_few_queries_give_no_false_certainty():
    from usl_space.stats import intervals

    stats = intervals(np.ones((3, 2)), samples=200)  # 3 wins of 3: the bootstrap alone says "100 - 100"
    assert stats.ci_high[0] == 1.0 and stats.ci_low[0] < 0.4


def test_quantile_is_nanquantile_with_or_without_missing_draws():
    """stats.quantile takes np.quantile's fast path only where nothing is missing; the answer is nanquantile's."""
    from usl_space.stats import quantile

    draws = np.random.default_rng(0).normal(size=(300, 4, 4))
    assert np.allclose(quantile(draws, 0.025), np.nanquantile(draws, 0.025, axis=0))
    draws[5, 1, 2] = draws[7, 0, 0] = np.nan  # a model without answers in a resample
    got, want = quantile(draws, [0.025, 0.975]), np.nanquantile(draws, [0.025, 0.975], axis=0)
    assert np.allclose(got, want) and not np.isnan(got).any()
