"""scripts/minatar_experiment.sh, the results page's experiment: as a dry run, what it would start
on a fresh machine, given what the archive already holds finished; with JOBS, how it runs several
at a time (with a stand-in for python that records what it was started with)."""

import concurrent.futures
import json
import os
import signal
import subprocess
import time

import pytest

from rlkit.rl.analysis.cells import GAMES, best_simple_runs

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

    # A rerun finished and kept as pending (beside the archive) waits for its cell's other seeds: not run again.
    archive_record(tmp_path / "pending", "asterix", "simple_ending_steps_100k_s2", finished=True)
    for rerun in ({}, {"RERUN": "1"}):
        commands, stderr = dry_run(runs, archive, "asterix", ONLY="simple", **rerun)
        assert not any(command.endswith("simple_ending_steps_100k_s2") for command in commands)
        assert "kept as pending" in stderr and "simple_ending_steps_100k_s2" in stderr


def test_long_evaluations_train_each_ppo_seed_first_and_skip_those_archived(tmp_path):
    """ONLY=long_eval: each seed's final policy evaluated on 2,048 episodes beside its run
    (RUNS/GAME/long_eval/RUN): a PPO run trained (or resumed) first, a SimPLe or DreamerV2 run
    only where its directory is on this machine."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    archive_record(archive, "breakout", "random_s0", finished=True)
    (archive / "breakout" / "random_s0" / "long_eval.json").write_text("{}")
    os.makedirs(runs / "breakout" / "simple_ends_100k_s3" / "policy")  # Breakout's SimPLe set's seed 3 is here
    commands, stderr = dry_run(runs, archive, "breakout", ONLY="long_eval", SEEDS_model_free_breakout="0 1",
                               SEEDS_ppo_1m_breakout="0")
    modules = [command.split()[2] + (" random" if "--agent=random" in command else "") for command in commands]
    assert modules == ["rlkit.rl.evaluator random",  # random_s0's is archived
                       "rlkit.rl.trainer_model_free", "rlkit.rl.evaluator", "rlkit.rl.trainer_model_free",
                       "rlkit.rl.evaluator",  # PPO@100K's seeds 0 and 1
                       "rlkit.rl.trainer_model_free", "rlkit.rl.evaluator",  # PPO@1M's seed 0
                       "rlkit.rl.evaluator"]  # SimPLe's seed 3, not trained again
    assert "skipped" in stderr and "random_s0" in stderr and "dreamer_100k_s0: not on this machine" in stderr
    assert commands[2].endswith(f"--hparams=eval_batch_size=2048,eval_sampling_temps=[1.0] "
                                f"--eval_metrics_dir={runs}/breakout/long_eval/ppo_100k_s0")
    assert f"--policy_dir={runs}/breakout/ppo_100k_s0/policy" in commands[2]
    assert f"--output_dir={runs}/breakout/ppo_100k_s0" in commands[1]
    assert "--hparams=game=minatar/breakout,num_env_steps=1000000,eval_every_iterations=50" in commands[5]
    assert commands[6].endswith(f"--eval_metrics_dir={runs}/breakout/long_eval/ppo_1m_s0")
    assert commands[7].startswith(f"python -m rlkit.rl.evaluator --policy_dir={runs}/breakout/simple_ends_100k_s3/policy ")

    # A long evaluation kept as pending (a rerun waiting for its cell's other seeds) is not made again, RERUN or not.
    archive_record(tmp_path / "pending", "breakout", "random_s1", finished=True)
    (tmp_path / "pending" / "breakout" / "random_s1" / "long_eval.json").write_text("{}")
    for rerun in ({}, {"RERUN": "1"}):
        commands, stderr = dry_run(runs, archive, "breakout", ONLY="long_eval", SEEDS_model_free_breakout="0 1",
                                   SEEDS_ppo_1m_breakout="0", **rerun)
        assert not any(command.endswith("long_eval/random_s1") for command in commands)
        assert "random_s1: its long evaluation is kept as pending" in stderr


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


def test_the_dqn_rows_run_ten_seeds_at_100k_everywhere_and_three_at_1m_on_two_games(tmp_path):
    """ONLY=dqn (issue 66): the data-efficient DQN set at 100K, seeds 0-9 on every game; the
    MinAtar paper's DQN at 1M, seeds 0-2 on Breakout and Space Invaders; ONLY=dqn_100k the first."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    commands, _ = dry_run(runs, archive, ONLY="dqn")
    short = [c for c in commands if "--hparams_set=rlmf_dqn_minatar_data_efficient " in c]
    long = [c for c in commands if "--hparams_set=rlmf_dqn_minatar " in c]
    assert len(short) == 50 and len(long) == 6 and len(commands) == 56
    assert {c.rsplit("/", 2)[1] for c in long} == {"breakout", "space_invaders"}
    assert all("num_env_steps=1000000" in c and "/dqn_1m_s" in c for c in long)
    assert {c.split("--seed=")[1].split()[0] for c in short} == {str(s) for s in range(10)}
    assert len(dry_run(runs, archive, ONLY="dqn_100k")[0]) == 50
    assert dry_run(runs, archive, ONLY="dqn_1m")[0] == long


def test_the_expected_rewards_ablation_runs_freeways_five_seeds_alone(tmp_path):
    """ONLY=simple_expected: SimPLe as published with expected rewards, Freeway's 5 seeds beside
    SimPLe's own (RUNS/freeway/simple_expected_100k_sS); no other game has the ablation."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    commands, _ = dry_run(runs, archive, ONLY="simple_expected")
    assert commands == [f"python -m rlkit.rl.trainer_model_based --loop_hparams_set=rlmb_minatar "
                        f"--loop_hparams=game=minatar/freeway,simulated_reward=expected --seed={seed} "
                        f"--output_dir={runs}/freeway/simple_expected_100k_s{seed}" for seed in range(5)]


def test_the_dreamer_v3_rows_run_five_seeds_on_every_game_in_float32(tmp_path):
    """ONLY=dreamer_v3 (issue 67): the fixed set, seeds 0-4 on every game, float32 on any machine."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    commands, _ = dry_run(runs, archive, ONLY="dreamer_v3")
    assert commands == [f"python -m rlkit.rl.trainer_model_based --hparams_set=dreamer_v3_minatar "
                        f"--hparams=game=minatar/{game},compute_dtype=float32 --seed={seed} "
                        f"--output_dir={runs}/{game}/dreamer_v3_100k_s{seed}" for game in GAMES for seed in range(5)]


def test_the_1m_dreamer_rows_run_seed_0_on_breakout_and_space_invaders(tmp_path):
    """ONLY=dreamer_1m and dreamer_v3_1m (issue 68 item 6): each set at 1M real steps, in float32."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    for only, set_name in (("dreamer_1m", "dreamer_v2_minatar"), ("dreamer_v3_1m", "dreamer_v3_minatar")):
        commands, _ = dry_run(runs, archive, ONLY=only)
        assert commands == [f"python -m rlkit.rl.trainer_model_based --hparams_set={set_name} "
                            f"--hparams=game=minatar/{game},num_env_steps=1000000,compute_dtype=float32 --seed=0 "
                            f"--output_dir={runs}/{game}/{only}_s0" for game in ("breakout", "space_invaders")]


def test_the_dreamer_v2_rows_name_float32_as_the_v3_rows_do(tmp_path):
    """ONLY=dreamer and dreamer_rewarded (issue 68, one code version per cell): the set's
    compute_dtype "auto" would take bfloat16 on some machines, so every row names float32 (the 1M
    rows' commands: the test above)."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    commands, _ = dry_run(runs, archive, ONLY="dreamer")
    assert commands == [f"python -m rlkit.rl.trainer_model_based --hparams_set=dreamer_v2_minatar "
                        f"--hparams=game=minatar/{game},compute_dtype=float32 --seed={seed} "
                        f"--output_dir={runs}/{game}/dreamer_100k_s{seed}" for game in GAMES for seed in range(3)]
    commands, _ = dry_run(runs, archive, ONLY="dreamer_rewarded")
    assert len(commands) == 6 and all(",compute_dtype=float32 " in c for c in commands)


def test_final_episodes_sets_every_trained_runs_final_evaluation(tmp_path):
    """FINAL_EPISODES=N (issue 68: cells whose final evaluations the noise table finds short): each
    trained run's hparams end with final_eval_batch_size=N; the random policy's evaluation is its own."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    for only, count in (("dreamer", 3), ("dqn", 13), ("model_free", 13), ("simple", 5), ("simple_combined", 5)):
        commands, _ = dry_run(runs, archive, "breakout", ONLY=only, FINAL_EPISODES="512")
        trained = [c for c in commands if "--agent=random" not in c]
        assert len(trained) == count and all(",final_eval_batch_size=512 --seed=" in c for c in trained), commands
    assert all("final_eval_batch_size" not in c for c in dry_run(runs, archive, "breakout", ONLY="dreamer")[0])
    result = subprocess.run(["bash", SCRIPT, str(runs)], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, FINAL_EPISODES="many", PYTHON="python"))
    assert result.returncode == 2 and result.stderr.splitlines() == [
        "FINAL_EPISODES=many: give how many episodes each final evaluation plays, 1 or more"]
    assert not runs.exists()


@pytest.mark.parametrize("jobs", ["0", "two", "-1"])
def test_a_bad_jobs_count_gets_one_line(tmp_path, jobs):
    result = subprocess.run(["bash", SCRIPT, str(tmp_path / "runs")], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, JOBS=jobs, PYTHON="python"))
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"JOBS={jobs}: give how many runs at a time, 1 or more"]
    assert not (tmp_path / "runs").exists()


def test_a_game_without_a_simple_set_gets_one_line(tmp_path):
    result = subprocess.run(["bash", SCRIPT, str(tmp_path / "runs"), "pong"], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, DRY_RUN="1", ONLY="simple", PYTHON="python"))
    assert result.returncode != 0 and result.stderr.strip().splitlines() == [
        f"no SimPLe set for pong in {os.path.realpath(os.path.join(os.path.dirname(SCRIPT), '..'))}"
        "/docs/results/simple_sets.txt: games are breakout freeway asterix seaquest space_invaders"]


# A stand-in for python that records each run's start, end and thread settings; seed 1 fails.
FAKE_PYTHON = """out=${@: -1}; out=${out#--output_dir=}
trap 'echo "stopped $out" >> "$RECORD"; exit 143' TERM  # set first: a run stopped at its start says so
echo "start $out $TF_NUM_INTRAOP_THREADS $TF_NUM_INTEROP_THREADS" >> "$RECORD"
sleep "$FAKE_SECONDS" & wait $!
case "$out" in *_s1) echo "failed $out" >> "$RECORD"; echo "seed 1 went wrong" >&2; exit 1 ;; esac
echo "end $out" >> "$RECORD"
"""


def start_in_parallel(tmp_path, seconds, games=("asterix",), **more_env):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "fake.sh").write_text(FAKE_PYTHON)
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("TF_NUM_")}
    env = dict(inherited, JOBS="2", ONLY="simple", ARCHIVE=str(tmp_path / "archive"), RECORD=str(tmp_path / "record"),
               PYTHON=f"bash {tmp_path / 'fake.sh'}", FAKE_SECONDS=str(seconds))
    env.update(more_env)
    # Ctrl-C as a terminal delivers it: a shell started with SIGINT ignored (as a test worker may
    # have left it, after a library that set it so) can never trap it, and the script ran on.
    return subprocess.Popen(["bash", SCRIPT, str(tmp_path / "runs"), *games], env=env, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_jobs_runs_that_many_at_a_time_each_with_its_share_of_the_cores_and_its_own_log(tmp_path):
    process = start_in_parallel(tmp_path, seconds=3)
    stderr = process.communicate(timeout=60)[1]
    events = [line.split() for line in (tmp_path / "record").read_text().splitlines()]
    runs = tmp_path / "runs" / "asterix"
    run = [str(runs / f"simple_ending_steps_100k_s{seed}") for seed in range(3)]
    # Seeds 0 and 1 start together (either may write its record first); seed 2 when the first of them is done.
    assert sorted(event[:2] for event in events[:2]) == [["start", run[0]], ["start", run[1]]]
    assert events[2][0] != "start" and ["start", run[2]] in [event[:2] for event in events[3:]]
    threads = str(max(1, os.cpu_count() // 2))
    assert all(event[2:] == [threads, "1"] for event in events if event[0] == "start")
    assert (runs / "simple_ending_steps_100k_s1.log").read_text() == "seed 1 went wrong\n"
    assert process.returncode == 1
    assert stderr.splitlines()[-1] == f"1 of 3 runs failed; the end of each log says why: {run[1]}.log"


def test_stopping_the_script_stops_every_run_it_started(tmp_path):
    process = start_in_parallel(tmp_path, seconds=60)
    deadline = time.monotonic() + 30
    while (not (tmp_path / "record").exists() or len((tmp_path / "record").read_text().splitlines()) < 2) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stderr = process.communicate(timeout=30)[1]
    assert process.returncode == 130 and stderr.splitlines()[-1] == "stopped; rerun the same command to resume the runs"
    assert sorted(line.split()[0] for line in (tmp_path / "record").read_text().splitlines()) == [
        "start", "start", "stopped", "stopped"]


def test_a_sigterm_stops_the_run_going_one_at_a_time_at_once(tmp_path):
    """With JOBS=1 a run went on in the foreground after the script was sent SIGTERM: bash runs a
    trap only after a foreground command ends."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "fake.sh").write_text(FAKE_PYTHON)
    env = dict(os.environ, ONLY="simple", ARCHIVE=str(tmp_path / "archive"), RECORD=str(tmp_path / "record"),
               PYTHON=f"bash {tmp_path / 'fake.sh'}", FAKE_SECONDS="120")
    # stderr to a file: the stand-in's own sleep, orphaned by its stop, would hold a pipe open.
    with open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(["bash", SCRIPT, str(tmp_path / "runs"), "asterix"], env=env, stderr=stderr)
    deadline = time.monotonic() + 30
    while not (tmp_path / "record").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 143  # not after the run's 120 s
    assert (tmp_path / "stderr").read_text().splitlines()[-1] == "stopped; rerun the same command to resume the runs"
    assert [line.split()[0] for line in (tmp_path / "record").read_text().splitlines()] == ["start", "stopped"]


def test_long_eval_games_evaluate_each_loop_run_there_as_soon_as_it_ends_well(tmp_path):
    """LONG_EVAL_GAMES: a SimPLe or Dreamer run on these games is followed by its long evaluation
    (as ONLY=long_eval makes it) as soon as it has ended well; elsewhere nothing changes."""
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    for only, prefix in (("simple_combined", "simple_combined_100k"), ("simple", "simple_ending_steps_100k")):
        commands, _ = dry_run(runs, archive, "asterix", "breakout", ONLY=only, LONG_EVAL_GAMES="asterix seaquest")
        asterix = [c for c in commands if "game=minatar/asterix" in c]
        assert len(asterix) == 3 and all(
            c.startswith(f"then_long_eval {runs}/asterix/{prefix}_s{seed} {seed} python -m rlkit.rl.trainer_model_based ")
            for seed, c in enumerate(asterix))
        assert all(c.startswith("python -m ") for c in commands if c not in asterix)

    process = start_in_parallel(tmp_path / "after", seconds=0.5, ONLY="simple_combined", LONG_EVAL_GAMES="asterix")
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 1, stderr  # seed 1's run fails: it gets no evaluation
    events = [line.split()[:2] for line in (tmp_path / "after" / "record").read_text().splitlines()]
    run_dir = tmp_path / "after" / "runs" / "asterix"
    for seed in (0, 2):
        evaluation = f"--eval_metrics_dir={run_dir}/long_eval/simple_combined_100k_s{seed}"
        assert events.index(["start", evaluation]) > events.index(["end", f"{run_dir}/simple_combined_100k_s{seed}"])
        assert ["end", evaluation] in events
    assert not any("long_eval/simple_combined_100k_s1" in event[1] for event in events)

    # A stop reaches what each run is running, its run or its evaluation.
    process = start_in_parallel(tmp_path / "stop", seconds=60, ONLY="simple_combined", LONG_EVAL_GAMES="asterix")
    deadline = time.monotonic() + 30
    while (not (tmp_path / "stop" / "record").exists()
           or len((tmp_path / "stop" / "record").read_text().splitlines()) < 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stderr = process.communicate(timeout=30)[1]
    assert process.returncode == 130 and stderr.splitlines()[-1] == "stopped; rerun the same command to resume the runs"
    assert sorted(line.split()[0] for line in (tmp_path / "stop" / "record").read_text().splitlines()) == [
        "start", "start", "stopped", "stopped"]


@pytest.mark.parametrize("long_eval_games", ["", "breakout freeway asterix"])
def test_a_stop_at_any_moment_stops_every_run_it_started(tmp_path, long_eval_games):
    # Ctrl-C lands wherever the script is: starting runs, waiting for one to end, between games.
    # bash 5.2 failed the trap ("interrupt trap: unexpected EOF while looking for matching `)'",
    # exit 2, runs left going) when it landed in a command substitution: 29 of 96 such stops did.
    # With LONG_EVAL_GAMES, also where a run's evaluation follows it.
    def stop_at(moment):
        directory = tmp_path / f"stop{moment}"
        process = start_in_parallel(directory, seconds=0.2, games=("breakout", "freeway", "asterix"),
                                    LONG_EVAL_GAMES=long_eval_games)
        time.sleep(0.05 * moment)
        process.send_signal(signal.SIGINT)
        stderr = process.communicate(timeout=60)[1]
        events = (directory / "record").read_text().splitlines() if (directory / "record").exists() else []
        unaccounted = {line.split()[1] for line in events if line.startswith("start ")} - {
            line.split()[1] for line in events if not line.startswith("start ")}
        return process.returncode, stderr.splitlines()[-1] if stderr else "", events, unaccounted

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        stops = list(pool.map(stop_at, range(24)))
    for returncode, last_line, events, unaccounted in stops:
        if returncode == -signal.SIGINT:  # before the script set its trap, so before any run
            assert events == []
        elif returncode == 1:  # every run had ended before the stop: seed 1's fail
            assert last_line.startswith("3 of 13 runs failed")
        else:
            assert (returncode, last_line) == (130, "stopped; rerun the same command to resume the runs")
        assert not unaccounted  # each run started was stopped, ended or failed


def started_by(script, tmp_path, runs=2):
    """The command lines `script RUNS` starts, run `runs` times, with a stand-in python that
    records its arguments and makes the output dir (so a rerun finds each run there)."""
    stub, record = tmp_path / "python", tmp_path / "started"
    stub.write_text(f"#!/usr/bin/env bash\necho \"$*\" >> {record}\nfor a in \"$@\"; do case $a in "
                    "--output_dir=*) mkdir -p \"${a#--output_dir=}\";; esac; done\n")
    stub.chmod(0o755)
    path = os.path.join(os.path.dirname(__file__), "..", "scripts", script)
    for _ in range(runs):
        result = subprocess.run(["bash", path, str(tmp_path / "runs")], capture_output=True, text=True, timeout=120,
                                env=dict(os.environ, PYTHON=str(stub)))
        assert result.returncode == 0, result.stderr
    return record.read_text().splitlines()


def test_the_ppo_fidelity_experiment_runs_each_game_seed_and_variant_once(tmp_path):
    """scripts/ppo_fidelity_experiment.sh: 5 games x 10 tuning seeds x 2 PPO variants, and a rerun
    skips them all."""
    started = started_by("ppo_fidelity_experiment.sh", tmp_path)
    assert len(started) == len(set(started)) == 100
    simple = [line for line in started if "ppo.advantage_normalization=rollout" in line]
    assert len(simple) == 50 and all("ppo.adam_beta1=0.85" in line for line in simple)
    assert {line.split("--seed=")[1].split()[0] for line in started} == {str(s) for s in range(100, 110)}
    assert all("--hparams_set=rlmf_minatar" in line for line in started)


def test_the_dqn_tuning_runs_each_variant_on_tuning_seeds_only(tmp_path):
    """scripts/dqn_minatar_tuning.sh: 5 games x 3 variants x the seeds given (100 and up by
    default), each once across a rerun."""
    started = started_by("dqn_minatar_tuning.sh", tmp_path)
    assert len(started) == len(set(started)) == 30
    assert {line.split("--seed=")[1].split()[0] for line in started} == {"100", "101"}
    assert sum("dqn.prioritized=True" in line for line in started) == 10
    assert sum("dqn.double=True" in line for line in started) == 20


def test_long_evaluations_of_dreamer_v3_and_the_one_simple_set_evaluate_only_runs_on_this_machine(tmp_path):
    runs, archive = tmp_path / "runs", tmp_path / "archive"
    os.makedirs(runs / "asterix" / "dreamer_v3_100k_s1" / "policy")
    os.makedirs(runs / "asterix" / "simple_combined_100k_s2" / "policy")
    commands, stderr = dry_run(runs, archive, "asterix", ONLY="long_eval", LONG_EVAL_EPISODES="512",
                               LONG_EVAL_METHODS="dreamer_v3_100k simple_combined")
    assert [command.split("--policy_dir=")[1].split()[0] for command in commands] == [
        f"{runs}/asterix/dreamer_v3_100k_s1/policy", f"{runs}/asterix/simple_combined_100k_s2/policy"]
    assert commands[0].endswith(f"--eval_metrics_dir={runs}/asterix/long_eval/dreamer_v3_100k_s1")
    assert "eval_batch_size=512," in commands[1]
    assert "dreamer_v3_100k_s4: not on this machine" in stderr and "simple_combined_100k_s0: not on this machine" in stderr
