"""DQN and its replay: numerical checks against plain numpy, the commands end to end, learning
on CartPole, and a killed run resuming with its replay."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import frame_shape
from rlkit.data_generators.replay import ReplayMemory, SumTree
from rlkit.hparams import create_hparams
from rlkit.rl.learners.dqn import dqn_loss, epsilon_at, q_learning_targets
from rlkit.rl.learners.q_learning import target_updater
from rlkit.rl.learners.returns import n_step_targets
from rlkit.rl.loops.model_free import train
from test_storage import NUM_ENVS, fake_step, frames_at, write_collection

TRAINER = "rlkit.rl.trainer_model_free"


def test_n_step_targets_match_a_plain_loop():
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(64, 3)).astype(np.float32)
    dones = rng.random((64, 3)) < 0.2
    returns, discounts = n_step_targets(rewards, dones, 0.9)
    for i in range(64):
        expected, discount = 0.0, 0.9 ** 3
        for k in range(3):
            expected += 0.9 ** k * rewards[i, k]
            if dones[i, k]:
                discount = 0.0
                break
        assert returns[i] == pytest.approx(expected, abs=1e-5) and discounts[i] == pytest.approx(discount)


def test_dqn_and_double_dqn_targets_match_numpy():
    rng = np.random.default_rng(1)
    target, online = rng.normal(size=(2, 16, 4)).astype(np.float32)
    returns, discounts = rng.normal(size=16).astype(np.float32), np.full(16, 0.99, np.float32)
    dqn = q_learning_targets(tf.constant(target), tf.constant(online), returns, discounts, double=False).numpy()
    double = q_learning_targets(tf.constant(target), tf.constant(online), returns, discounts, double=True).numpy()
    np.testing.assert_allclose(dqn, returns + 0.99 * target.max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(double, returns + 0.99 * target[np.arange(16), online.argmax(axis=1)], rtol=1e-6)
    assert not np.allclose(dqn, double)


def test_dqn_loss_is_the_weighted_huber_loss_of_the_taken_actions():
    rng = np.random.default_rng(2)
    q_values = rng.normal(size=(8, 3)).astype(np.float32)
    actions = rng.integers(3, size=8).astype(np.int32)
    targets = (rng.normal(size=8) * 3).astype(np.float32)  # some errors beyond 1: the linear part
    weights = rng.random(8).astype(np.float32)
    loss, metrics, td_errors = dqn_loss(tf.constant(q_values), tf.constant(actions), tf.constant(targets),
                                        tf.constant(weights))
    errors = targets - q_values[np.arange(8), actions]
    huber = np.where(np.abs(errors) <= 1, 0.5 * errors ** 2, np.abs(errors) - 0.5)
    assert float(loss) == pytest.approx(np.mean(weights * huber), rel=1e-5)
    np.testing.assert_allclose(td_errors.numpy(), errors, rtol=1e-6)
    assert set(metrics) == {"loss", "q_values", "td_error"}


def test_epsilon_falls_linearly_then_stays():
    hparams = create_hparams("dqn_nature_params")
    assert epsilon_at(hparams, 0) == 1.0
    assert epsilon_at(hparams, 500_000) == pytest.approx(0.55)
    assert epsilon_at(hparams, 1_000_000) == epsilon_at(hparams, 5_000_000) == pytest.approx(0.1)


def test_sum_tree_samples_in_proportion_to_priorities():
    tree = SumTree(5)
    priorities = np.array([1.0, 0.0, 3.0, 6.0, 0.0])
    tree.set(np.arange(5), priorities)
    assert tree.total == 10.0
    drawn = tree.find(np.random.default_rng(0).uniform(0, tree.total, size=100_000))
    np.testing.assert_allclose(np.bincount(drawn, minlength=5) / 100_000, priorities / 10, atol=0.01)
    np.testing.assert_array_equal(tree.find(np.array([0.0, 0.999, 1.0, 3.999, 4.0, 9.999])), [0, 0, 2, 2, 3, 3])
    tree.grow(3000)  # room for more slots keeps the priorities
    assert tree.total == 10.0 and tree.get([3]) == 6.0


def test_prioritized_replay_draws_by_priority_with_importance_weights(tmp_path):
    replay = ReplayMemory(str(tmp_path / "replay"), NUM_ENVS, stack=2, capacity=1000, shard_steps=8,
                          prioritized=True, priority_exponent=0.5)
    for t in range(16):
        replay.add(frames_at(t)[:, :, :, :], np.array([0, 1]), fake_step(t, [False, t == 12], [0.0, 0.0]))
    candidates = replay.candidates()
    assert len(candidates) == 30  # the last step of an ongoing episode waits for its next
    sampled = replay.sample(np.random.default_rng(0), 4, importance_exponent=0.4)
    assert (sampled["weights"] == 1).all()  # every new transition has the largest priority
    td_errors = np.zeros(len(candidates))
    td_errors[:3] = [1.0, 3.0, 8.0]
    replay.update_priorities(candidates, td_errors)
    batch = replay.sample(np.random.default_rng(1), 20_000, importance_exponent=0.4)
    probabilities = (np.abs(td_errors) + 1e-6) ** 0.5
    probabilities /= probabilities.sum()
    shares = np.array([np.mean(batch["indices"] == candidates[i]) for i in range(3)])
    np.testing.assert_allclose(shares, probabilities[:3], atol=0.01)
    # w_i = (N P(i))^-beta over the batch's largest: the rarest transition has the largest weight.
    expected = (len(candidates) * probabilities[:3]) ** -0.4
    largest = (len(candidates) * probabilities.min()) ** -0.4
    for i in range(3):
        weight = batch["weights"][batch["indices"] == candidates[i]][0]
        assert weight == pytest.approx(expected[i] / largest, rel=1e-4)
    # Steps added since get the largest priority so far, and are sampled before any shard holds them.
    candidates = candidates.copy()
    for t in range(16, 24):
        replay.add(frames_at(t)[:, :, :, :], np.array([0, 1]), fake_step(t, [False, False], [0.0, 0.0]))
    new = np.setdiff1d(replay.candidates(), candidates)
    assert len(new) == 16
    np.testing.assert_allclose(replay.tree.get(new), (8.0 + 1e-6) ** 0.5)
    # The priorities are saved with each shard: a replay reopened on the directory (a resumed run)
    # has each step's, though it numbers the steps env by env, as the shards list them.
    resumed = ReplayMemory(str(tmp_path / "replay"), NUM_ENVS, stack=2, capacity=1000, shard_steps=8,
                           prioritized=True, priority_exponent=0.5)
    assert resumed.max_priority == replay.max_priority == pytest.approx(8.0 + 1e-6)

    def priority_by_step(memory):  # (env, t) -> priority, from the frames the steps stored
        steps = memory.candidates()
        env_and_t = memory.store.frames(steps)[:, 0, 0, :2]
        return {tuple(int(v) for v in key): p for key, p in zip(env_and_t, memory.tree.get(steps))}
    assert priority_by_step(resumed) == pytest.approx(priority_by_step(replay))
    assert resumed.tree.total == pytest.approx(replay.tree.total)


def test_a_step_is_sampled_as_soon_as_its_transition_is_whole_not_when_a_shard_is_written(tmp_path):
    """DQN samples every stored transition; a replay that waited for its shard (5,000 steps in
    the MinAtar sets) began learning at step 5,000 whatever learning_starts said."""
    replay = ReplayMemory(str(tmp_path / "replay"), NUM_ENVS, stack=2, capacity=1000, shard_steps=1000, n_step=3)
    for t in range(10):
        replay.add(frames_at(t), np.array([0, 1]), fake_step(t, [False, t == 6], [0.0, 0.0]))
        # Env 0's episode is going on: steps 0..t-3 start whole 3-step transitions. Env 1's
        # ended at step 6: all its 7 steps are whole then, and its next episode's as env 0's.
        whole_0 = max(t - 2, 0)
        whole_1 = max(t - 2, 0) if t < 6 else 7 + max(t - 7 - 2, 0)
        assert len(replay) == whole_0 + whole_1, t
    assert not glob.glob(str(tmp_path / "replay" / "epoch_000" / "shard_*.npz"))  # nothing written yet
    batch = replay.sample(np.random.default_rng(0), 256)
    env, t = batch["observations"][:, -1, 0, 0, 0], batch["observations"][:, -1, 0, 0, 1]
    assert set(zip(env.tolist(), t.tolist())) == {(0, s) for s in range(7)} | {(1, s) for s in range(7)}
    next_t = batch["next_observations"][:, -1, 0, 0, 1]
    running = (env == 0) | (t < 4)  # 3 steps later, in the same episode
    np.testing.assert_array_equal(next_t[running], t[running] + 3)


def test_n_step_transitions_sum_rewards_to_the_episode_end_and_stack_the_next_observation(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)  # env 0's episodes end after steps 9 and 25, env 1's after 20
    store = FrameStore(data_dir)
    indices = store.transition_indices(n_step=3)
    # Ongoing episodes (env 0 from step 26, env 1 from 21) lose their last 3 steps, not 1.
    assert len(indices) == 60 - 2 * 3
    batch = store.n_step_transitions(indices, stack=2, n_step=3, reward_column="raw_rewards")
    for i in range(len(indices)):
        env, t = batch["observations"][i, -1, 0, 0, :2]
        ends = [9, 25] if env == 0 else [20]
        end = min([e for e in ends if e >= t], default=None)
        raw = lambda s: (5.0 if s % 7 == 0 else 0.0) if env == 0 else (-2.0 if s % 5 == 0 else 0.0)  # noqa: E731
        steps = [s for s in range(t, t + 3) if end is None or s <= end]
        rewards, dones = batch["rewards"][i], batch["dones"][i]
        np.testing.assert_array_equal(rewards[:len(steps)], [raw(s) for s in steps])
        assert dones.any() == (end is not None and end < t + 3)
        if not dones.any():  # the stack 3 steps later, of the same env
            np.testing.assert_array_equal(batch["next_observations"][i, :, 0, 0, :2], [[env, t + 2], [env, t + 3]])


def test_replay_forgets_whole_old_episodes_beyond_its_capacity(tmp_path):
    replay = ReplayMemory(str(tmp_path / "replay"), NUM_ENVS, stack=1, capacity=20, shard_steps=5,
                          clip_rewards=False)
    for t in range(40):
        replay.add(frames_at(t), np.array([0, 1]), fake_step(t, [t % 10 == 9, t % 10 == 9], [1.0, 2.0]))
    # 80 steps stored, in episodes of 10 steps per env; capacity 20: the episodes whose last step
    # is older than the newest 20 steps are gone, the others stay whole.
    assert replay.num_steps == 80
    kept = replay.candidates()
    kept_times = sorted({int(t) for t in replay.store.frames(kept)[:, 0, 0, 1]})
    assert kept_times == list(range(30, 40))
    assert replay.store.compressed_bytes * 3 < FrameStore(str(tmp_path / "replay")).compressed_bytes  # freed
    batch = replay.sample(np.random.default_rng(0), 16)
    assert set(batch["rewards"][:, 0]) <= {1.0, 2.0}  # the game's rewards, unclipped
    # A new memory on the same directory reads the stored shards back: a resumed run's replay.
    again = ReplayMemory(str(tmp_path / "replay"), NUM_ENVS, stack=1, capacity=20, shard_steps=5)
    assert again.num_steps == 80 and len(again) == len(replay)


def test_vector_observations_and_float_rewards_are_stored_as_they_are(tmp_path):
    writer = storage.RolloutWriter(str(tmp_path / "data"), 0, 2)
    observations = np.array([[0.25, -1.5], [3.0, 0.125]], np.float32)
    writer.add(observations, np.array([1, 0]), fake_step(0, [False, False], [-0.75, 2.5]))
    path, arrays = writer.write_shard_arrays()
    shard = storage.load_shard(path)
    assert shard["frames"].dtype == np.float32 and shard["frames"].shape == (2, 1, 2)
    np.testing.assert_array_equal(shard["frames"][:, 0], observations)
    np.testing.assert_array_equal(shard["raw_rewards"][:, 0], [-0.75, 2.5])
    np.testing.assert_array_equal(shard["rewards"][:, 0], [-1, 1])  # clipped: the sign
    store = FrameStore(str(tmp_path / "data"))
    np.testing.assert_array_equal(store.frames([0, 1]), observations)


def test_rlmf_dqn_tiny_through_the_command_line_and_the_evaluator(cli, tmp_path):
    out = str(tmp_path / "run")
    result = cli(TRAINER, "--hparams_set=rlmf_dqn_tiny", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.path.exists(os.path.join(out, "policy", "saved_model.pb"))
    assert os.path.exists(os.path.join(out, "policy", "best", "saved_model.pb"))
    assert storage.list_shards(os.path.join(out, "replay"))  # the replay's shards
    assert "Eval sampling_temp_1.0_max_noops_30" in result.stderr
    evaluated = cli("rlkit.rl.evaluator", f"--policy_dir={out}/policy/best", f"--eval_metrics_dir={out}/eval_best",
                    "--hparams=eval_step_limit=10")
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    summary = json.load(open(os.path.join(out, "eval_best", "summary.json")))
    assert set(summary["results"]["policy"]) == {"sampling_temp_1.0_max_noops_30", "sampling_temp_1.0_max_noops_0"}


def test_exported_dqn_policy_is_epsilon_greedy_at_the_evaluation_epsilon(tmp_path):
    hparams = create_hparams("rlmf_dqn_cartpole", "num_env_steps=8,dqn.eval_epsilon=0.5,eval_every_steps=1000")
    train(hparams, str(tmp_path / "run"), seed=0)
    policy = tf.saved_model.load(str(tmp_path / "run" / "policy"))
    observations = tf.constant(np.random.default_rng(0).normal(size=(4000, 1, 4)), tf.float32)
    greedy = policy.act(observations, 0.0)
    assert (greedy["log_prob"].numpy() == 0).all()
    sampled = policy.act(observations, 1.0)
    changed = np.mean(sampled["action"].numpy() != greedy["action"].numpy())
    assert changed == pytest.approx(0.5 * 0.5, abs=0.03)  # epsilon 0.5, half of the random actions differ


def test_training_exploration_is_epsilon_greedy_and_random_actions_skip_the_network():
    import gymnasium as gym

    from rlkit.rl.learners.dqn import DQNLearner
    learner = DQNLearner(create_hparams("dqn_cartpole_params"), (1, 4), np.float32, gym.spaces.Discrete(2), seed=0)
    observations = np.random.default_rng(0).normal(size=(4000, 1, 4)).astype(np.float32)
    greedy = learner.act(observations, 0.0)
    np.testing.assert_array_equal(learner.explore(observations, 0.0), greedy)
    changed = np.mean(learner.explore(observations, 0.3) != greedy)
    assert changed == pytest.approx(0.3 * 0.5, abs=0.03)  # half of the random actions differ
    learner.policy.greedy_action = None  # at epsilon 1 every action is random: the network is not called
    assert np.bincount(learner.explore(observations, 1.0), minlength=2) / 4000 == pytest.approx([0.5, 0.5], abs=0.03)


def test_dqn_learns_cartpole(tmp_path):
    """Seeded: the best greedy evaluation reaches CartPole's 195 within 15K agent steps (~1 min)."""
    hparams = create_hparams("rlmf_dqn_cartpole")
    train(hparams, str(tmp_path / "run"), seed=0)
    from rlkit.rl.experiments.curves import read_scalar
    _, returns = read_scalar(str(tmp_path / "run" / "eval"), "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped")
    assert returns.max() >= 195, returns
    assert returns[-1] >= 150, returns


def test_target_updates_mix_or_copy_the_online_weights():
    import keras

    def network():
        return keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    online, target = network(), network()
    soft_update = target_updater(target, online, rate=0.25)  # NAF's, every step
    for _ in range(2):  # each call reads the weights as they are then
        before = [v.numpy() for v in target.variables]
        soft_update()
        for after, old, new in zip(target.variables, before, online.variables):
            np.testing.assert_allclose(after.numpy(), 0.25 * new.numpy() + 0.75 * old, rtol=1e-6)
        online.variables[0].assign(online.variables[0] + 1.0)
    target_updater(target, online)()  # DQN's periodic copy
    for after, new in zip(target.variables, online.variables):
        np.testing.assert_array_equal(after.numpy(), new.numpy())


def test_killed_dqn_run_resumes_with_its_replay_and_step_count(cli, tmp_path):
    args = ["--hparams_set=rlmf_dqn_cartpole", "--hparams=num_env_steps=1600,shard_steps=50,eval_every_steps=100000"]
    out = str(tmp_path / "run")
    process = subprocess.Popen([sys.executable, "-m", TRAINER, *args, f"--output_dir={out}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def newest_whole_checkpoint():
        # The one the checkpoint state names: a kill during a save can leave a newer .index without it.
        path = tf.train.latest_checkpoint(os.path.join(out, "checkpoints"))
        return int(path.split("ckpt-")[1]) if path else 0

    deadline = time.time() + 120
    while time.time() < deadline and newest_whole_checkpoint() < 400:  # the second checkpoint
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    replay_dir = os.path.join(out, "replay")
    stored = storage.stored_steps(replay_dir, 0)
    killed_at = newest_whole_checkpoint()
    assert 400 <= killed_at < 1600 and stored >= killed_at
    whole = len(FrameStore(replay_dir).transition_indices())

    resumed = cli(TRAINER, *args, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{killed_at} env steps" in resumed.stderr
    assert f"Replay memory: {whole} stored transitions" in resumed.stderr
    assert storage.stored_steps(replay_dir, 0) == stored + 1600 - killed_at  # the replay kept growing


def test_a_time_limit_is_not_an_end_to_bootstrap_from_nothing(tmp_path):
    """A cut episode's last steps are no transitions (their next observation is not stored), a
    terminated one's are, with no bootstrap."""
    writer = storage.RolloutWriter(str(tmp_path / "data"), 0, NUM_ENVS)
    for t in range(6):
        step = fake_step(t, [t == 5, t == 5], [1.0, 1.0])
        step.terminated = np.array([t == 5, False])  # env 0 ends in the game, env 1 at its time limit
        step.truncated = np.array([False, t == 5])
        writer.add(frames_at(t), np.array([0, 0]), step)
    writer.write_shard()
    store = FrameStore(str(tmp_path / "data"))
    for n_step, expected in ((1, 6 + 5), (2, 6 + 4)):
        indices = store.transition_indices(n_step=n_step)
        assert len(indices) == expected
        batch = store.n_step_transitions(indices, 1, n_step)
        cut = batch["observations"][:, 0, 0, 0, 0] == 1
        assert not batch["dones"][cut].any()  # env 1's transitions all bootstrap
        _, discounts = n_step_targets(batch["rewards"], batch["dones"], 0.9)
        assert (discounts[~cut] == 0).sum() == n_step  # env 0's last n steps end in the game


def test_naf_q_function_matches_numpy():
    from rlkit.rl.learners.naf import naf_q_values
    rng = np.random.default_rng(3)
    values, means, actions = rng.normal(size=5), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    lower = np.tril(rng.normal(size=(5, 2, 2)))
    q = naf_q_values(*(tf.constant(x, tf.float32) for x in (values, means, lower, actions))).numpy()
    for i in range(5):
        precision = lower[i] @ lower[i].T
        difference = actions[i] - means[i]
        assert q[i] == pytest.approx(values[i] - 0.5 * difference @ precision @ difference, rel=1e-4)
    # The greedy action is mu, where Q is V.
    at_mean = naf_q_values(*(tf.constant(x, tf.float32) for x in (values, means, lower, means))).numpy()
    np.testing.assert_allclose(at_mean, values, rtol=1e-6)
    # A curvature floor c adds c x I to P: with L at 0, Q is V - c/2 |a - mu|^2.
    floored = naf_q_values(*(tf.constant(x, tf.float32) for x in (values, means, 0 * lower, actions)), 0.1).numpy()
    np.testing.assert_allclose(floored, values - 0.05 * ((actions - means) ** 2).sum(-1), rtol=1e-5)


def test_ornstein_uhlenbeck_noise_has_unit_variance_and_lasting_pushes():
    """Each step keeps 1 - theta of the last noise: over a long run its variance is 1 and its
    lag-k autocorrelation (1 - theta)^k, where independent noise has none."""
    from rlkit.rl.learners.naf import ornstein_uhlenbeck_step
    rng, theta = np.random.default_rng(0), 0.15
    noise, draws = np.zeros(64), []
    for _ in range(4000):
        noise = ornstein_uhlenbeck_step(noise, theta, rng.standard_normal(64))
        draws.append(noise)
    draws = np.array(draws[200:])
    assert draws.var() == pytest.approx(1.0, abs=0.05)
    for lag in (1, 5):
        correlation = np.mean(draws[lag:] * draws[:-lag]) / draws.var()
        assert correlation == pytest.approx((1 - theta) ** lag, abs=0.03)


def test_naf_explores_with_correlated_noise_within_the_bounds(tmp_path):
    from rlkit.rl.learners.naf import NAFLearner
    import gymnasium as gym
    space = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    def explore(noise, seed):
        hparams = create_hparams("rlmf_naf_tiny", f"naf.exploration_noise={noise}").naf
        learner = NAFLearner(hparams, (1, 3), tf.float32, space, seed=seed)
        return np.array([learner.explore(np.zeros((4, 1, 3), np.float32), 1.0) for _ in range(300)])[..., 0]
    correlated, gaussian = explore("ornstein_uhlenbeck", 0), explore("gaussian", 0)
    np.testing.assert_array_equal(correlated, explore("ornstein_uhlenbeck", 0))  # seeded
    assert (np.abs(correlated) <= 2).all() and correlated.std() > 0.5
    def lag_one(actions):
        centered = actions - actions.mean(0)
        return np.mean(centered[1:] * centered[:-1]) / centered.var()
    assert lag_one(correlated) > 0.6 and abs(lag_one(gaussian)) < 0.2


def test_the_mean_penalty_brings_a_saturated_mu_back_from_the_bound():
    """naf.mean_penalty: with mu pinned at a bound (its value before the tanh at 8, where the
    tanh's gradient is 5e-7), 30 TD updates alone leave it there; the penalty moves it back."""
    import gymnasium as gym

    from rlkit.rl.learners.naf import NAFLearner
    space = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    rng = np.random.default_rng(0)
    batch = dict(observations=rng.normal(size=(64, 1, 3)).astype(np.float32),
                 actions=rng.uniform(-2, 2, (64, 1)).astype(np.float32),
                 rewards=rng.normal(size=64).astype(np.float32), discounts=np.full(64, 0.99, np.float32),
                 next_observations=rng.normal(size=(64, 1, 3)).astype(np.float32), weights=np.ones(64, np.float32))

    def mu_after_updates(penalty):
        hparams = create_hparams("rlmf_naf_tiny", f"naf.mean_penalty={penalty}").naf
        learner = NAFLearner(hparams, (1, 3), tf.float32, space, seed=0)
        head = learner.network.get_layer("naf").mean
        head.kernel.assign(tf.zeros_like(head.kernel))
        head.bias.assign([8.0])
        for _ in range(30):
            learner._compiled_train_step(*(tf.constant(batch[k]) for k in (
                "observations", "actions", "rewards", "discounts", "next_observations", "weights")))
        return float(head.bias.numpy()[0])

    assert mu_after_updates(0.0) == pytest.approx(8.0, abs=1e-3)  # stuck: no gradient passes the tanh
    assert mu_after_updates(0.01) < 7.98  # pulled back toward its linear range, a learning-rate step at a time


def test_a_curvature_floor_keeps_a_td_gradient_on_mu_where_l_has_shrunk_to_its_clip():
    """naf.curvature_floor: with L's diagonal below its clip (exp of -10, where no gradient passes;
    MountainCar's failing seeds, P under 2e-4 in every state), TD updates on actions that pay
    better above mu leave mu where it is; with the floor, mu moves up toward them."""
    import gymnasium as gym

    from rlkit.rl.learners.naf import NAFLearner
    space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (64, 1)).astype(np.float32)
    batch = dict(observations=rng.normal(size=(64, 1, 2)).astype(np.float32), actions=actions,
                 rewards=actions[:, 0], discounts=np.zeros(64, np.float32),  # pushing up pays
                 next_observations=rng.normal(size=(64, 1, 2)).astype(np.float32), weights=np.ones(64, np.float32))

    def mu_after_updates(floor):
        hparams = create_hparams("rlmf_naf_tiny", f"naf.curvature_floor={floor}").naf
        learner = NAFLearner(hparams, (1, 2), tf.float32, space, seed=0)
        head = learner.network.get_layer("naf")
        head.entries.kernel.assign(tf.zeros_like(head.entries.kernel))
        head.entries.bias.assign([-12.0])  # L's diagonal clipped at exp(-10)
        head.mean.kernel.assign(tf.zeros_like(head.mean.kernel))
        for _ in range(30):
            learner._compiled_train_step(*(tf.constant(batch[k]) for k in (
                "observations", "actions", "rewards", "discounts", "next_observations", "weights")))
        return float(head.mean.bias.numpy()[0])

    assert mu_after_updates(0.0) == pytest.approx(0.0, abs=1e-4)  # stuck: P is 2e-9 and passes nothing to mu
    assert mu_after_updates(0.1) > 0.005  # mu follows the rewards up


def test_rlmf_naf_tiny_through_the_command_line(cli, tmp_path):
    out = str(tmp_path / "run")
    result = cli(TRAINER, "--hparams_set=rlmf_naf_tiny", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    policy = tf.saved_model.load(os.path.join(out, "policy"))
    actions = policy.act(tf.zeros((3, 1, 3)), 0.0)["action"].numpy()
    assert actions.shape == (3, 1) and (np.abs(actions) <= 2).all()  # Pendulum's torque bounds
    shard = storage.load_shard(storage.list_shards(os.path.join(out, "replay"))[0])
    assert shard["actions"].dtype == np.float32 and shard["actions"].shape[2:] == (1,)


def test_naf_learns_pendulum(tmp_path):
    """Seeded: NAF's greedy evaluation on Pendulum-v1 is above -400 after 24K of the set's 40K
    agent steps (docs/off_policy.md: the five reported seeds are at -277 or better there, -128 to
    -187 at 40K). Not at 16K, the middle of the climb: seed 0 was -250 there on one AMD EPYC and
    -518 on another with AVX512-BF16 (same code, float32; the kernels differ); -123 and -128 at 24K."""
    train(create_hparams("rlmf_naf_pendulum", "num_env_steps=24000"), str(tmp_path / "run"), seed=0)
    from rlkit.rl.experiments.curves import read_scalar
    _, returns = read_scalar(str(tmp_path / "run" / "eval"), "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped")
    assert returns[-1] >= -400, returns


def test_rlmb_dqn_tiny_trains_dqn_inside_the_world_model(cli, tmp_path):
    out = str(tmp_path / "run")
    result = cli("rlkit.rl.trainer_model_based", "--hparams_set=rlmb_dqn_tiny", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.path.exists(os.path.join(out, "policy", "epoch_1", "saved_model.pb"))
    replay = os.path.join(out, "policy", "simulated_replay")
    # 40 simulated agent steps in epoch 0 and 3 x 40 in the last, 4 envs restarted every 5 steps.
    shard = storage.load_shard(storage.list_shards(replay)[0])
    assert shard["dones"].shape[0] == 4 and not shard["terminated"].any()
    assert shard["dones"][:, 4::5].all()  # every 5th step a restart: a cut, not an end
    # The evaluator and the player's policy takeover load it as any policy.
    from rlkit.rl.learners.policy_export import find_policies, load_policy
    stacked_frames = (4,) + frame_shape(create_hparams("rlmb_dqn_tiny"))
    act = load_policy(find_policies(os.path.join(out, "policy"), all_epochs=False)[-1][1], stacked_frames)
    assert act(np.zeros((2,) + stacked_frames, np.uint8), 1.0).shape == (2,)



def test_the_loop_refuses_an_off_policy_learner_learning_on_the_real_env():
    from rlkit.errors import UserError
    from rlkit.rl.loops.simple import check_names
    for overrides in ("collection=learner", "initial_collection=dqn"):
        with pytest.raises(UserError, match="learns from replay"):  # checked before a run dir exists
            check_names(create_hparams("rlmb_dqn_tiny", overrides))
