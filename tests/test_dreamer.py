"""The Dreamer loop through the model-based trainer: a tiny run end to end, killed and resumed,
offline from its data, and its policy and world model in the evaluator and the player."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from conftest import assert_one_line_error

from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.hparams import create_hparams
from rlkit.models.registry import get_model
from rlkit.models.world_model import end_target
from rlkit.rl.loops.simulated_env import SimulatedBatchEnv
from rlkit.rl.loops.world_model_training import load_world_model

pytest.importorskip("minatar")

TRAINER = "rlkit.rl.trainer_model_based"
TINY = ["--hparams_set=dreamer_v2_tiny"]


@pytest.fixture(scope="module")
def dreamer_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("dreamer") / "run")
    result = subprocess.run([sys.executable, "-m", TRAINER, *TINY, f"--output_dir={out}"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stderr


def test_a_tiny_dreamer_run_has_the_run_layout_and_learns_between_env_steps(dreamer_run):
    out, log = dreamer_run
    assert {"data", "world_model", "policy", "eval_metrics", "hparams.json", "run.json"} <= set(os.listdir(out))
    hparams = create_hparams("dreamer_v2_tiny")
    assert storage.stored_steps(os.path.join(out, "data"), 0) == hparams.num_env_steps
    # Evaluated every 60 steps on the real env, with the gradient steps train_ratio asks for:
    # one at the end of the 40-step prefill, then one per 4 x 5 / 10 = 2 env steps.
    summaries = [json.load(open(os.path.join(out, "eval_metrics", f"step_{n}.json"))) for n in (60, 120)]
    assert [s["gradient_steps"] for s in summaries] == [1 + 20 // 2, 1 + 80 // 2]
    assert set(summaries[-1]["policy"]) == {"sampling_temp_0.0_max_noops_0", "sampling_temp_1.0_max_noops_0"}
    assert "Replay: up to 120 steps of 10x10x4 observations" in log  # the replay's memory, printed at start
    assert glob.glob(os.path.join(out, "world_model", "train", "events.*"))
    assert glob.glob(os.path.join(out, "world_model", "dream", "events.*"))  # open-loop predictions
    rerun = subprocess.run([sys.executable, "-m", TRAINER, *TINY, f"--output_dir={out}"], capture_output=True,
                           text=True, timeout=120)
    assert rerun.returncode == 0 and "is done" in rerun.stderr  # a finished run does nothing again


def test_the_exported_policy_acts_from_frames_alone_and_carries_its_state(dreamer_run):
    out, _ = dreamer_run
    policy = tf.saved_model.load(os.path.join(out, "policy"))
    frames = tf.constant((np.random.default_rng(0).random((3, 1, 10, 10, 4)) < 0.2).astype(np.uint8) * 255)
    policy.reset()
    first = policy.act(frames, temperature=0.0)["action"].numpy()
    assert first.shape == (3,) and ((0 <= first) & (first < 3)).all()
    state = policy.h.numpy().copy()
    policy.act(frames, temperature=0.0)
    assert not np.allclose(policy.h.numpy(), state)  # the second step advanced the state it carries
    policy.end_episodes(tf.constant([True, False, False]))
    assert policy.first.numpy().tolist() == [True, False, False]  # env 0 starts afresh at its next frame


def test_sequences_run_on_into_another_episode_with_its_first_step_marked(dreamer_run):
    out, _ = dreamer_run
    store = FrameStore(os.path.join(out, "data"))
    batch = store.sequences(np.random.default_rng(0), 64, 12)
    assert batch["frames"].shape == (64, 12, 10, 10, 4) and batch["firsts"].shape == (64, 12)
    assert batch["firsts"][:, 1:].any()  # MinAtar's early episodes are short: sequences cross their ends
    # A step after an episode's last stored step is a first; the end itself is a terminal.
    ends, firsts = batch["ends"][:, :-1].astype(bool), batch["firsts"][:, 1:]
    assert (firsts[ends]).all()


def test_the_rssm_starts_afresh_at_an_episode_start_inside_a_window():
    hparams = create_hparams("rssm_tiny")
    model = get_model(hparams.model)(hparams, (10, 10, 4), 3, 2)
    rng = np.random.default_rng(0)
    frames = tf.constant((rng.random((2, 5, 10, 10, 4)) < 0.2).astype(np.uint8) * 255)
    actions = tf.constant(rng.integers(3, size=(2, 5)), tf.int32)
    firsts = tf.constant([[True, False, False, True, False]] * 2)
    states = model.observe(frames, actions, firsts, seed=tf.constant([1, 2]))
    np.testing.assert_array_equal(states["h"][:, 3].numpy(), 0.0)  # h restarts where the episode does
    assert np.abs(states["h"][:, 2].numpy()).sum() > 0
    loss, metrics, _ = model.train_loss(dict(frames=frames, actions=actions, rewards=tf.zeros([2, 5]),
                                             ends=tf.constant([[0, 0, 1, 0, 0]] * 2), firsts=firsts))
    assert np.isfinite(float(loss)) and {"kl", "continue_loss", "reward_loss"} <= set(metrics)


def test_a_killed_dreamer_run_resumes_with_its_replay_and_gradient_steps(cli, tmp_path):
    args = [*TINY, "--hparams=num_env_steps=400,eval_every_steps=400"]
    out = str(tmp_path / "run")
    process = subprocess.Popen([sys.executable, "-m", TRAINER, *args, f"--output_dir={out}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    while time.time() < deadline and len(glob.glob(os.path.join(out, "world_model", "ckpt-*.index"))) < 3:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stored = storage.stored_steps(os.path.join(out, "data"), 0)
    killed_at = int(tf.train.latest_checkpoint(os.path.join(out, "world_model")).split("ckpt-")[1])
    assert 0 < stored < 400 and killed_at > 0
    resumed = cli(TRAINER, *args, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"at {killed_at} gradient steps" in resumed.stderr and f"Replay: {stored} stored steps" in resumed.stderr
    assert storage.stored_steps(os.path.join(out, "data"), 0) == 400  # the replay went on from where it was
    summary = json.load(open(os.path.join(out, "eval_metrics", "step_400.json")))
    assert summary["gradient_steps"] == 1 + (400 - 40) // 2  # no step lost or taken twice


def test_an_offline_run_learns_from_another_runs_data_alone(dreamer_run, cli, tmp_path):
    out, _ = dreamer_run
    offline = str(tmp_path / "offline")
    result = cli(TRAINER, *TINY, f"--offline_data_dir={out}/data", f"--output_dir={offline}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Offline: 120 stored steps" in result.stderr
    assert not os.path.exists(os.path.join(offline, "data"))  # no env was stepped into a replay
    summary = json.load(open(os.path.join(offline, "eval_metrics", "step_120.json")))
    assert summary["gradient_steps"] == create_hparams("dreamer_v2_tiny").offline_updates
    assert os.path.exists(os.path.join(offline, "policy", "saved_model.pb"))
    assert_one_line_error(cli(TRAINER, "--hparams_set=rlmb_tiny", f"--offline_data_dir={out}/data",
                              f"--output_dir={tmp_path / 'simple'}"), "--offline_data_dir", "Dreamer")
    assert not os.path.exists(tmp_path / "simple")


def test_the_evaluator_and_the_player_take_a_dreamer_run(dreamer_run, cli, tmp_path):
    out, _ = dreamer_run
    result = cli("rlkit.rl.evaluator", f"--policy_dir={out}/policy", f"--eval_metrics_dir={tmp_path / 'real'}")
    assert result.returncode == 0, result.stderr[-3000:]
    result = cli("rlkit.rl.evaluator", "--mode=agent_simulated", f"--policy_dir={out}/policy",
                 f"--wm_dir={out}/world_model", f"--data_dir={out}/data", f"--eval_metrics_dir={tmp_path / 'sim'}")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.load(open(tmp_path / "sim" / "summary.json"))
    assert summary["results"]["policy"]["sampling_temp_1.0_max_noops_0"]["mean_length"] > 0
    result = cli("rlkit.rl.player", f"--wm_dir={out}/world_model", f"--policy_dir={out}/policy", "--dry_run",
                 f"--video_dir={tmp_path / 'player'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.path.exists(tmp_path / "player" / "player_minatar_breakout_sim_and_real.mp4")
    assert "Loading the world model and the policy" in result.stderr  # said before TensorFlow loads them


def test_a_tiny_dreamer_v3_run_trains_and_the_player_takes_it(cli, tmp_path):
    """dreamer_v3_tiny (issue 67) on the same loop: two-hot reward and critic heads, return
    normalisation; its world model and policy serve the player."""
    out = tmp_path / "run"
    result = cli(TRAINER, "--hparams_set=dreamer_v3_tiny", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.load(open(out / "eval_metrics" / "step_120.json"))
    assert summary["gradient_steps"] == 1 + 80 // 2
    saved = json.load(open(out / "hparams.json"))
    assert saved["world_model"]["reward_head"] == saved["actor_critic"]["critic_head"] == "twohot"
    # The player steps the world model beside the real game (its two-hot reward head included),
    # as the evaluator's simulated mode does (tested on DreamerV2's run above).
    result = cli("rlkit.rl.player", f"--wm_dir={out}/world_model", f"--policy_dir={out}/policy", "--dry_run",
                 f"--video_dir={tmp_path / 'player'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.path.exists(tmp_path / "player" / "player_minatar_breakout_sim_and_real.mp4")
    # Its dream image (model, truth, difference) comes out of TensorBoard as the docs' PNGs do.
    result = subprocess.run([sys.executable, "scripts/dream_image.py", f"{out}/world_model/dream",
                             f"{tmp_path / 'dream.png'}"], capture_output=True, text=True, timeout=300,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-3000:]
    image = tf.io.decode_png(open(tmp_path / "dream.png", "rb").read()).numpy()
    assert image.shape[1] % 3 == 0 and image.shape[2] == 3 and image.max() > 0


def test_minatars_render_notice_stays_out_of_the_terminal(dreamer_run):
    """Without seaborn (rlkit's minatar extra alone) MinAtar warns at import that it cannot render;
    rlkit draws MinAtar's frames itself."""
    out, _ = dreamer_run
    script = ("import runpy, sys\n"
              "sys.modules['seaborn'] = None  # as where seaborn is not installed\n"
              f"sys.argv = ['player', '--wm_dir={out}/world_model', '--dry_run']\n"
              "runpy.run_module('rlkit.rl.player', run_name='__main__', alter_sys=True)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Dry run" in result.stderr and "render" not in result.stderr, result.stderr[-3000:]


def test_the_world_models_env_ends_a_dreamer_episode_on_the_step_its_continue_head_flags(dreamer_run):
    """The RSSM's continue head reads the state after each action: the step it flags ends the
    episode (an ending step), not the step after (as a SimPLe model's last frame would), and the
    env starts again from real frames."""
    out, _ = dreamer_run
    hparams = create_hparams("dreamer_v2_tiny")
    model = load_world_model(hparams.world_model, os.path.join(out, "world_model"), (10, 10, 4), 3, 2)
    assert end_target(hparams.world_model) == "ending_step"
    last = model.continue_head.layers[-1]
    last.kernel.assign(tf.zeros_like(last.kernel))
    last.bias.assign([-10.0])  # sure that every step ends its episode
    store = FrameStore(os.path.join(out, "data"))
    env = SimulatedBatchEnv(model, store, 3, gym.spaces.Discrete(3))
    env.reset(seed=0)
    starts = {frame.tobytes() for e in store.episodes for frame in store.frames(e.indices)}
    for _ in range(2):
        step = env.step(np.zeros(3, np.int64))
        assert step.terminated.all()
        assert all(frame.tobytes() in starts for frame in step.observation)


def test_the_model_checks_read_a_dreamer_run(dreamer_run, cli):
    """check_model_drift steps the RSSM from real windows object by object, check_episode_ends
    steps it once more to the ending step, as it does a SimPLe model of ending steps, and
    check_rewards reads its reward head on stored steps."""
    out, _ = dreamer_run
    result = cli("rlkit.rl.analysis.check_model_drift", f"--run={out}", "--horizon=2", "--rollouts=4")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "step | paddle | ball | trail | brick | reward, real / model | ended" in result.stdout
    result = cli("rlkit.rl.analysis.check_episode_ends", f"--wm_dir={out}/world_model", f"--data_dir={out}/data",
                 "--episodes=4")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "episodes from 4 steps before their end" in result.stdout
    result = cli("rlkit.rl.analysis.check_rewards", f"--run={out}", "--random_steps=16")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "a reward predicted on" in result.stdout and "of 16 steps without one" in result.stdout


def test_a_branch_of_a_dreamer_run_goes_on_with_its_own_hparams_ratio_and_learning_rate(dreamer_run, tmp_path):
    """scripts/branch_dreamer_run.py: the copy resumes where the run stands, with the changed
    hparams in its hparams.json, twice the gradient steps per env step from the branch on, and
    its actor's learning rate its own, not the one the checkpoint restores; the run is untouched."""
    out, _ = dreamer_run
    copy = tmp_path / "branch"
    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "branch_dreamer_run.py")
    command = [sys.executable, script, f"--branch_from={out}", f"--output_dir={copy}", "--ratio_factor=2",
               "--branch_hparams=actor_critic.entropy_coef=0.05,actor_critic.actor_learning_rate=0.002,num_env_steps=180"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    hparams = json.load(open(copy / "hparams.json"))
    assert hparams["num_env_steps"] == 180 and hparams["actor_critic"]["entropy_coef"] == 0.05
    assert json.load(open(os.path.join(out, "hparams.json")))["num_env_steps"] == 120  # the run is untouched
    assert json.load(open(copy / "branch.json"))["env_steps"] == 120
    # The tiny set owes 41 gradient steps at 120 env steps and 1 per 2 after: 30 more, twice over.
    assert json.load(open(copy / "eval_metrics" / "step_180.json"))["gradient_steps"] == 41 + 2 * 30
    checkpoint = tf.train.latest_checkpoint(str(copy / "world_model"))
    rates = [name for name, _ in tf.train.list_variables(checkpoint)
             if name.startswith("actor_optimizer/") and "learning_rate" in name]
    assert [tf.train.load_variable(checkpoint, name) for name in rates] == [pytest.approx(0.002)]
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0 and "is done" in rerun.stderr  # a rerun resumes the copy, not a new branch
    not_dreamer = subprocess.run([sys.executable, script, f"--branch_from={tmp_path / 'none'}",
                                  f"--output_dir={tmp_path / 'other'}"], capture_output=True, text=True, timeout=120)
    assert_one_line_error(not_dreamer, "is not a Dreamer run")
    assert not os.path.exists(tmp_path / "other")


def test_continuous_actions_are_squashed_samples_whose_gradient_reaches_the_actor():
    from rlkit.rl.learners.dreamer import sample_continuous

    params = tf.Variable([[0.5, -1.0, 0.0, 2.0]] * 2000)  # 2 actions: means, then raw stds
    with tf.GradientTape() as tape:
        actions, log_probs, entropy = sample_continuous(params, 1.0, tf.constant([3, 4]))
        objective = tf.reduce_mean(actions[:, 0])
    values = actions.numpy()
    assert values.shape == (2000, 2) and (np.abs(values) < 1).all()
    assert values[:, 0].mean() > 0.15 and values[:, 1].mean() < -0.3  # tanh of the means, spread by the stds
    assert np.isfinite(log_probs.numpy()).all() and entropy.shape == (2000,)
    assert np.abs(tape.gradient(objective, params).numpy()[:, 0]).sum() > 0  # reparameterised
    greedy, _, _ = sample_continuous(params[:1], 0.0, tf.constant([3, 4]))
    np.testing.assert_allclose(greedy.numpy(), np.tanh(5 * np.tanh(np.array([[0.5, -1.0]]) / 5)), rtol=1e-5)


def test_continuous_dreamer_learns_through_the_dynamics_on_pendulum_and_evaluates(cli, tmp_path):
    out = str(tmp_path / "pendulum")
    result = cli(TRAINER, "--hparams_set=dreamer_v2_pendulum_tiny", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Replay: up to 120 steps of 3 observations" in result.stderr
    summary = json.load(open(os.path.join(out, "eval_metrics", "step_120.json")))
    assert summary["policy"]["sampling_temp_1.0_max_noops_0"]["mean_length"] == 30  # Pendulum never ends early
    policy = tf.saved_model.load(os.path.join(out, "policy"))
    actions = policy.act(tf.zeros([4, 1, 3]), temperature=1.0)["action"].numpy()
    assert actions.shape == (4, 1) and (np.abs(actions) <= 2).all()  # torques within Pendulum's bounds
    result = cli("rlkit.rl.evaluator", f"--policy_dir={out}/policy", f"--eval_metrics_dir={tmp_path / 'eval'}")
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_results_script_tables_a_dreamer_run(dreamer_run, tmp_path):
    """minatar_results archives a Dreamer run (named as docs/results.md's runs are) and gives it
    its row: finished, its final return and its real steps."""
    out, _ = dreamer_run
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    (runs / "breakout").mkdir(parents=True)
    os.symlink(out, runs / "breakout" / "dreamer_100k_s0")
    (docs / "results").mkdir(parents=True)
    (docs / "results.md").write_text("<!-- results:begin -->\n<!-- results:end -->\n")
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.analysis.minatar_results", f"--runs={runs}",
                             f"--docs={docs}"], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    archived = docs / "results" / "runs" / "breakout" / "dreamer_100k_s0"
    assert json.loads((archived / "run_info.json").read_text())["finished"]
    final = json.load(open(os.path.join(out, "eval_metrics", "step_120.json")))["policy"]
    row = next(line for line in (docs / "results.md").read_text().splitlines() if "DreamerV2 @100K" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "1" and cells[6] == "120", row
    assert cells[3].startswith(f"{final['sampling_temp_1.0_max_noops_0']['mean_unclipped']:.2f}"), row


def test_dreamer_v2_atari_evaluates_whole_episodes_as_the_paper_reports():
    """DreamerV2 reports whole games (up to the 108,000-frame cap) with sticky actions and no no-ops."""
    hparams = create_hparams("dreamer_v2_atari")
    assert hparams.eval_step_limit * hparams.frame_skip == hparams.max_episode_frames == 108_000
    assert hparams.eval_max_num_noops == 0 and hparams.sticky_actions and 0.0 in hparams.eval_sampling_temps
    assert hparams.reward_transform == "tanh"  # the paper's Atari reward target
    assert create_hparams("dreamer_v2_minatar").reward_transform == "env"  # as its archived runs


def test_the_reward_head_learns_tanh_of_the_games_rewards_where_the_set_says_so(dreamer_run, tmp_path):
    from rlkit.data_generators.make_env import make_batch_env
    from rlkit.rl.loops.dreamer import Dreamer

    out, _ = dreamer_run
    store = FrameStore(os.path.join(out, "data"))
    for transform, target in (("tanh", np.tanh), ("env", np.sign), ("raw", lambda raw: raw)):
        hparams = create_hparams("dreamer_v2_tiny", f"reward_transform={transform},rewarded_sequence_share=1.0")
        env = make_batch_env(hparams, 1)
        dreamer = Dreamer(hparams, str(tmp_path / transform), env, seed=0)
        env.close()
        batches = []
        dreamer.agent.update = lambda batch: batches.append(batch) or {"loss": 0.0}
        dreamer.train(store, np.random.default_rng(0), 1, log_every=100)
        rewards, raw = batches[0]["rewards"], batches[0]["raw_rewards"]
        assert raw.any()  # sequences drawn to hold a rewarded step
        np.testing.assert_allclose(rewards, target(raw), rtol=1e-6)


def test_offline_data_of_another_frame_size_is_one_line_and_writes_nothing(rlmb_tiny_run, cli, tmp_path):
    """README's demo run stores Pong at 52x40; dreamer_v2_tiny on Pong asks for 105x80."""
    run_dir, _ = rlmb_tiny_run
    out = tmp_path / "offline"
    refused = cli(TRAINER, *TINY, "--hparams=game=pong", f"--offline_data_dir={run_dir}/data", f"--output_dir={out}")
    assert refused.returncode == 2
    assert_one_line_error(refused, "holds frames of 52x40x3", "frames are 105x80x3",
                          "add --hparams=frame_height=52,frame_width=40")
    assert "leaked" not in refused.stderr and not out.exists()
    # The named override makes them agree: a Dreamer world model learns from a SimPLe run's data.
    trained = cli(TRAINER, *TINY, "--hparams=game=pong,frame_height=52,frame_width=40",
                  f"--offline_data_dir={run_dir}/data", f"--output_dir={out}")
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "leaked" not in trained.stderr
    assert json.load(open(out / "eval_metrics" / "step_120.json"))["gradient_steps"] == 6


def test_a_world_model_and_data_of_other_games_are_one_line(rlmb_tiny_run, dreamer_run, cli, tmp_path):
    """A Pong world model stepped from MinAtar data, in each command that pairs them."""
    pong, _ = rlmb_tiny_run
    minatar, _ = dreamer_run
    for module, args in [("rlkit.rl.evaluator", ["--mode=model", f"--eval_metrics_dir={tmp_path / 'eval'}",
                                                 f"--data_dir={minatar}/data"]),
                         ("rlkit.rl.player", ["--mode=simulated", "--dry_run", f"--episodes_data_dir={minatar}/data"]),
                         ("rlkit.rl.analysis.check_episode_ends", [f"--data_dir={minatar}/data"])]:
        result = cli(module, f"--wm_dir={pong}/world_model", *args)
        assert_one_line_error(result, f"{minatar}/data holds frames of 10x10x4 (minatar/breakout",
                              "pong frames are 52x40x3")
    assert not (tmp_path / "eval").exists()
    result = cli("rlkit.rl.analysis.check_rewards", f"--run={pong}", f"--wm_dir={minatar}/world_model")
    assert_one_line_error(result, "holds frames of 52x40x3 (pong", "minatar/breakout frames are 10x10x4")


def test_a_bug_ends_with_its_traceback_and_no_binding_leak_report():
    """A command that fails for a bug with an ALE env open and TensorFlow loaded: nanobind listed
    the env's functions as leaked at the interpreter's teardown."""
    script = ("from rlkit.errors import run_command\n"
              "from rlkit.data_generators.atari import AtariBatchEnv\n"
              "def main(argv):\n"
              "    import tensorflow\n"
              "    env = AtariBatchEnv('pong', 2)\n"
              "    raise RuntimeError('a bug')\n"
              "run_command(main)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" in result.stderr and "RuntimeError: a bug" in result.stderr
    assert "leaked" not in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize("environment, expected", [({}, "1 CORES"), ({"TF_NUM_INTRAOP_THREADS": "2"}, "2 None")])
def test_the_model_based_loops_run_each_op_on_one_thread_unless_told_otherwise(environment, expected):
    script = ("import os; from rlkit.rl.loops.threads import one_thread_per_op; one_thread_per_op(); "
              "print(os.environ.get('TF_NUM_INTRAOP_THREADS'), os.environ.get('TF_NUM_INTEROP_THREADS'))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_NUM_")}
    out = subprocess.run([sys.executable, "-c", script], env={**env, **environment}, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == expected.replace("CORES", str(len(os.sched_getaffinity(0)))).split(), out.stderr[-2000:]
