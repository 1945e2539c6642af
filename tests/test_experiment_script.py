"""scripts/minatar_experiment.sh, the results page's experiment, as a dry run: what it would start
on a fresh machine, given what the archive already holds finished."""

import json
import os
import subprocess

from rlkit.rl.analysis.minatar_results import GAMES, best_simple_runs

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "minatar_experiment.sh")


def dry_run(runs, archive, *games, **env):
    result = subprocess.run(["bash", SCRIPT, str(runs), *games], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, DRY_RUN="1", ARCHIVE=str(archive), PYTHON="python", **env))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines(), result.stderr


def archive_record(archive, game, run, finished):
    os.makedirs(archive / game / run)
    (archive / game / run / "run_info.json").write_text(json.dumps(dict(finished=finished), indent=2))


def test_a_fresh_machine_starts_only_the_runs_the_archive_lacks_finished(tmp_path):
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    archive_record(archive, "asterix", "simple_ending_steps_100k_s0", finished=True)
    archive_record(archive, "asterix", "simple_ending_steps_100k_s1", finished=False)  # cut short: run it again
    commands, stderr = dry_run(runs, archive, "asterix", ONLY="simple")
    assert [command.rsplit("--output_dir=", 1)[1] for command in commands] == [
        f"{runs}/asterix/simple_ending_steps_100k_s1", f"{runs}/asterix/simple_ending_steps_100k_s2"]
    assert all(command.startswith("python -m rlkit.rl.trainer_model_based --loop_hparams_set=rlmb_minatar_ending_steps ")
               for command in commands)
    assert "skipped" in stderr and "simple_ending_steps_100k_s0" in stderr

    # A run directory that survived on this machine resumes, whatever the archive says; RERUN=1 runs everything.
    os.makedirs(runs / "asterix" / "simple_ending_steps_100k_s0")
    assert len(dry_run(runs, archive, "asterix", ONLY="simple")[0]) == 3
    os.rmdir(runs / "asterix" / "simple_ending_steps_100k_s0")
    assert len(dry_run(runs, archive, "asterix", ONLY="simple", RERUN="1")[0]) == 3


def test_each_game_runs_its_best_simple_set(tmp_path):
    """Seaquest's SimPLe rows come from object frames, Space Invaders' from changed pixels, Asterix's
    from ending steps, Freeway's from SimPLe as published, Breakout's from episode ends;
    SIMPLE=faithful runs SimPLe as published everywhere."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    sets, prefixes = {}, {}
    for game in ("breakout", "freeway", "asterix", "seaquest", "space_invaders"):
        commands, _ = dry_run(runs, archive, game, ONLY="simple")
        sets[game] = {command.split("--loop_hparams_set=")[1].split()[0] for command in commands}
        prefixes[game] = {command.rsplit("/", 1)[1].rsplit("_s", 1)[0] for command in commands}
    assert sets == {"breakout": {"rlmb_minatar_ends"}, "freeway": {"rlmb_minatar"},
                    "asterix": {"rlmb_minatar_ending_steps"},
                    "seaquest": {"rlmb_minatar_object_frames"},
                    "space_invaders": {"rlmb_minatar_changed_pixels"}}
    # The results' across-games row reads the same list (docs/results/simple_sets.txt).
    best = best_simple_runs()
    assert prefixes == {game: {best[game]} for game in prefixes} and set(best) == set(GAMES)
    commands, _ = dry_run(runs, archive, "seaquest", ONLY="simple", SIMPLE="faithful")
    assert all("--loop_hparams_set=rlmb_minatar " in command and "/seaquest/simple_100k_s" in command
               for command in commands) and len(commands) == 3


def test_a_game_without_a_simple_set_gets_one_line(tmp_path):
    result = subprocess.run(["bash", SCRIPT, str(tmp_path / "runs"), "pong"], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, DRY_RUN="1", ONLY="simple", PYTHON="python"))
    assert result.returncode != 0 and result.stderr.strip().splitlines() == [
        f"no SimPLe set for pong in {os.path.realpath(os.path.join(os.path.dirname(SCRIPT), '..'))}"
        "/docs/results/simple_sets.txt: games are breakout freeway asterix seaquest space_invaders"]
