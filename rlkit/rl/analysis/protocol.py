"""The experiment's protocol as scripts/minatar_experiment.sh keeps it (the one place it is kept:
which seeds of which method each game asks for), and how far the archive is from it.

`protocol_seeds` asks the script itself: its dry run (DRY_RUN=1) prints every command it would
run, one per seed, naming the run directory RUNS/GAME/PREFIX_sSEED; an archive and pending dir that
do not exist let nothing be skipped. `status_table` counts each reported cell's finished archived
runs (and those waiting in pending) against those seeds, for docs/results.md's Status.
"""

import collections
import os
import re
import subprocess
import tempfile

from rlkit.rl.analysis.cells import BEST_SIMPLE, GAMES, METHODS, best_simple_runs
from rlkit.rl.analysis.run_archive import (archived_runs, asked_episodes, code_versions, evaluation_spread,
                                          finished_records, long_evaluation, seed_of)
from rlkit.rl.analysis.tables import markdown_table

EXPERIMENT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "minatar_experiment.sh")
# The script's groups (its ONLY values) that hold the reported cells; with ONLY unset it runs
# random, PPO at 100K and 1M, DQN at 100K and 1M, each game's SimPLe set and DreamerV2.
REPORTED_GROUPS = ("", "simple_combined", "dreamer_v3", "dreamer_1m", "dreamer_v3_1m")
RUN_DIRECTORY = re.compile(r"--(?:output_dir|eval_metrics_dir)=\S*/(\w+)/(\w+)_s(\d+)$")


def protocol_seeds(script=EXPERIMENT, groups=REPORTED_GROUPS):
    """{(game, run prefix): the seeds the script runs}, from its dry run of each of `groups` on
    every game. Only PATH passes from this process's environment: a SEEDS_METHOD_GAME, ONLY or
    SIMPLE set here would change what the script runs, not its protocol."""
    seeds = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as nowhere:
        for group in groups:
            env = dict(PATH=os.environ.get("PATH", ""), DRY_RUN="1", ONLY=group,
                       ARCHIVE=os.path.join(nowhere, "archive", "runs"))
            commands = subprocess.run(["bash", script, os.path.join(nowhere, "runs")], env=env, check=True,
                                      capture_output=True, text=True).stdout
            for command in commands.splitlines():
                named = RUN_DIRECTORY.search(command)
                if named:
                    game, prefix, seed = named.groups()
                    seeds[game, prefix].append(int(seed))
    return dict(seeds)


def final_episodes(run):
    """The episodes a finished run's last evaluation played: as recorded, or as its set asked for
    runs made before they were recorded."""
    spread = evaluation_spread(run)
    return spread[1] if spread else asked_episodes([run])[0]


def most_first(values):
    """'128' where all are alike, else the commonest value, then each other with how many of all
    have it: '32, 128 on 2 of 5'."""
    counted = collections.Counter(values).most_common()
    others = [f"{value:,} on {n} of {len(values)}" for value, n in counted[1:]]
    return ", ".join([f"{counted[0][0]:,}", *others])


def by_game(described):
    """{game: what} as 'the commonest what (game: its own what; ...)'."""
    commonest = collections.Counter(described.values()).most_common(1)[0][0]
    others = [f"{game}: {what}" for game, what in described.items() if what != commonest]
    return commonest + (f" ({'; '.join(others)})" if others else "")


def episodes_cell(runs_by_game):
    """What a row's finished runs were evaluated on ({game: runs}): their last evaluations'
    episodes, then the games whose runs were evaluated again, on how many, where only some of a
    game's runs were saying how many of them."""
    if not runs_by_game:
        return "—"
    during = by_game({game: most_first([final_episodes(run) for run in runs]) for game, runs in runs_by_game.items()})
    again = collections.defaultdict(list)  # episodes: the games evaluated again on them
    for game, runs in runs_by_game.items():
        long = [long_evaluation(run)[2] for run in runs if long_evaluation(run)]
        for episodes in sorted(set(long)):
            share = long.count(episodes)
            again[episodes].append(game + (f" ({share} of {len(runs)} runs)" if share < len(runs) else ""))
    return during + "".join(f"; again on {episodes:,}: {', '.join(games)}" for episodes, games in sorted(again.items()))


def status_table(archive_dir, pending_dir, rows, games, protocol):
    """Per reported row (label, {game: run prefix}) and game: 'N of M', the finished archived runs
    among the M seeds the protocol asks (`protocol_seeds`), '+K pending' where finished reruns wait
    in pending; '—' where the protocol runs none. Then the episodes their evaluations played."""
    table = []
    for label, prefixes in rows:
        cells, counted = [], {}
        for game in games:
            asked = protocol.get((game, prefixes[game]), [])
            if not asked:
                cells.append("—")
                continue
            runs, waiting = ([run for run in finished_records(archived_runs(records, game, prefixes[game]))
                              if seed_of(run) in asked] for records in (archive_dir, pending_dir))
            cells.append(f"{len(runs)} of {len(asked)}" + (f" (+{len(waiting)} pending)" if waiting else ""))
            if runs:
                counted[game] = runs
        table.append([label, *cells, one_commit_cell(counted), episodes_cell(counted)])
    return markdown_table(["method", *games, "games made by one commit", "final evaluation (episodes)"], table)


def one_commit_cell(runs_by_game):
    """'N of M': of the M games a row has runs on ({game: runs}), the N whose runs one commit made
    (`code_versions`: neither mixed nor made before runs recorded it), naming the others."""
    others = [game for game, runs in runs_by_game.items()
              if code_versions(runs).startswith(("mixed", "not recorded"))]
    named = f" (not: {', '.join(others)})" if others else ""
    return f"{len(runs_by_game) - len(others)} of {len(runs_by_game)}{named}" if runs_by_game else "—"


def status_section(archive_dir, pending_dir, protocol):
    """docs/results.md's Status: `status_table` of the reported rows, each game's SimPLe set among them."""
    labels = dict(METHODS)
    order = ("random", "ppo_100k", "ppo_1m", None, "simple_combined_100k", "dreamer_100k", "dreamer_1m",
             "dreamer_v3_100k", "dreamer_v3_1m", "dqn_100k", "dqn_1m")  # None: each game's SimPLe set
    rows = [(labels[prefix], {game: prefix for game in GAMES}) if prefix else (BEST_SIMPLE, best_simple_runs())
            for prefix in order]
    return status_table(archive_dir, pending_dir, rows, GAMES, protocol)
