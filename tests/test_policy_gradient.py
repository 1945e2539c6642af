"""REINFORCE and A2C: their returns and loss against plain numpy, whole-episode batches, learning
on CartPole, and the lab's modes through the command line."""

import glob
import json
import os

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from conftest import assert_one_line_error
from rlkit.hparams import create_hparams
from rlkit.hparams import dev_version
from rlkit.rl.experiments.curves import read_scalar
from rlkit.rl.learners.policy_gradient import policy_gradient_loss, reinforce, returns_and_advantages
from rlkit.rl.learners.returns import discounted_returns
from rlkit.rl.loops.rollout import Rollout
from rlkit.rl.experiments.session_graphs import summarize
from rlkit.rl.loops.model_free import train

LAB = "rlkit.rl.lab"
GREEDY_RETURN = "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped"


def plain_returns(rewards, dones, last_values, gamma):
    """Discounted returns of each env's steps, one env and one step at a time."""
    num_steps, num_envs = rewards.shape
    returns = np.zeros((num_steps, num_envs))
    for env in range(num_envs):
        for t in range(num_steps):
            total, discount = 0.0, 1.0
            for k in range(t, num_steps):
                total += discount * rewards[k, env]
                discount *= gamma
                if dones[k, env]:
                    break
            else:
                total += discount * last_values[env]  # the rollout ended mid-episode: bootstrap
            returns[t, env] = total
    return returns


def test_discounted_returns_match_a_plain_loop():
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(20, 3)).astype(np.float32)
    dones = rng.random((20, 3)) < 0.2
    last_values = rng.normal(size=3).astype(np.float32)
    np.testing.assert_allclose(discounted_returns(rewards, dones, last_values, 0.9),
                               plain_returns(rewards, dones, last_values, 0.9), rtol=1e-5, atol=1e-5)
    # Monte-Carlo: nothing after the end of an episode that ended on the last step.
    dones[-1] = True
    np.testing.assert_allclose(discounted_returns(rewards, dones, np.zeros(3), 0.9),
                               plain_returns(rewards, dones, np.full(3, 1e9), 0.9), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("advantage", ["returns", "gae"])
def test_policy_gradient_loss_matches_numpy(advantage):
    """REINFORCE's Monte-Carlo and A2C's n-step and GAE advantages through the one loss."""
    rng = np.random.default_rng(1)
    rewards = rng.normal(size=(6, 2)).astype(np.float32)
    values = rng.normal(size=(6, 2)).astype(np.float32)
    dones = np.zeros((6, 2), bool)
    dones[2, 0] = True
    last_values = rng.normal(size=2).astype(np.float32)
    hparams = create_hparams("a2c_gae_cartpole_params" if advantage == "gae" else "a2c_cartpole_params")
    returns, advantages = returns_and_advantages(hparams, rewards, values, dones, last_values)
    expected_returns = plain_returns(rewards, dones, last_values, hparams.gamma)
    if advantage == "returns":
        np.testing.assert_allclose(returns, expected_returns, rtol=1e-5)
        np.testing.assert_allclose(advantages, expected_returns - values, rtol=1e-5, atol=1e-6)
    else:  # GAE's returns are advantages + values; at lambda 1 they are the n-step returns
        np.testing.assert_allclose(returns, advantages + values, rtol=1e-5)
        hparams.gae_lambda = 1.0
        np.testing.assert_allclose(returns_and_advantages(hparams, rewards, values, dones, last_values)[0],
                                   expected_returns, rtol=1e-4, atol=1e-5)
    log_probs, entropy = rng.normal(size=12).astype(np.float32), rng.random(12).astype(np.float32)
    flat_values, flat_advantages, flat_returns = values.ravel(), advantages.ravel(), returns.ravel()
    loss, metrics = policy_gradient_loss(*(tf.constant(x) for x in (log_probs, entropy, flat_values, flat_advantages,
                                                                     flat_returns)), 0.5, 0.01)
    policy_loss = -np.mean(log_probs * flat_advantages)
    value_loss = np.mean((flat_values - flat_returns) ** 2)
    assert float(metrics["policy_loss"]) == pytest.approx(policy_loss, rel=1e-5)
    assert float(metrics["value_loss"]) == pytest.approx(value_loss, rel=1e-5)
    assert float(loss) == pytest.approx(policy_loss + 0.5 * value_loss - 0.01 * entropy.mean(), rel=1e-5)


def test_whole_episode_batches_hold_running_episodes_for_the_next_rollout():
    hparams = create_hparams("reinforce_cartpole_params")
    learner = reinforce(hparams, (1, 4), np.float32, gym.spaces.Discrete(2), seed=0)

    def rollout(dones, restarted=False):
        steps = np.arange(dones.size, dtype=np.float32).reshape(dones.shape) + 100 * rollout.calls
        rollout.calls += 1
        return Rollout(observations=np.repeat(steps[..., None, None], 4, axis=-1), actions=np.zeros(dones.shape, int),
                       log_probs=np.zeros(dones.shape), values=np.zeros(dones.shape), rewards=steps, dones=dones,
                       last_values=np.zeros(dones.shape[1]), restarted=restarted)
    rollout.calls = 0
    first = np.zeros((4, 2), bool)
    first[1, 0] = True  # env 0's episode ends at step 1; env 1's runs on
    batch = learner.ended_episodes(rollout(first, restarted=True))
    assert batch["rewards"][:, 0].tolist() == [0, 2]  # env 0, steps 0 and 1 (rewards = step ids)
    second = np.zeros((4, 2), bool)
    second[0, 1] = True  # env 1's episode ends at the first step of the next rollout
    batch = learner.ended_episodes(rollout(second))
    # env 1's four held steps (1, 3, 5, 7), then its first new one (101); env 0 ended nothing new.
    assert batch["rewards"][:, 0].tolist() == [1, 3, 5, 7, 101]
    assert batch["dones"][:, 0].tolist() == [False] * 4 + [True]
    # Reset envs continue nothing: what was held is dropped.
    assert learner.ended_episodes(rollout(second, restarted=True))["rewards"][:, 0].tolist() == [201]
    # An update with no ended episode waits.
    assert learner.update(rollout(np.zeros((4, 2), bool), restarted=True)) == {}


@pytest.mark.parametrize("set_name", ["rlmf_reinforce_cartpole", "rlmf_a2c_cartpole"])
def test_policy_gradients_learn_cartpole(tmp_path, set_name):
    """Seeded: within 30K agent steps (about 10 s each) the best greedy evaluation reaches
    CartPole's 195 and the last stays above 150 (seed 0 of each passes 195 by 10-20K steps)."""
    budget = 30_000
    hparams = create_hparams(set_name, f"num_env_steps={budget}")
    train(hparams, str(tmp_path), seed=0)
    _, returns = read_scalar(str(tmp_path / "eval"), GREEDY_RETURN)
    assert returns.max() >= 195, returns
    assert returns[-1] >= 150, returns


def test_summary_measures():
    summary = summarize([0, 10, 20, 30], [0.0, 10.0, 30.0, 20.0], solved_return=25.0, last=2)
    assert summary["final_return"] == 20.0 and summary["best_return"] == 30.0 and summary["best_step"] == 20
    assert summary["return_auc"] == pytest.approx(5 * 10 + 20 * 10 + 25 * 10)
    assert summary["mean_return_over_run"] == pytest.approx(500 / 30)
    assert summary["steps_to_solved"] == 20
    assert summary["stability"] == dict(evaluations=2, mean=25.0, std=5.0, min=20.0, max=30.0)
    assert summarize([0, 10], [1.0, 2.0])["steps_to_solved"] is None


def test_dev_version_shrinks_any_set_without_touching_the_learning_values():
    full = create_hparams("rlmf_a2c_atari")
    dev = dev_version(full)
    assert (dev.num_envs, dev.eval_batch_size) == (1, 1)
    assert dev.num_env_steps == 8 * 5 and dev.eval_every_iterations == 4
    assert dev.a2c == full.a2c and full.num_envs == 16  # the set itself is not edited
    loop = dev_version(create_hparams("rlmb_base_stochastic_discrete"))
    assert (loop.epochs, loop.real_num_envs, loop.world_model.train_steps) == (2, 1, 50)
    assert loop.world_model.hidden_size == create_hparams("rlmb_base_stochastic_discrete").world_model.hidden_size
    dqn = dev_version(create_hparams("rlmf_dqn_nature"))
    assert dqn.num_env_steps == 400 and dqn.dqn.learning_starts == 100 and dqn.dqn.learning_rate == 2.5e-4
    v3 = create_hparams("dreamer_v3_minatar")  # DreamerV3's options stay in its dev run
    dreamer = dev_version(v3)
    assert dreamer.num_env_steps == 400 and dreamer.world_model.batch_size <= v3.world_model.batch_size
    for name in ("reward_head", "unimix", "free_nats", "free_nats_per_step", "learning_rate"):
        assert dreamer.world_model.get(name) == v3.world_model.get(name), name
    for name in ("critic_head", "return_normalization", "entropy_coef", "actor_learning_rate", "slow_critic_rate",
                 "returns_critic", "imagined_continue"):
        assert dreamer.actor_critic.get(name) == v3.actor_critic.get(name), name
    assert dreamer.actor_critic.critic_head == "twohot"


def test_lab_train_enjoy_and_dev_through_the_command_line(cli, tmp_path):
    run = tmp_path / "run"
    result = cli(LAB, "--hparams_set=rlmf_reinforce_tiny", "--mode=train", f"--output_dir={run}")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run / "graphs" / "summary.json").read_text())
    steps, returns = read_scalar(str(run / "eval"), summary["return_tag"])
    assert summary["final_return"] == pytest.approx(returns[-1]) and summary["final_step"] == steps[-1] == 240
    assert summary["solved_return"] == 475.0 and summary["steps_to_solved"] is None
    for name in ["return.png", "train_loss.png", "train_entropy.png", "train_value_loss.png"]:
        assert name in summary["graphs"] and (run / "graphs" / name).read_bytes()[:4] == b"\x89PNG"
    # A rerun of the finished run, as if by other code, draws its graphs again (reading its event
    # files loads TensorFlow) and nothing else: no record of this code's provenance or of the
    # command, the run having been made by the code they name.
    records = json.loads((run / "provenance.json").read_text())
    records[-1]["commit"] = "0" * 40
    (run / "provenance.json").write_text(json.dumps(records))
    written = {name: (run / name).read_text() for name in ("provenance.json", "command.txt")}
    result = cli(LAB, "--hparams_set=rlmf_reinforce_tiny", "--mode=train", f"--output_dir={run}")
    assert result.returncode == 0 and "The run is done" in result.stderr, result.stderr[-3000:]
    assert {name: (run / name).read_text() for name in written} == written
    assert json.loads((run / "graphs" / "summary.json").read_text()) == summary

    videos = tmp_path / "videos"
    result = cli(LAB, "--mode=enjoy", f"--output_dir={run}", f"--video_dir={videos}", "--episodes=2")
    assert result.returncode == 0, result.stderr[-3000:]
    played = [line for line in result.stdout.splitlines() if line.startswith("episode ")]
    assert len(played) == 2 and "return" in played[0], result.stdout
    assert len(glob.glob(str(videos / "enjoy_CartPole-v1_episode_*.mp4"))) == 2

    dev = tmp_path / "dev"
    result = cli(LAB, "--hparams_set=rlmf_a2c_cartpole", "--mode=dev", f"--output_dir={dev}")
    assert result.returncode == 0, result.stderr[-3000:]
    saved = json.loads((dev / "hparams.json").read_text())
    assert saved["num_envs"] == 1 and saved["num_env_steps"] == 40
    assert json.loads((dev / "run.json").read_text())["variant"] == "dev"
    assert os.path.exists(dev / "graphs" / "summary.json")
    # A dev run resumes as a dev run only; a search names what it lacks (tests/test_ray.py runs one).
    assert_one_line_error(cli(LAB, "--hparams_set=rlmf_a2c_cartpole", "--mode=train", f"--output_dir={dev}"),
                          "holds a dev run", "--mode=dev")
    assert_one_line_error(cli(LAB, "--hparams_set=rlmf_a2c_tiny", "--mode=search", f"--output_dir={tmp_path / 's'}"),
                          "--mode=search needs --ranges")
    assert_one_line_error(cli(LAB, "--mode=enjoy", f"--output_dir={tmp_path / 'nothing'}"), "no rlkit run")


def test_a2c_on_pong_with_atari_values(tmp_path):
    result = train(create_hparams("rlmf_a2c_tiny"), str(tmp_path), seed=0)
    assert result["env_steps"] == 80
    steps, _ = read_scalar(str(tmp_path / "eval"), "mean_reward/eval/sampling_temp_1.0_max_noops_8_unclipped")
    assert steps.tolist() == [40, 80]
    assert os.path.exists(tmp_path / "policy" / "saved_model.pb")
