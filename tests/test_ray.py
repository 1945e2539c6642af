"""Ray: hyperparameter search and benchmarks through the lab's command line, and Ray actors
running a run's real envs. Each test's Ray is local (this machine's 2 CPUs) and stops with it."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import assert_one_line_error, run_module
from rlkit.data_generators import storage
from rlkit.data_generators.experience import collect_experience
from rlkit.data_generators.make_env import make_batch_env
from rlkit.hparams import create_hparams
from rlkit.rl.loops import evaluation
from rlkit.rl.experiments.benchmark import human_normalized
from rlkit.rl.learners.learner import build_learner
from rlkit.rl.loops.workers import init_ray, split_envs, start_workers

ray = pytest.importorskip("ray")
LAB = "rlkit.rl.lab"
# One evaluation cell (temperature 1, no no-ops) keeps each tiny trial to a few seconds.
ONE_CELL = "eval_sampling_temps=[1.0],eval_max_num_noops=0"
RMSPROP = "ppo/make_optimizer.optimizer=@keras.optimizers.RMSprop"  # gin config every run of a search gets
SEARCH = ["--mode=search", "--hparams_set=rlmf_tiny", f"--hparams={ONE_CELL}", "--ranges=ppo_learning",
          f"--gin_bindings={RMSPROP}", "--num_trials=2", "--max_concurrent=2"]


def lab_command(*args):
    return [sys.executable, "-m", LAB, *args]


def test_a_search_killed_midway_resumes_and_ends_with_its_table_graph_and_best_set(tmp_path):
    out = str(tmp_path / "search")
    log_path = tmp_path / "first.log"
    with open(log_path, "w") as log:
        # Its own session: the kill takes Ray's processes with it, as a machine's loss would.
        process = subprocess.Popen(lab_command(*SEARCH, f"--output_dir={out}"), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and "real env steps: return" not in log_path.read_text():
        assert process.poll() is None, log_path.read_text()[-3000:]
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not os.path.exists(os.path.join(out, "search.md"))  # killed before the end

    # Limits that catch a hang, not a slow machine: the whole test took 60 s beside the suite and 83 s
    # beside four training processes (160-185 s beside the suite before Ray's workers ran at the
    # driver's priority).
    resumed = subprocess.run(lab_command(*SEARCH, f"--output_dir={out}"), capture_output=True, text=True,
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming the search" in resumed.stderr
    with open(os.path.join(out, "search.json")) as f:
        results = json.load(f)
    trials = results["trials"]
    assert [row["trial"] for row in trials] == [f"trial_0000{k}" for k in range(2)]
    for row in trials:  # each trial is a normal run with the values Tune drew
        assert row["status"] == "finished" and row["real_env_steps"] == 128, row
        with open(os.path.join(out, "trials", row["trial"], "hparams.json")) as f:
            ppo = json.load(f)["ppo"]
        assert ppo["learning_rate"] == row["values"]["ppo.learning_rate"]
        assert 1e-5 <= ppo["learning_rate"] <= 1e-3 and 0.001 <= ppo["entropy_coef"] <= 0.05
        command = open(os.path.join(out, "trials", row["trial"], "command.txt")).read()
        assert f"--mode=train --hparams_set=rlmf_tiny --hparams={ONE_CELL},ppo.learning_rate=" in command
        assert f"--gin_bindings={RMSPROP}" in command
        assert "make_optimizer.optimizer = @keras.optimizers.RMSprop" in open(
            os.path.join(out, "trials", row["trial"], "operative_config.gin")).read()
    assert len({row["values"]["ppo.learning_rate"] for row in trials}) == 2
    # A trial the kill interrupted resumed its run from its checkpoint.
    assert any("Resumed from" in open(path).read() for path in glob.glob(os.path.join(out, "trials", "*", "log.txt")))
    table = open(os.path.join(out, "search.md")).read()
    assert table.count("| trial_0000") == 2 and "`ppo.learning_rate`" in table
    assert os.path.getsize(os.path.join(out, "search.png")) > 10_000
    best = results["best"]["trial"]
    assert open(os.path.join(out, "best", "hparams.json")).read() == open(
        os.path.join(out, "trials", best, "hparams.json")).read()

    # Another search in the same dir is refused; the finished one reruns to the same table.
    other = subprocess.run(lab_command(*SEARCH[:-2], "--num_trials=3", "--max_concurrent=2", f"--output_dir={out}"),
                           capture_output=True, text=True, timeout=120)
    assert_one_line_error(other, "holds another search", "num_trials: 2 there, 3 now")


def test_a_benchmark_of_two_games_and_two_seeds_writes_its_tables(tmp_path):
    out = str(tmp_path / "bench")
    result = run_module(LAB, "--mode=benchmark", "--hparams_set=rlmf_tiny", f"--hparams={ONE_CELL}",
                        "--games=pong,minatar/breakout", "--seeds=2", f"--output_dir={out}",
                        f"--gin_bindings={RMSPROP}", timeout=900)  # four runs: a hang's limit, as above
    assert result.returncode == 0, result.stderr[-3000:]
    for run_dir in glob.glob(os.path.join(out, "runs", "*", "seed_*")):  # the gin binding reached every run
        assert "make_optimizer.optimizer = @keras.optimizers.RMSprop" in open(
            os.path.join(run_dir, "operative_config.gin")).read()
        assert f"--gin_bindings={RMSPROP}" in open(os.path.join(run_dir, "command.txt")).read()
    with open(os.path.join(out, "benchmark.json")) as f:
        summary = json.load(f)
    for game, folder in (("pong", "pong"), ("minatar/breakout", "minatar_breakout")):
        entry = summary["games"][game]
        finals = [json.load(open(os.path.join(out, "runs", folder, f"seed_{seed}", "graphs", "summary.json")))
                  ["final_return"] for seed in (0, 1)]
        assert entry["runs_done"] == 2 and entry["mean"] == pytest.approx(np.mean(finals))
        assert entry["std"] == pytest.approx(np.std(finals))
    # Pong has a human-normalized score, MinAtar's Breakout none.
    assert summary["games"]["pong"]["human_normalized"] == pytest.approx((summary["games"]["pong"]["mean"] + 20.7) / 35.3)
    assert summary["games"]["minatar/breakout"]["human_normalized"] is None
    assert summary["human_normalized_median"] == pytest.approx(summary["games"]["pong"]["human_normalized"])
    table = open(os.path.join(out, "benchmark.md")).read()
    assert "| pong |" in table and "| minatar/breakout |" in table and "Human-normalized score over 1" in table


def test_human_normalized_scores_use_the_published_random_and_human_scores():
    assert human_normalized("pong", 14.6) == pytest.approx(1.0)
    assert human_normalized("breakout", 1.7) == pytest.approx(0.0)
    assert human_normalized("CartPole-v1", 500) is None


@pytest.fixture(scope="module")
def local_ray():
    init_ray("the Ray tests", num_cpus=2)
    yield
    ray.shutdown()


def test_a_local_rays_workers_run_at_the_drivers_priority(local_ray):
    # Ray's default nice 15 starved its trials beside other work (TensorFlow's import 388 s).
    assert ray.get(ray.remote(lambda: os.nice(0)).remote()) == os.nice(0)


def test_two_actors_collect_the_shards_one_process_would(local_ray, tmp_path):
    hparams = create_hparams("rlmb_tiny", "real_num_workers=2,real_num_envs=3")
    assert split_envs(3, 2) == [(0, 2), (2, 1)]
    with make_batch_env(hparams, 3) as env:
        learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
        workers = start_workers(hparams, learner, 3, seed=0)
        try:
            collect_experience(None, str(tmp_path / "remote"), 0, 90, 20, seed=5, steps_from=workers.steps)
            collect_experience(env, str(tmp_path / "local"), 0, 90, 20, seed=5)
            # Greedy evaluation with the same weights: the same envs and seeds give the same episodes.
            hparams.eval_step_limit = 30
            remote, _ = evaluation.evaluate_policy(hparams, learner.act, seed=1, workers=workers)
            local, _ = evaluation.evaluate_policy(hparams, learner.act, seed=1)
            rollout, _ = workers.collect_rollout(7, reset_seed=3)
        finally:
            workers.close()
    names = sorted(os.listdir(tmp_path / "local" / "epoch_000"))
    assert names == sorted(os.listdir(tmp_path / "remote" / "epoch_000")) and len(names) == 2  # 20 + 10 steps
    assert storage.stored_steps(str(tmp_path / "remote"), 0) == storage.stored_steps(str(tmp_path / "local"), 0) == 90
    for name in names:
        local_shard = np.load(tmp_path / "local" / "epoch_000" / name)
        remote_shard = np.load(tmp_path / "remote" / "epoch_000" / name)
        assert sorted(local_shard.files) == sorted(remote_shard.files)
        for key in local_shard.files:
            assert local_shard[key].shape == remote_shard[key].shape, key
        if name == names[0]:  # env i reset with seed + i on its actor, as here: the same first frames
            np.testing.assert_array_equal(local_shard["frames"][:, 0], remote_shard["frames"][:, 0])  # [env, step]
    for cell in ("sampling_temp_0.0_max_noops_8", "sampling_temp_0.0_max_noops_0"):
        assert remote[cell] == local[cell]
    assert rollout.observations.shape[:2] == (7, 3) and rollout.last_values.shape == (3,)


def test_a_trainer_with_actors_trains_and_evaluates_as_without(local_ray, tmp_path):
    from rlkit.rl.loops.model_free import train

    result = train(create_hparams("rlmf_cartpole", "num_env_steps=512,eval_every_iterations=2,eval_batch_size=3,"
                                  "real_num_workers=2"), str(tmp_path / "run"), seed=0)
    assert result["env_steps"] == 512 and result["iterations"] == 2
    assert set(result["eval"]) == {"sampling_temp_0.0_max_noops_0", "sampling_temp_1.0_max_noops_0"}
    assert os.path.exists(tmp_path / "run" / "policy" / "saved_model.pb")


def test_without_ray_each_ray_feature_says_how_to_install_it(tmp_path, cli):
    # A `ray` that cannot be imported, first on the path: as on a machine without the extra.
    (tmp_path / "ray.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(module, *args):
        return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                              timeout=120)
    for result in (run(LAB, *SEARCH, f"--output_dir={tmp_path / 's'}"),
                   run(LAB, "--mode=benchmark", "--hparams_set=rlmf_tiny", "--games=pong", f"--output_dir={tmp_path / 'b'}"),
                   run("rlkit.rl.trainer_model_free", "--hparams_set=rlmf_tiny", "--hparams=real_num_workers=2",
                       f"--output_dir={tmp_path / 't'}")):
        assert_one_line_error(result, "needs Ray, which is not installed: pip install -e \".[ray]\"")
    assert not os.path.exists(tmp_path / "s") and not os.path.exists(tmp_path / "b")
