"""Results statistics as Agarwal et al. 2021 ("Deep RL at the Edge of the Statistical Precipice")
ask for, computed with `rliable` (`pip install -e ".[results]"`): per game the mean final return
with a 95% bootstrap confidence interval over runs; across games the interquartile mean (IQM)
and optimality gap of normalised scores with stratified-bootstrap CIs, the probability that one
method improves on another, a performance profile and an interval plot.

Scores across games are {method: [runs, games] array of final returns} (rliable's score
matrices: a method with more runs on some games than others gives its first `min` runs of each);
normalised, random = 0 and a reference method = 1 on every game.
"""

import contextlib
import warnings

import numpy as np
from absl import logging

from rlkit.errors import UserError

CONFIDENCE = 0.95


@contextlib.contextmanager
def seeded_global_numpy(seed):
    """numpy's global RNG seeded inside the block, and the caller's state put back after.
    rliable's stratified bootstrap (its interval estimates and its performance profiles' CIs)
    draws its resamples with np.random.choice, not with the random_state it is given:
    unseeded, the same scores gave other intervals in every process."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


@contextlib.contextmanager
def quiet_rliable():
    """rliable's estimates without its noise: it logs "Calculating estimates for ..." at INFO for
    every method and statistic, and the arch bootstrap under it warns on each call that its
    random_state is deprecated (146 lines around minatar_results' tables). Warnings and errors
    still show."""
    verbosity = logging.get_verbosity()
    logging.set_verbosity(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)
            yield
    finally:
        logging.set_verbosity(verbosity)


def each_method_afresh(scores, seed, estimate):
    """`estimate` ({method: scores} -> two {method: ...} dicts, as rliable's entry points return)
    called one method at a time, each from the seed afresh (see seeded_global_numpy): rliable draws
    the methods' resamples one after another from one RNG, so a method's interval changed with the
    methods estimated before it (a row added to the table moved the CIs of the rows after it)."""
    firsts, seconds = {}, {}
    for method, method_scores in scores.items():
        with seeded_global_numpy(seed), quiet_rliable():
            first, second = estimate({method: method_scores})
        firsts.update(first)
        seconds.update(second)
    return firsts, seconds


def interval_estimates(scores, statistic, seed, reps):
    """rliable's get_interval_estimates, seeded, each method from the seed afresh."""
    from rliable import library

    return each_method_afresh(scores, seed, lambda one: library.get_interval_estimates(
        one, statistic, reps=reps, random_state=np.random.RandomState(seed)))


def require_rliable():
    try:
        from rliable import library, metrics, plot_utils  # noqa: F401
    except ImportError:
        raise UserError('the results statistics need rliable and matplotlib: pip install -e ".[results]"') from None


def mean_interval(values, seed=0, reps=10_000):
    """(mean, low, high): the mean of one method's final returns on one game over its runs, with a
    95% percentile-bootstrap interval over runs ((mean, mean, mean) for a single run)."""
    require_rliable()
    values = np.asarray(values, np.float64)
    if len(values) < 2:
        return float(values.mean()), float(values.mean()), float(values.mean())
    points, intervals = interval_estimates({"m": values[:, None]}, lambda x: np.array([x.mean()]), seed, reps)
    return float(points["m"][0]), float(intervals["m"][0, 0]), float(intervals["m"][1, 0])


def seed_spread(means, spreads, episodes):
    """Seed noise against evaluation noise, for seeds whose evaluations returned `means`, each over
    `episodes` episodes whose returns spread by `spreads` (std): (the seeds' own spread, the
    p-value of a chi-square test that they have none, the episodes an evaluation needs for its SE
    to be half of that spread, or None where the test does not show one at p < 0.05). The own
    spread is what evaluation noise leaves of the variance over seeds: that variance less the
    evaluations' mean squared SE (at least 0)."""
    import scipy.stats

    means, spreads, episodes = (np.asarray(a, dtype=float) for a in (means, spreads, episodes))
    variance, squared_error = np.var(means, ddof=1), np.mean(spreads ** 2 / episodes)
    own = float(np.sqrt(max(0.0, variance - squared_error)))
    p_value = float(scipy.stats.chi2.sf((len(means) - 1) * variance / squared_error, len(means) - 1))
    needed = int(np.ceil((2 * np.mean(spreads) / own) ** 2)) if p_value < 0.05 and own > 0 else None
    return own, p_value, needed


def normalised(scores, random_means, reference_means):
    """Scores [runs, games] as (score - random) / (reference - random), per game."""
    return (np.asarray(scores) - random_means[None]) / (reference_means - random_means)[None]


def aggregates(normalised_scores, seed=0, reps=10_000):
    """{method: {"IQM": (point, low, high), "optimality gap": (...)}} with stratified-bootstrap
    95% CIs over runs, from {method: normalised scores [runs, games]} (every game run equally
    often by a method: rliable's score matrices)."""
    require_rliable()
    from rliable import metrics

    def both(x):
        return np.array([metrics.aggregate_iqm(x), metrics.aggregate_optimality_gap(x)])
    points, intervals = interval_estimates(normalised_scores, both, seed, reps)
    return {method: {name: (float(points[method][i]), float(intervals[method][0, i]), float(intervals[method][1, i]))
                     for i, name in enumerate(("IQM", "optimality gap"))} for method in normalised_scores}


def probability_of_improvement(scores_x, scores_y):
    """rliable's metrics.probability_of_improvement, counted over pairs: P(a run of X beats a run
    of Y) on each game, ties counting half (the Mann-Whitney U statistic over n_x n_y), averaged
    over games, from [runs, games] matrices. The same numbers; rliable calls scipy's mannwhitneyu
    per game and resample, which took 87% of the across-games statistics' time."""
    x, y = np.asarray(scores_x)[:, None, :], np.asarray(scores_y)[None, :, :]
    return np.mean(np.mean(x > y, axis=(0, 1)) + 0.5 * np.mean(x == y, axis=(0, 1)))


def improvement_probabilities(normalised_scores, baseline, seed=0, reps=2000):
    """{method: (P(method > baseline), low, high)}: the probability that a run of the method
    beats a run of `baseline` on a random game, with a stratified-bootstrap 95% CI."""
    require_rliable()
    pairs = {method: (scores, normalised_scores[baseline]) for method, scores in normalised_scores.items()
             if method != baseline}
    if not pairs:
        return {}
    points, intervals = interval_estimates(pairs, probability_of_improvement, seed, reps)
    return {method: (float(np.ravel(points[method])[0]), *(float(v) for v in np.ravel(intervals[method])[:2]))
            for method in pairs}


def draw(normalised_scores, aggregate, path_profile, path_intervals, reference_name, seed=0, reps=2000):
    """The performance profile (share of runs above each normalised score, with CIs) and the
    interval plot of IQM and optimality gap, as PNGs."""
    require_rliable()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import library, plot_utils

    taus = np.linspace(-0.5, 1.5, 81)
    profiles, profile_cis = each_method_afresh(
        normalised_scores, seed, lambda one: library.create_performance_profile(one, taus, reps=reps))
    figure, axis = plt.subplots(figsize=(7, 4))
    plot_utils.plot_performance_profiles(profiles, taus, performance_profile_cis=profile_cis, ax=axis,
                                         xlabel=f"normalised score (random 0, {reference_name} 1)")
    axis.legend(list(profiles), loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path_profile, dpi=100)
    plt.close(figure)
    methods = list(aggregate)
    points = {m: np.array([aggregate[m]["IQM"][0], aggregate[m]["optimality gap"][0]]) for m in methods}
    intervals = {m: np.array([[aggregate[m]["IQM"][1], aggregate[m]["optimality gap"][1]],
                              [aggregate[m]["IQM"][2], aggregate[m]["optimality gap"][2]]]) for m in methods}
    figure, _ = plot_utils.plot_interval_estimates(points, intervals, ["IQM", "Optimality gap"], algorithms=methods,
                                                   xlabel=f"normalised score (random 0, {reference_name} 1)")
    figure.savefig(path_intervals, dpi=100, bbox_inches="tight")
    plt.close(figure)
