import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import RLMB_TINY_RUN_FLAGS, assert_one_line_error, run_module, run_module_saying_if_tensorflow_loaded
from rlkit.data_generators import storage
from rlkit.hparams import create_hparams
from rlkit.rl.loops.simple import simulated_iterations_target, steps_per_collection, train, world_model_target

LOOP = "rlkit.rl.trainer_model_based"
TINY = "--loop_hparams_set=rlmb_tiny"
# The session run's flags (conftest) through the loop_ aliases.
TINY_AS_THE_SESSION_RUN = [TINY, "--loop_hparams=ppo.learning_rate=3e-4"]


@pytest.fixture
def tiny_run(rlmb_tiny_run):
    return rlmb_tiny_run


def checkpoint_step(directory):
    """The number of the newest checkpoint in `directory` (0 if none)."""
    path = tf.train.latest_checkpoint(directory)
    return int(path.rsplit("-", 1)[1]) if path else 0


def run_state(out):
    """What a finished run must agree on, whether or not it was killed on the way."""
    data_dir = os.path.join(out, "data")
    return dict(
        world_model_step=checkpoint_step(os.path.join(out, "world_model")),
        policy_iteration=checkpoint_step(os.path.join(out, "policy", "checkpoints")),
        shards=[os.path.relpath(p, data_dir) for p in storage.list_shards(data_dir)],
        steps_per_shard=[storage.shard_num_steps(p) for p in storage.list_shards(data_dir)],
        policies=sorted(p for p in os.listdir(os.path.join(out, "policy")) if p.startswith("epoch_")),
        evaluations=sorted(p for p in os.listdir(os.path.join(out, "eval_metrics")) if p.endswith(".json")))


def tags(event_dir):
    accumulator = EventAccumulator(event_dir, size_guidance={"tensors": 0, "images": 0})
    accumulator.Reload()
    return accumulator, {tag for kind in accumulator.Tags().values() if isinstance(kind, list) for tag in kind}


def test_schedule_follows_simple():
    hparams = create_hparams("rlmb_base_stochastic_discrete")
    assert steps_per_collection(hparams) == 6400  # 15 epochs + the first collection: 102,400 real steps
    assert [world_model_target(hparams, e) for e in (0, 1, 2, 4)] == [45_000, 90_000, 105_000, 165_000]
    assert hparams.ppo.learning_rate == 1e-4 and hparams.simulated_num_envs == 16
    assert hparams.ppo.rollout_length == 50 and hparams.eval_sampling_temps == [0.5, 0.0, 1.0]


def test_rlmb_tiny_end_to_end(tiny_run):
    out, stderr = tiny_run
    hparams = create_hparams("rlmb_tiny")
    state = run_state(out)
    assert state["world_model_step"] == world_model_target(hparams, hparams.epochs - 1) == 60
    # 4 iterations in epoch 0, 3 x 4 in the last
    assert state["policy_iteration"] == simulated_iterations_target(hparams, 1) == 16
    assert [s.split(os.sep)[0] for s in state["shards"]] == ["epoch_000"] * 2 + ["epoch_001"] * 2 + ["epoch_002"] * 2
    assert sum(state["steps_per_shard"]) == 3 * steps_per_collection(hparams)
    assert state["policies"] == ["epoch_0", "epoch_1"]
    assert state["evaluations"] == ["epoch_0.json", "epoch_1.json"]
    for name in ("hparams.json", "operative_config.gin", "command.txt"):
        assert os.path.exists(os.path.join(out, name))
    assert "=== epoch 1/2: ppo inside the world model" in stderr and "ETA" in stderr

    with open(os.path.join(out, "eval_metrics", "epoch_1.json")) as f:
        summary = json.load(f)
    assert set(summary["policy"]) == {f"sampling_temp_{t}_max_noops_{n}" for t in (0.0, 1.0) for n in (8, 0)}
    for cell in summary["policy"].values():
        assert {"mean_unclipped", "median_unclipped", "std_unclipped", "mean_clipped"} <= set(cell)
        assert 0 < cell["mean_length"] <= hparams.eval_step_limit
    world_model = summary["world_model"]
    accuracies = {f"reward_accuracy{kind}/at_{n}" for kind in ("", "_every_step") for n in (4, 12)}
    assert accuracies | {"pixel_accuracy", "pixel_loss", "bit_loss"} <= set(world_model)
    assert all(0.0 <= world_model[k] <= 1.0 for k in accuracies | {"pixel_accuracy"})
    # Measured on the collection the model has not been trained on yet.
    assert world_model["held_out_data_epoch"] == 2 and world_model["global_step"] == 60

    eval_events, eval_tags = tags(os.path.join(out, "eval_metrics"))
    assert {"mean_reward/eval/sampling_temp_0.0_max_noops_8_clipped", "reward_accuracy/at_12",
            "loop/epoch", "loop/simulated_env_steps", "world_model/pixel_accuracy"} <= eval_tags
    # At real env steps: 200 per collection, the first one included.
    assert [e.step for e in eval_events.Tensors("reward_accuracy/at_12")] == [400, 600]
    _, world_model_tags = tags(os.path.join(out, "world_model", "train"))
    assert {"losses/loss", "losses/pixel_loss", "losses/reward_loss", "losses/bit_loss",
            "charts/pixel_accuracy"} <= world_model_tags  # the stochastic model
    _, dream_tags = tags(os.path.join(out, "world_model", "dream"))
    assert "images/dream_real_difference" in dream_tags
    policy_events, policy_tags = tags(os.path.join(out, "policy", "simulated"))
    assert {"losses/policy_loss", "losses/entropy", "charts/rollout_reward", "charts/learning_rate"} <= policy_tags
    assert policy_events.Tensors("losses/policy_loss")[-1].step == 16 * 4 * 10  # iterations x envs x steps


def learning_rates(event_dir):
    events, _ = tags(event_dir)
    return [float(tf.make_ndarray(e.tensor_proto)) for e in events.Tensors("charts/learning_rate")]


def test_the_learner_trains_on_the_real_env_as_it_collects(tmp_path):
    """SimPLe's collections: the first from a fresh learner, later ones by the loop's learner,
    each training it on the real env (here 2 iterations of 2 envs x real_rollout_length 25 steps
    per collection, not the 10 of PPO's rollouts inside the model)."""
    hparams = create_hparams("rlmb_tiny", "initial_collection=ppo,collection=learner,epochs=1,"
                                          "num_real_env_steps=100,real_rollout_length=25,"
                                          "ppo.learning_rate_schedule=linear")
    assert hparams.ppo.rollout_length == 10
    out = str(tmp_path / "run")
    summary = train(hparams, out, seed=0)
    data_dir = os.path.join(out, "data")
    assert steps_per_collection(hparams) == 100
    for data_epoch in (0, 1):
        assert sum(storage.shard_num_steps(p) for p in storage.list_shards(data_dir, [data_epoch])) == 100
    # The linear schedule runs on both paths: over the 2 x 2 real iterations, and over the
    # 3 x 4 simulated ones (the last epoch trains 3x longer).
    np.testing.assert_allclose(learning_rates(os.path.join(out, "policy", "real")),
                               [1e-4 * (1 - i / 4) for i in range(4)], rtol=1e-5)
    np.testing.assert_allclose(learning_rates(os.path.join(out, "policy", "simulated")),
                               [1e-4 * (1 - i / 12) for i in range(12)], rtol=1e-5)
    reader = tf.train.load_checkpoint(os.path.join(out, "policy", "checkpoints"))
    assert reader.get_tensor("real_iterations/.ATTRIBUTES/VARIABLE_VALUE") == 4
    assert reader.get_tensor("iteration/.ATTRIBUTES/VARIABLE_VALUE") == 12
    assert summary["epoch"] == 0 and summary["real_env_steps"] == 2 * steps_per_collection(hparams)


def run_until(out, marker):
    """Runs the tiny loop and kills it (SIGKILL) once `marker` shows in its log."""
    process = subprocess.Popen([sys.executable, "-m", LOOP, *TINY_AS_THE_SESSION_RUN, f"--output_dir={out}"],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        for line in process.stderr:
            if marker in line:
                process.kill()
                break
    finally:
        process.kill()
        process.wait(timeout=60)
    assert process.returncode == -9, f"the run ended before {marker!r}"


def test_killed_loop_resumes_where_it_stopped(tiny_run, tmp_path):
    out = str(tmp_path / "run")
    # Killed in the first epoch's world-model training, after its checkpoint at step 20.
    run_until(out, "30/40 steps")
    assert checkpoint_step(os.path.join(out, "world_model")) == 20
    assert not os.path.exists(os.path.join(out, "policy", "epoch_0"))
    # Killed in the first epoch's PPO, after its checkpoint at iteration 2.
    run_until(out, "iteration 3/4")
    assert checkpoint_step(os.path.join(out, "world_model")) == 40
    assert checkpoint_step(os.path.join(out, "policy", "checkpoints")) == 2
    first_shards = storage.list_shards(os.path.join(out, "data"))

    result = run_module(LOOP, *TINY_AS_THE_SESSION_RUN, f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Policy resumed at iteration 2" in result.stderr
    assert run_state(out) == run_state(tiny_run[0])
    assert storage.list_shards(os.path.join(out, "data"))[:len(first_shards)] == first_shards

    # A finished run rerun does nothing again: evaluations are not repeated.
    mtime = os.path.getmtime(os.path.join(out, "eval_metrics", "epoch_0.json"))
    assert run_module(LOOP, *TINY_AS_THE_SESSION_RUN, f"--output_dir={out}").returncode == 0
    assert os.path.getmtime(os.path.join(out, "eval_metrics", "epoch_0.json")) == mtime


def test_a_finished_runs_rerun_loads_no_tensorflow_and_records_no_code(tiny_run, tmp_path):
    """Nothing runs, so nothing is written: not this code's provenance record (the run was made
    by the code its records name), not command.txt; and no TensorFlow is loaded to say so."""
    import shutil

    out = str(tmp_path / "run")
    shutil.copytree(tiny_run[0], out)
    path = os.path.join(out, "provenance.json")
    records = json.load(open(path))
    records[-1]["commit"] = "0" * 40  # as if another commit had made it
    with open(path, "w") as f:
        json.dump(records, f)
    written = {name: open(os.path.join(out, name)).read() for name in ("provenance.json", "command.txt")}
    result = run_module_saying_if_tensorflow_loaded(LOOP, *TINY_AS_THE_SESSION_RUN, f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "The run is done" in result.stderr and result.stdout.strip() == "tensorflow loaded: False", result.stdout
    assert {name: open(os.path.join(out, name)).read() for name in written} == written


@pytest.mark.parametrize("args, fragments", [
    (["--loop_hparams_set=rlmb_tiyn"], ["unknown hparams set 'rlmb_tiyn'", "rlmb_tiny"]),
    ([TINY, "--loop_hparams=game=pongg"], ["pongg"]),
    ([TINY, "--loop_hparams=game=CartPole-v1"], ["gives no image frames"]),
    ([TINY, "--loop_hparams=initial_collection=expert"], ["initial_collection"]),
    ([TINY, "--loop_hparams=world_model.frame_decoding=objects"], ["frame_decoding=objects", "on/off frames"]),
    ([TINY, "--loop_hparams=world_model.frame_decoding=object"], ["frame_decoding", "likeliest", "objects"]),
    ([TINY, "--loop_hparams=collection=expert"], ["hparam 'collection' = 'expert'", "'learner', 'policy'"]),
    ([TINY, "--hparams=base_algo=a3c"], ["unknown learner (base_algo) 'a3c'"]),
    (["--hparams_set=rlmb_tiny", "--hparams=world_model.hiden_size=8"], ["did you mean 'world_model.hidden_size'"]),
])
def test_bad_input_gets_one_line_and_writes_nothing(args, fragments, tmp_path):
    out = tmp_path / "run"
    assert_one_line_error(run_module(LOOP, *args, f"--output_dir={out}"), *fragments)
    assert not out.exists()


def test_run_dir_with_other_hparams_is_refused(tiny_run):
    out, _ = tiny_run
    before = run_state(out)
    assert_one_line_error(run_module(LOOP, TINY, "--loop_hparams=epochs=3", f"--output_dir={out}"),
                          "other hparams", "epochs")
    assert run_state(out) == before
    np.testing.assert_equal(json.load(open(os.path.join(out, "hparams.json")))["epochs"], 2)


def test_hparams_flags_and_dotted_overrides_reach_the_components(tiny_run):
    """--hparams_set/--hparams (and their loop_ aliases) with nested values, saved nested."""
    from rlkit import cli

    out, _ = tiny_run  # run with RLMB_TINY_RUN_FLAGS: the plain flags, ppo.learning_rate=3e-4
    assert RLMB_TINY_RUN_FLAGS == ("--hparams_set=rlmb_tiny", "--hparams=ppo.learning_rate=3e-4")
    saved = json.load(open(os.path.join(out, "hparams.json")))
    assert saved["ppo"]["learning_rate"] == 3e-4 and saved["world_model"]["model"].startswith("next_frame")
    assert create_hparams("rlmb_tiny").ppo.learning_rate != 3e-4
    learning_rates_seen = learning_rates(os.path.join(out, "policy", "simulated"))
    assert learning_rates_seen and all(r == pytest.approx(3e-4) for r in learning_rates_seen)
    # A rerun (the loop_ aliases set the same flags) resumes from the saved file, not the registry.
    assert cli.run_hparams(out, "rlmb_tiny", True, "ppo.learning_rate=3e-4").values() == saved


def test_check_rewards_reports_the_world_models_rewards_on_a_runs_data(tiny_run):
    """rlkit/rl/analysis/check_rewards.py on the tiny loop run: its counts agree with the stored data."""
    run_dir, _ = tiny_run
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.analysis.check_rewards",
                             f"--run={run_dir}", "--random_steps=64"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    stored = sum(storage.stored_steps(os.path.join(run_dir, "data"), e) for e in range(10))
    assert lines[0].startswith(f"real data: {stored:,} steps, "), lines
    rewarded = int(lines[0].split(", ")[1].split()[0])
    for line, temperature in zip(lines[1:3], ("0", "1")):
        assert line.startswith(f"temperature {temperature}:") and line.endswith("of 64 steps without one"), line
        if rewarded:
            assert f"of {rewarded} rewarded steps" in line, line
    if rewarded:
        head = lines.pop(3)
        assert head.startswith("reward head: P(a reward) ") and "(0.5: no better than chance)" in head, head
        assert 0 <= float(head.split("of the time")[0].split()[-1]) <= 1, head
    assert lines[3].startswith("inside the world model: ") and "training rollouts had a reward" in lines[3], lines
    assert lines[4].startswith("policy entropy inside the world model: "), lines


def test_check_simulated_reward_trains_a_fresh_policy_inside_the_world_model_with_each_variant(tiny_run, tmp_path):
    """rlkit/rl/analysis/check_simulated_reward.py on the tiny loop run: a line per variant of the
    policy stage (by default each kind of simulated reward, the expected one handing out non-zero
    rewards on every rollout), leaving no summaries behind in the temporary directory; a variant that is
    no valid override gets one line before any training."""
    run_dir, _ = tiny_run
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.analysis.check_simulated_reward",
                             f"--run={run_dir}", "--iterations=2", "--seeds=0"],
                            capture_output=True, text=True, timeout=180, env={**os.environ, "TMPDIR": str(temporary)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert not [name for name in os.listdir(temporary) if name.startswith("check_simulated_reward_")]
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{run_dir}: 2 PPO iterations of "), lines
    likeliest, expected = lines[1:]
    assert likeliest.startswith("simulated_reward=likeliest seed 0: rollouts with a reward "), likeliest
    assert expected.startswith("simulated_reward=expected seed 0: rollouts with a reward 1.000, "), expected
    for line in (likeliest, expected):
        assert "real returns temperature " in line, line

    shorter = "ppo.rollout_length=4,ppo.minibatch_time_steps=4,simulated_num_envs=8"
    result = run_module("rlkit.rl.analysis.check_simulated_reward", f"--run={run_dir}", "--iterations=1", "--seeds=0",
                        f"--variants={shorter};ppo.rollout_lenght=4")
    assert_one_line_error(result, "rollout_lenght", "did you mean 'ppo.rollout_length'")
    result = run_module("rlkit.rl.analysis.check_simulated_reward", f"--run={run_dir}", "--iterations=1", "--seeds=0",
                        f"--variants={shorter}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[1].startswith(f"{shorter} seed 0: rollouts with a reward "), result.stdout


def test_results_script_archives_a_loop_run_and_tables_its_epochs(tiny_run, tmp_path):
    """rlkit/rl/analysis/minatar_results.py --pong_runs on the tiny loop run (named as the Pong run): the
    run's evaluation record is archived and docs/results.md gets one table row per epoch."""
    run_dir, _ = tiny_run
    runs, docs = tmp_path / "pong", tmp_path / "docs"
    runs.mkdir()
    os.symlink(run_dir, runs / "simple_pong_cpu_s0")
    (docs / "results").mkdir(parents=True)
    (docs / "results.md").write_text("<!-- results:begin -->\n<!-- results:end -->\nPong:\n"
                                     "<!-- pong:begin -->\nold\n<!-- pong:end -->\nend\n")
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.analysis.minatar_results",
                             f"--pong_runs={runs}", f"--docs={docs}"],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    archived = docs / "results" / "runs" / "pong" / "simple_pong_cpu_s0"
    epochs = sorted(os.listdir(os.path.join(run_dir, "eval_metrics")))
    assert sorted(p for p in os.listdir(archived / "eval_metrics") if p.endswith(".json")) == \
        [p for p in epochs if p.endswith(".json")]
    document = (docs / "results.md").read_text()
    pong = document[document.index("<!-- pong:begin -->"):document.index("<!-- pong:end -->")]
    rows = [line for line in pong.splitlines() if line.startswith("| simple_pong_cpu_s0 |")]
    summaries = [json.load(open(os.path.join(run_dir, "eval_metrics", f"epoch_{e}.json"))) for e in range(len(rows))]
    assert len(rows) == sum(p.endswith(".json") for p in epochs) > 0 and "old" not in pong, pong
    for row, summary in zip(rows, summaries):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1:3] == [str(summary["epoch"]), f"{summary['real_env_steps']:,}"], row
        assert cells[3] == f"{summary['policy']['sampling_temp_1.0_max_noops_0']['mean_unclipped']:.2f} ± " \
            f"{summary['policy']['sampling_temp_1.0_max_noops_0']['std_unclipped']:.2f}", row
    assert (docs / "results" / "pong_cpu.png").stat().st_size > 0 and document.endswith("<!-- pong:end -->\nend\n")
