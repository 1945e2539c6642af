"""`lab --mode=benchmark`: one set on many games and seeds, as Ray tasks, and its results table.

    python -m rlkit.rl.lab --mode=benchmark --hparams_set=rlmb_base_stochastic_discrete \
        --games=atari100k --seeds=3 --output_dir=DIR [--max_concurrent=8] [--ray_address=HEAD:6379]

Each (game, seed) is a normal rlkit run (with the command's --gin_files and --gin_bindings) in
DIR/runs/<game>/seed_<S> (resumable by itself with
the command in its command.txt), trained by a Ray task. As runs end, and at the end:

    DIR/benchmark.md, benchmark.json   per game, the final evaluation return's mean ± std over
                                        seeds (each seed's too); for Atari games the
                                        human-normalized score, (score - random) / (human - random),
                                        with its mean and median over the games

Rerunning the same command resumes: finished runs are only read again, the others resume.
"""

import json
import os

import numpy as np
from absl import logging

from rlkit import run_lock
from rlkit.data_generators.make_env import check_game
from rlkit.errors import UserError, set_run_in_progress
from rlkit.fileio import atomic_write_text
from rlkit.hparams import create_hparams
from rlkit.rl.experiments import runs
from rlkit.rl.loops.workers import import_ray, init_ray

# The 26 games of the Atari 100K benchmark (Kaiser et al. 2019, SimPLe), as rlkit names them.
ATARI_100K = ("alien", "amidar", "assault", "asterix", "bank_heist", "battle_zone", "boxing", "breakout",
              "chopper_command", "crazy_climber", "demon_attack", "freeway", "frostbite", "gopher", "hero",
              "jamesbond", "kangaroo", "krull", "kung_fu_master", "ms_pacman", "pong", "private_eye", "qbert",
              "road_runner", "seaquest", "up_n_down")
# (random, human) scores of Mnih et al. 2015 (Nature DQN), the reference of human-normalized scores.
RANDOM_AND_HUMAN = {
    "alien": (227.8, 7127.7), "amidar": (5.8, 1719.5), "assault": (222.4, 742.0), "asterix": (210.0, 8503.3),
    "bank_heist": (14.2, 753.1), "battle_zone": (2360.0, 37187.5), "boxing": (0.1, 12.1), "breakout": (1.7, 30.5),
    "chopper_command": (811.0, 7387.8), "crazy_climber": (10780.5, 35829.4), "demon_attack": (152.1, 1971.0),
    "freeway": (0.0, 29.6), "frostbite": (65.2, 4334.7), "gopher": (257.6, 2412.5), "hero": (1027.0, 30826.4),
    "jamesbond": (29.0, 302.8), "kangaroo": (52.0, 3035.0), "krull": (1598.0, 2665.5),
    "kung_fu_master": (258.5, 22736.3), "ms_pacman": (307.3, 6951.6), "pong": (-20.7, 14.6),
    "private_eye": (24.9, 69571.3), "qbert": (163.9, 13455.0), "road_runner": (11.5, 7845.0),
    "seaquest": (68.4, 42054.7), "up_n_down": (533.4, 11693.2),
}


def parse_games(text):
    """The game list of --games: names separated by commas, `atari100k` for its 26 games."""
    games = []
    for name in (part.strip() for part in (text or "").split(",")):
        if name:
            games += list(ATARI_100K) if name == "atari100k" else [name]
    if not games:
        raise UserError("--mode=benchmark needs --games, e.g. --games=pong,breakout or --games=atari100k")
    for game in games:
        check_game(game)
    return list(dict.fromkeys(games))


def human_normalized(game, score):
    """(score - random) / (human - random) for the Atari games the reference has, else None."""
    if game not in RANDOM_AND_HUMAN:
        return None
    random_score, human_score = RANDOM_AND_HUMAN[game]
    return (score - random_score) / (human_score - random_score)


def run_dir_of(output_dir, game, seed):
    return os.path.join(output_dir, "runs", game.replace("/", "_"), f"seed_{seed}")


def run_one(set_name, overrides, game, seed, run_dir, cpus, gin_config):
    """A Ray task: one game and seed trained (or resumed) in its run dir; returns its summary."""
    game_overrides = ",".join(part for part in (overrides, f"game={game}") if part)
    return runs.train_in_dir(run_dir, set_name, game_overrides, seed, cpus=cpus, **gin_config)


def table(spec, results):
    """benchmark.json's content: per game the seeds' final returns, mean ± std, and the
    human-normalized score of the mean (Atari), with its mean and median over games."""
    games = {}
    for game in spec["games"]:
        finals = {seed: results[(game, seed)]["final_return"] for seed in range(spec["seeds"])
                  if results.get((game, seed))}
        entry = dict(final_returns=finals, runs_done=len(finals))
        if finals:
            values = np.array(list(finals.values()))
            entry.update(mean=float(values.mean()), std=float(values.std()),
                         real_env_steps=max(results[(game, s)]["final_step"] for s in finals))
            entry["human_normalized"] = human_normalized(game, entry["mean"])
        games[game] = entry
    normalized = [entry["human_normalized"] for entry in games.values() if entry.get("human_normalized") is not None]
    return dict(spec=spec, games=games,
                human_normalized_mean=float(np.mean(normalized)) if normalized else None,
                human_normalized_median=float(np.median(normalized)) if normalized else None,
                games_with_human_normalized=len(normalized))


def write_tables(output_dir, summary):
    spec = summary["spec"]
    atomic_write_text(os.path.join(output_dir, "benchmark.json"), json.dumps(summary, indent=2) + "\n")
    lines = [f"# Benchmark: `{spec['hparams_set']}`" + (f" with `{spec['hparams']}`" if spec["hparams"] else ""), "",
             f"{len(spec['games'])} games x {spec['seeds']} seeds; the final evaluation return (temperature 1), "
             "mean ± std over seeds.", "",
             "| game | mean ± std | seeds | real env steps | human-normalized |", "| --- | --- | --- | --- | --- |"]
    for game, entry in summary["games"].items():
        if not entry["runs_done"]:
            lines.append(f"| {game} | (no run done) | 0/{spec['seeds']} | | |")
            continue
        normalized = "" if entry["human_normalized"] is None else f"{entry['human_normalized']:.3f}"
        seeds = ", ".join(f"{value:.4g}" for value in entry["final_returns"].values())
        lines.append(f"| {game} | {entry['mean']:.4g} ± {entry['std']:.3g} | {seeds} ({entry['runs_done']}/"
                     f"{spec['seeds']}) | {entry['real_env_steps']:,} | {normalized} |")
    if summary["human_normalized_mean"] is not None:
        lines += ["", f"Human-normalized score over {summary['games_with_human_normalized']} Atari games: mean "
                  f"{summary['human_normalized_mean']:.3f}, median {summary['human_normalized_median']:.3f} "
                  "(random and human scores of Mnih et al. 2015)."]
    atomic_write_text(os.path.join(output_dir, "benchmark.md"), "\n".join(lines) + "\n")


def benchmark(set_name, overrides, games_text, seeds, output_dir, max_concurrent, ray_address=None, cpus_per_run=1,
              gin_config=None):
    """Runs (or resumes) every game and seed; returns benchmark.json's content. gin_config:
    runs.gin_spec's files and bindings, parsed by every run."""
    gin_config = gin_config or {}
    if not set_name:
        raise UserError("--mode=benchmark needs --hparams_set (the set run on every game)")
    if seeds < 1 or max_concurrent < 1:
        raise UserError("--seeds and --max_concurrent must be at least 1")
    import_ray("--mode=benchmark")
    games = parse_games(games_text)
    for game in games:  # every game's set is checked before anything starts
        runs.check_set(create_hparams(set_name, ",".join(part for part in (overrides, f"game={game}") if part)))
    output_dir = os.path.abspath(output_dir)
    spec = dict(hparams_set=set_name, hparams=overrides, games=games, seeds=seeds, **gin_config)
    with run_lock.hold(output_dir):  # one search or benchmark per dir
        runs.check_spec(output_dir, "benchmark_spec.json", spec, "benchmark")
        set_run_in_progress(output_dir)

        ray = init_ray("--mode=benchmark", ray_address)
        task = ray.remote(num_cpus=cpus_per_run, max_retries=0)(run_one)
        waiting = [(game, seed) for game in games for seed in range(seeds)]
        running, results = {}, {}
        logging.info("Benchmark of %s: %d games x %d seeds, %d runs at once, in %s", set_name, len(games), seeds,
                     max_concurrent, output_dir)
        while waiting or running:
            while waiting and len(running) < max_concurrent:
                game, seed = waiting.pop(0)
                running[task.remote(set_name, overrides, game, seed, run_dir_of(output_dir, game, seed),
                                    cpus_per_run, gin_config)] = (game, seed)
            done, _ = ray.wait(list(running), num_returns=1)
            game, seed = running.pop(done[0])
            try:
                results[(game, seed)] = ray.get(done[0])
            except ray.exceptions.RayTaskError as e:
                results[(game, seed)] = None
                logging.warning("%s seed %d failed (%s): its log is %s", game, seed, str(e).splitlines()[-1][:200],
                                os.path.join(run_dir_of(output_dir, game, seed), "log.txt"))
            summary = table(spec, results)
            write_tables(output_dir, summary)
            final = results[(game, seed)]
            logging.info("%s seed %d: %s | %d/%d runs done", game, seed,
                         f"final return {final['final_return']:.4g}" if final else "failed", len(results),
                         len(games) * seeds)
        logging.info("Benchmark tables in %s", os.path.join(output_dir, "benchmark.md"))
        return summary
