"""Evaluation noise against seed noise (docs/results.md's noise table): for a cell's runs, how
much of the spread of their final returns the evaluations' own noise explains, and how many
episodes an evaluation needs to resolve what is left (`statistics.seed_spread`).
"""

import numpy as np

from rlkit.rl.analysis import statistics
from rlkit.rl.analysis.run_archive import (archived_runs, asked_episodes, counted_runs, evaluation_spread, evaluations,
                                          long_evaluation)
from rlkit.rl.analysis.tables import markdown_table


def noise_table(archive_dir, cells):
    """Evaluation noise against seed noise, for those of `cells` ((game, run prefix, label) in
    table order) that have two counted runs or more: the final evaluations' episodes, mean SE and
    spread over seeds, the same for the long evaluations where every run has one, the spread of
    the seeds' true returns (the variance over seeds less the evaluations' mean squared SE: what
    evaluation noise leaves; from the long evaluations where there are), how many episodes an
    evaluation needs for its SE to be half of that spread, and whether the evaluation the results
    table uses has them."""
    rows = []
    for game, prefix, label in cells:
        counted, _ = counted_runs(archived_runs(archive_dir, game, prefix))
        if len(counted) < 2:
            continue
        finals = [evaluations(run)[-1][1] for run in counted]
        spreads = {run: evaluation_spread(run) for run in counted}
        recorded = [spread for spread in spreads.values() if spread]
        unrecorded = [run for run, spread in spreads.items() if spread is None]
        if recorded:  # older runs among them (32 episodes) count in whether it has the episodes
            others = asked_episodes(unrecorded)
            final = noise_columns(finals, recorded, others)
            if unrecorded:
                final[0] += f" ({len(recorded)} of {len(counted)} runs; the others {episode_range(others)})"
        else:
            final = [f"{episode_range(asked_episodes(unrecorded))} (spread not recorded)",
                     f"— / {np.std(finals, ddof=1):.3f}", "—", "—", "—"]
        longs = [long_evaluation(run) for run in counted]
        long = noise_columns([m for m, _, _ in longs], [(s, n) for _, s, n in longs]) if None not in longs else None
        table = long or final  # the evaluation the results table uses: the long one where every run has one
        rows.append([game, label, len(counted), *final[:2], *(long[:2] if long else ["—", "—"]), *table[2:]])
    if not rows:
        return None
    return markdown_table(["game", "method", "seeds", "final evaluation: episodes", "SE / seed std",
                           "long evaluation: episodes", "SE / seed std", "seeds' own spread (estimated)",
                           "episodes for an SE of half of it", "the table's evaluation has them"], rows)


def noise_columns(means, recorded, unrecorded_episodes=()):
    """['episodes', 'SE / seed std', "seeds' own spread", 'episodes for an SE of half of it',
    'whether these evaluations have them'] of evaluations with returns `means` over seeds and
    (spread over episodes, episodes) for those that `recorded` them (one at least), the others
    having played `unrecorded_episodes`: `statistics.seed_spread`, where no spread beyond
    evaluation noise leaves nothing to resolve."""
    spreads, episodes = (np.array(column, dtype=float) for column in zip(*recorded))
    own, p_value, needed = statistics.seed_spread(means, spreads, episodes)
    columns = [episode_range(episodes), f"{np.mean(spreads / np.sqrt(episodes)):.3f} / {np.std(means, ddof=1):.3f}"]
    p_text = f"p {p_value:.2f}" if p_value >= 0.01 else "p < 0.01"
    if needed is None:
        return columns + [f"{own:.3f} (within evaluation noise: {p_text})", "—",
                          "— (nothing to resolve; its SE counts against the gaps to other methods)"]
    short = sum(n < needed for n in [*episodes, *unrecorded_episodes])
    has_them = "yes" if not short else "no" if short == len(means) else f"no ({short} of {len(means)} runs short)"
    return columns + [f"{own:.3f} ({p_text})", f"{needed:,}", has_them]


def episode_range(episodes):
    """'128', or '32-128' where the runs played different numbers of episodes."""
    low, high = int(min(episodes)), int(max(episodes))
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"
