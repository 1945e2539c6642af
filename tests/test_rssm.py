"""DreamerV2's world model: its loss math against plain numpy on hand values, and the model
through rlkit's world-model interface and commands."""

import os

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.hparams import create_hparams
from rlkit.models.registry import get_model
from rlkit.models.rssm import straight_through_sample, uniform_mix
from rlkit.models.rssm_losses import categorical_kl, kl_balanced
from rlkit.models.world_model import LOSS_KEYS, imagine


def numpy_kl(p_logits, q_logits):
    p = np.exp(p_logits) / np.exp(p_logits).sum(-1, keepdims=True)
    q = np.exp(q_logits) / np.exp(q_logits).sum(-1, keepdims=True)
    return (p * (np.log(p) - np.log(q))).sum(axis=(-2, -1))


def test_kl_of_groups_of_categoricals_matches_numpy():
    post = np.array([[[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]], np.float32)   # 1 x 2 groups x 3 classes
    prior = np.array([[[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]], np.float32)
    np.testing.assert_allclose(categorical_kl(post, prior).numpy(), numpy_kl(post, prior), rtol=1e-5)
    assert categorical_kl(post, post).numpy() == pytest.approx([0.0], abs=1e-6)


def test_kl_balancing_weighs_its_two_gradients_and_floors_at_free_nats():
    post = tf.Variable([[[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]])
    prior = tf.Variable([[[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]])
    kl = numpy_kl(post.numpy(), prior.numpy()).mean()
    with tf.GradientTape(persistent=True) as tape:
        loss, value = kl_balanced(post, prior, balance=0.8, free_nats=0.0)
        plain = tf.reduce_mean(categorical_kl(post, prior))
    assert loss.numpy() == pytest.approx(kl, rel=1e-5) and value.numpy() == pytest.approx(kl, rel=1e-5)
    # The prior gets 0.8 of the plain KL's gradient, the posterior 0.2.
    np.testing.assert_allclose(tape.gradient(loss, prior), 0.8 * tape.gradient(plain, prior), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tape.gradient(loss, post), 0.2 * tape.gradient(plain, post), rtol=1e-5, atol=1e-7)
    floored, _ = kl_balanced(post, prior, balance=0.8, free_nats=10.0)
    assert floored.numpy() == pytest.approx(10.0)  # below the free nats: no gradient either
    with tf.GradientTape() as tape:
        floored, _ = kl_balanced(post, prior, balance=0.8, free_nats=10.0)
    assert all(g is None or not np.any(g) for g in tape.gradient(floored, [post, prior]))


def test_uniform_mix_floors_every_class_at_mix_over_classes_and_zero_mix_changes_nothing():
    logits = np.array([[[30.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]], np.float32)  # a near one-hot group
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    mixed = np.exp(uniform_mix(tf.constant(logits), 0.01).numpy())
    np.testing.assert_allclose(mixed, 0.99 * probabilities + 0.01 / 4, rtol=1e-5)
    assert mixed.min() >= 0.0025 * (1 - 1e-5)
    np.testing.assert_allclose(mixed.sum(-1), 1.0, rtol=1e-6)
    assert uniform_mix(tf.constant(logits), 0.0).numpy() == pytest.approx(logits)


def test_reward_detection_counts_predicted_rewards_on_rewarded_steps_and_false_ones_elsewhere():
    from rlkit.models.rssm_losses import reward_detection

    means = tf.constant([0.7, 0.2, -0.9, 0.6, 0.1, 0.0])
    rewards = tf.constant([1.0, 1.0, -1.0, 0.0, 0.0, 0.0])
    detection = reward_detection(means, rewards)
    assert float(detection["reward_recall"]) == pytest.approx(2 / 3)
    assert float(detection["reward_false_rate"]) == pytest.approx(1 / 3)
    assert float(detection["reward_on_rewarded"]) == pytest.approx((0.7 + 0.2 + 0.9) / 3)
    none = reward_detection(tf.zeros([4]), tf.zeros([4]))  # no rewarded step: 0, not NaN
    assert {name: float(value) for name, value in none.items()} == dict(
        reward_accuracy=1.0, reward_recall=0.0, reward_false_rate=0.0, reward_on_rewarded=0.0)


def test_straight_through_samples_are_one_hot_with_the_probabilities_gradient():
    logits = tf.Variable([[[0.5, -1.0, 2.0, 0.0]] * 3] * 1000)  # 1000 x 3 groups x 4 classes
    with tf.GradientTape() as tape:
        sample = straight_through_sample(logits, seed=(1, 2))
        weighted = tf.reduce_sum(sample * tf.constant([1.0, 2.0, 3.0, 4.0]))
    values = sample.numpy()
    np.testing.assert_allclose(values.sum(-1), 1.0, rtol=1e-6)
    assert set(np.unique(np.round(values, 5))) <= {0.0, 1.0}
    probabilities = np.exp([0.5, -1.0, 2.0, 0.0]) / np.exp([0.5, -1.0, 2.0, 0.0]).sum()
    np.testing.assert_allclose(values.reshape(-1, 4).mean(0), probabilities, atol=0.02)  # sampled as the logits say
    with tf.GradientTape() as probability_tape:
        expected = tf.reduce_sum(tf.nn.softmax(logits) * tf.constant([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(tape.gradient(weighted, logits), probability_tape.gradient(expected, logits),
                               rtol=1e-5, atol=1e-7)
    greedy = straight_through_sample(logits[:1], temperature=0).numpy()
    assert (greedy.argmax(-1) == 2).all()
    tempered = straight_through_sample(logits, seed=(3, 4), temperature=0.5).numpy().reshape(-1, 4).mean(0)
    np.testing.assert_allclose(tempered, probabilities ** 2 / (probabilities ** 2).sum(), atol=0.02)


def minatar_windows(batch, length, channels=4, seed=0):
    rng = np.random.default_rng(seed)
    frames = (rng.random((batch, length, 10, 10, channels)) < 0.1).astype(np.uint8) * 255
    ends = np.zeros((batch, length), np.int32)
    ends[0, -1] = 1
    return dict(frames=tf.constant(frames), actions=tf.constant(rng.integers(3, size=(batch, length)), tf.int32),
                rewards=tf.constant(rng.integers(2, size=(batch, length)), tf.int32), ends=tf.constant(ends))


def test_the_rssm_trains_and_steps_through_the_world_model_interface():
    hparams = create_hparams("rssm_tiny", "learning_rate=3e-3")
    model = get_model(hparams.model)(hparams, (10, 10, 4), 3, 2)
    features = minatar_windows(4, hparams.num_context_frames + hparams.num_target_frames)
    optimizer = model.make_optimizer()
    losses = []
    for _ in range(30):
        with tf.GradientTape() as tape:
            loss, metrics = model.loss_and_metrics(features, training=True)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        losses.append(float(loss))
    assert LOSS_KEYS <= set(metrics) and {"kl", "continue_loss", "image_loss"} <= set(metrics)
    assert losses[-1] < 0.8 * losses[0], losses  # it learns the batch it sees
    per_channel = [float(metrics[f"channel_{c}_image_loss"]) for c in range(4)]  # which object it misses
    assert sum(per_channel) == pytest.approx(float(metrics["image_loss"]), rel=1e-4)
    context = hparams.num_context_frames
    frames, rewards, ends, history, _ = imagine(model, features["frames"][:, :context].numpy(),
                                                np.ones((4, 5), np.int32), temperature=1.0,
                                                history_actions=features["actions"][:, :context - 1].numpy())
    assert frames.shape == (4, 5, 10, 10, 4) and frames.dtype == np.uint8 and set(np.unique(frames)) <= {0, 255}
    assert rewards.shape == (4, 5) and set(np.unique(rewards)) <= {-1, 0, 1} and ends.dtype == bool
    assert history.shape == (4, context, 10, 10, 4)
    predicted = model.infer(features)
    assert predicted["frames"].shape == (4, 10, 10, 4) and predicted["rewards"].shape == (4,)
    # At temperature 0 the prior step repeats: the env's ends are where 1 - P(continue) is above 0.5.
    state = model.start_state(features["frames"][:, :context], features["actions"][:, :context - 1])
    probabilities = model.end_probabilities(None, np.ones(4, np.int32), state, 0.0).numpy()
    _, _, ends, _ = model.next_frame_and_end(None, np.ones(4, np.int32), state, 0.0)
    assert probabilities.shape == (4,) and ((0 <= probabilities) & (probabilities <= 1)).all()
    np.testing.assert_array_equal(ends.numpy(), probabilities > 0.5)
    # The reward head's distribution: graded, and the step's reward is its likeliest.
    rewarded = model.reward_probabilities(None, np.ones(4, np.int32), state, 0.0).numpy()
    _, rewards, _, _ = model.next_frame_and_end(None, np.ones(4, np.int32), state, 0.0)
    _, means, _, _ = model.next_frame_and_end(None, np.ones(4, np.int32), state, 0.0, expected_reward=True)
    assert rewarded.shape == (4, 3) and np.allclose(rewarded.sum(axis=1), 1.0) and (rewarded > 0).all()
    np.testing.assert_array_equal(rewarded.argmax(axis=1) - 1, rewards.numpy())
    weights = np.exp(-0.5 * (means.numpy()[:, None] - np.array([-1.0, 0.0, 1.0])) ** 2)
    np.testing.assert_allclose(rewarded, weights / weights.sum(axis=1, keepdims=True), rtol=1e-5)


def test_trainer_world_model_trains_an_rssm_on_collected_minatar_data(cli, tmp_path):
    collected = cli("rlkit.rl.collect", "--hparams_set=collect_random_tiny", "--hparams=game=minatar/breakout",
                    f"--output_dir={tmp_path / 'random'}")
    assert collected.returncode == 0, collected.stderr[-3000:]
    out = str(tmp_path / "rssm")
    result = cli("rlkit.rl.trainer_world_model", "--hparams_set=rssm_tiny", f"--data_dir={tmp_path / 'random'}/data",
                 f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert tf.train.latest_checkpoint(out).endswith("ckpt-4")
    assert os.path.isdir(os.path.join(out, "dream"))


def test_lambda_returns_match_a_plain_loop_on_hand_values():
    from rlkit.rl.learners.dreamer import lambda_returns, trajectory_weights

    rewards = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], np.float32)       # H=3, B=2
    discounts = np.array([[0.9, 0.9], [0.9, 0.0], [0.9, 0.9]], np.float32)
    values = np.array([[0.5, 0.1], [1.0, 2.0], [2.0, 3.0], [4.0, 5.0]], np.float32)  # H+1
    lam = 0.95
    expected = np.zeros((3, 2), np.float32)
    for b in range(2):
        following = values[3, b]
        for t in (2, 1, 0):
            following = rewards[t, b] + discounts[t, b] * ((1 - lam) * values[t + 1, b] + lam * following)
            expected[t, b] = following
    np.testing.assert_allclose(lambda_returns(rewards, values, discounts, lam).numpy(), expected, rtol=1e-6)
    # By hand, env 1: the episode ends after its second step, so V_1 is its reward alone.
    assert expected[1, 1] == pytest.approx(2.0)
    np.testing.assert_allclose(trajectory_weights(discounts).numpy(), [[1, 1], [0.9, 0.9], [0.81, 0.0]], rtol=1e-6)
    # lambda 0 is the one-step TD target, lambda 1 the discounted sum bootstrapped at the end.
    np.testing.assert_allclose(lambda_returns(rewards, values, discounts, 0.0).numpy(),
                               rewards + discounts * values[1:], rtol=1e-6)


def test_imagination_starts_from_a_uniform_subset_of_the_states_or_from_all():
    from rlkit.rl.learners.dreamer import imagination_starts

    chosen = [imagination_starts(20, 5, tf.constant([seed, 0])).numpy() for seed in range(200)]
    assert all(len(c) == 5 and len(set(c)) == 5 and c.min() >= 0 and c.max() < 20 for c in chosen)
    counts = np.bincount(np.concatenate(chosen), minlength=20)  # 50 expected per state
    assert counts.min() > 25 and counts.max() < 80
    np.testing.assert_array_equal(np.sort(imagination_starts(20, 64, tf.constant([1, 2])).numpy()), np.arange(20))


def test_the_actor_loss_is_reinforce_for_rho_1_and_the_returns_gradient_for_rho_0():
    from rlkit.rl.learners.dreamer import actor_loss, critic_loss

    log_probs = tf.Variable([[-1.0, -2.0]])
    returns = tf.Variable([[3.0, 1.0]])
    baselines, weights, entropy = tf.constant([[1.0, 1.0]]), tf.constant([[1.0, 0.5]]), tf.constant([[0.7, 0.2]])
    with tf.GradientTape(persistent=True) as tape:
        reinforce, metrics = actor_loss(log_probs, entropy, returns, baselines, weights, rho=1.0, entropy_coef=1e-3)
        backprop, _ = actor_loss(log_probs, entropy, returns, baselines, weights, rho=0.0, entropy_coef=1e-3)
    expected = -np.mean([1.0 * (-1.0 * 2.0 + 1e-3 * 0.7), 0.5 * (-2.0 * 0.0 + 1e-3 * 0.2)])
    assert reinforce.numpy() == pytest.approx(expected)
    np.testing.assert_allclose(tape.gradient(reinforce, log_probs), [[-1.0, 0.0]])  # -w (V - v) / n
    np.testing.assert_array_equal(tape.gradient(reinforce, returns), 0.0)  # advantages are constants
    np.testing.assert_allclose(tape.gradient(backprop, returns), [[-0.5, -0.25]])  # -w / n
    assert set(metrics) == {"actor_loss", "actor_entropy", "actor_advantage", "imagined_return"}
    assert metrics["actor_advantage"].numpy() == pytest.approx(np.mean([1.0 * 2.0, 0.5 * 0.0]))
    loss, _ = critic_loss(tf.constant([[2.0, 0.0]]), returns, weights)
    assert loss.numpy() == pytest.approx(np.mean([0.5 * 1.0, 0.5 * 0.5 * 1.0]))


def test_the_dreamer_agent_updates_its_world_model_actor_and_critic_and_copies_the_slow_critic():
    from rlkit.rl.learners.dreamer import DreamerAgent

    hparams, world_model = create_hparams("dreamer_actor_critic_tiny"), create_hparams("rssm_tiny")
    agent = DreamerAgent(hparams, world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0)
    features = minatar_windows(4, world_model.num_context_frames + world_model.num_target_frames)
    actor_before = [v.numpy().copy() for v in agent.actor.trainable_variables]
    target_before = [v.numpy().copy() for v in agent.target_critic.variables]
    metrics = agent.update(features)
    assert {"model_loss", "kl", "actor_loss", "actor_entropy", "actor_advantage", "imagined_return",
            "critic_loss"} <= set(metrics)
    assert all(np.isfinite(float(value)) for value in metrics.values())
    assert any(np.any(b != a.numpy()) for b, a in zip(actor_before, agent.actor.trainable_variables))
    # The slow critic stays until target_update_period (2) updates, then copies the critic.
    assert all(np.array_equal(b, a.numpy()) for b, a in zip(target_before, agent.target_critic.variables))
    agent.update(features)
    assert int(agent.updates) == 2
    assert all(np.array_equal(c.numpy(), t.numpy()) for c, t in zip(agent.critic.variables, agent.target_critic.variables))
    assert not all(np.array_equal(b, t.numpy()) for b, t in zip(target_before, agent.target_critic.variables))


def test_dreamer_v3s_agent_trains_two_hot_heads_normalises_returns_and_moves_its_slow_critic_by_ema():
    """with_dreamer_v3's options on the same agent: the reward and critic heads are two-hot
    categoricals that start at 0, returns near 0 are not scaled up, the slow critic moves 2% of
    the way to the critic at every update (not a copy every period), and the returns bootstrap
    from the critic being trained, not the slow one."""
    from rlkit.models.twohot import NUM_BINS, bins, symexp
    from rlkit.rl.learners.dreamer import DreamerAgent

    hparams = create_hparams("dreamer_v3_tiny")
    agent = DreamerAgent(hparams.actor_critic, hparams.world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0)
    assert agent.critic.output_shape[-1] == NUM_BINS and agent.world_model.twohot_reward
    features = minatar_windows(4, hparams.world_model.num_context_frames + hparams.world_model.num_target_frames)
    flat = tf.zeros([5, hparams.world_model.deter_size
                     + hparams.world_model.stoch_groups * hparams.world_model.stoch_classes])
    np.testing.assert_allclose(agent.values(agent.critic, flat).numpy(), 0.0, atol=1e-6)  # zero-initialised
    # The reward head, zero-initialised too: each reward's probability is its share of the bins
    # (tests/test_dreamer_v3_math.py), not a Gaussian's around the mean.
    model, context = agent.world_model, hparams.world_model.num_context_frames
    state = model.start_state(features["frames"][:, :context], features["actions"][:, :context - 1])
    middle = np.sum(np.abs(np.linspace(-20, 20, NUM_BINS)) < np.log(2) / 2) / NUM_BINS
    np.testing.assert_allclose(model.reward_probabilities(None, np.ones(4, np.int32), state).numpy(),
                               [[(1 - middle) / 2, middle, (1 - middle) / 2]] * 4, rtol=1e-5)
    slow_before = [v.numpy().copy() for v in agent.target_critic.variables]
    metrics = agent.update(features)
    assert all(np.isfinite(float(value)) for value in metrics.values())
    assert float(metrics["return_scale"]) == 1.0  # returns near 0: never scaled up
    assert float(agent.return_high) >= float(agent.return_low)  # (their EMA: tests/test_dreamer_v3_math.py)
    for before, slow, online in zip(slow_before, agent.target_critic.variables, agent.critic.variables):
        np.testing.assert_allclose(slow.numpy(), 0.98 * before + 0.02 * online.numpy(), rtol=1e-5, atol=1e-6)
    assert {"return_low", "return_high"} <= set(agent.checkpointables())
    # Imagination's values (the returns' bootstrap and the advantages' baseline) are the critic's
    # own, as DreamerV3 computes them, not its slow copy's: made to differ here, the critic's
    # output all but certain of one bin (about 36) and the slow critic's still near 0.
    agent.critic.layers[-1].bias.assign(20.0 * tf.one_hot(150, NUM_BINS))
    start = (tf.zeros([8, hparams.world_model.deter_size]), tf.one_hot(tf.zeros([8, hparams.world_model.stoch_groups],
                                                                                 tf.int32), hparams.world_model.stoch_classes))
    imagined, _, _, values, _, _ = agent.imagined_returns(start)
    flat = tf.reshape(imagined, [-1, imagined.shape[-1]])
    np.testing.assert_allclose(values.numpy().ravel(), agent.values(agent.critic, flat).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values.numpy(), symexp(bins()[150]).numpy(), rtol=0.01)
    assert np.all(np.abs(agent.values(agent.target_critic, flat).numpy()) < 0.01)
    # The actor's probabilities have 1% of uniform mixed in: an actor made certain of action 0
    # still gives each action unimix / actions, in imagination and in the acting policy.
    assert hparams.actor_critic.actor_unimix == 0.01
    output_layer = agent.actor.layers[-1]
    output_layer.bias.assign([1e4, 0.0, 0.0])
    output_layer.kernel.assign(tf.zeros_like(output_layer.kernel))
    _, log_probs, entropies = agent.imagine(start)
    assert np.all(np.isfinite(log_probs.numpy())) and np.min(log_probs.numpy()) >= np.log(0.01 / 3) - 1e-4
    floor = -(0.99 + 0.01 / 3) * np.log(0.99 + 0.01 / 3) - 2 * (0.01 / 3) * np.log(0.01 / 3)
    np.testing.assert_allclose(entropies.numpy(), floor, rtol=1e-4)
    frames = np.zeros((3000, 1, 10, 10, 4), np.uint8)
    acted = agent.policy.act(frames, tf.constant(1.0))["action"].numpy()
    assert 0.002 < np.mean(acted != 0) < 0.015  # 2 x 0.01 / 3: about 20 of 3,000
    # DreamerV2's agent keeps its checkpoint as it was.
    v2 = create_hparams("dreamer_v2_tiny")
    v2_agent = DreamerAgent(v2.actor_critic, v2.world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0)
    assert "return_low" not in v2_agent.checkpointables()
    assert v2_agent.returns_critic is v2_agent.target_critic  # DreamerV2's returns: the slow critic's


def observed_step_by_step(model, frames, actions, firsts, seed):
    """RSSM.observe as a plain loop of the interface's steps (observe_step, advance and the prior
    on each h): what observe's batched form must equal."""
    embeddings = model.embed(frames)
    h = model.initial_state(frames.shape[0])[0]
    out = {name: [] for name in ("h", "z", "posterior_logits", "prior_logits", "h_after")}
    for t in range(frames.shape[1]):
        if t > 0:
            h = tf.where(firsts[:, t, None], tf.zeros_like(h), out["h_after"][-1])
        out["prior_logits"].append(model._logits(model.prior_net, h))
        (h, z), logits = model.observe_step(h, embeddings[:, t], seed + t)
        out["h"].append(h)
        out["z"].append(z)
        out["posterior_logits"].append(logits)
        out["h_after"].append(model.advance((h, z), actions[:, t]))
    return {name: tf.stack(values, 1) for name, values in out.items()}


def test_observe_takes_the_steps_of_a_plain_loop_with_their_gradients():
    hparams = create_hparams("rssm_minatar")  # the real sizes: batched matmuls round differently
    model = get_model(hparams.model)(hparams, (10, 10, 4), 3, 2)
    rng = np.random.default_rng(0)
    frames = tf.constant((rng.random((3, 6, 10, 10, 4)) < 0.2).astype(np.uint8) * 255)
    actions = tf.constant(rng.integers(3, size=(3, 6)), tf.int32)
    firsts = tf.constant([[True, False, False, True, False, False]] * 3)
    seed = tf.constant([3, 4])

    def loss_of(states):  # every output, weighted so that each one's gradient counts
        return sum(tf.reduce_sum(tf.sin(value) * (i + 1)) for i, value in enumerate(states.values()))

    results = []
    for observe in (model.observe, lambda *args: observed_step_by_step(model, *args)):
        with tf.GradientTape() as tape:
            states = observe(frames, actions, firsts, seed)
            loss = loss_of({name: states[name] for name in sorted(states)})
        results.append((states, tape.gradient(loss, model.trainable_variables)))
    (batched, batched_gradients), (plain, plain_gradients) = results
    assert sorted(batched) == sorted(plain)
    for name in plain:
        np.testing.assert_allclose(batched[name].numpy(), plain[name].numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    used = [(b, p) for b, p in zip(batched_gradients, plain_gradients) if p is not None]
    assert len(used) >= 10 and all(b is not None for b, _ in used)
    for b, p in used:
        np.testing.assert_allclose(b.numpy(), p.numpy(), rtol=1e-3,
                                   atol=1e-6 * np.abs(p.numpy()).max())  # float32 sums of terms near the largest


def test_the_actors_batched_log_probabilities_and_gradient_are_those_of_its_sampling_calls():
    from rlkit.rl.learners.dreamer import DreamerAgent

    hparams, world_model = create_hparams("dreamer_actor_critic_minatar"), create_hparams("rssm_minatar")
    agent = DreamerAgent(hparams, world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0)
    wm, rng = agent.world_model, np.random.default_rng(1)
    start = (tf.constant(rng.normal(size=(8, world_model.deter_size)), tf.float32),
             tf.one_hot(rng.integers(32, size=(8, 32)), 32))
    seed_state = agent.seed.state.numpy()

    def plain_imagine():  # log-probabilities kept from the calls that sampled the actions
        state, features, log_probs, entropies = start, [wm.features(start)], [], []
        for _ in range(hparams.horizon):
            params = agent.actor(features[-1])
            actions = tf.cast(tf.squeeze(tf.random.stateless_categorical(params, 1, agent.seed.make_seeds(1)[:, 0]), -1),
                              tf.int32)
            log_pi = tf.nn.log_softmax(params)
            log_probs.append(tf.gather(log_pi, actions, batch_dims=1))
            entropies.append(-tf.reduce_sum(tf.exp(log_pi) * log_pi, -1))
            state, _ = wm.prior_step(state, actions)
            features.append(wm.features(state))
        return tf.stack(features), tf.stack(log_probs), tf.stack(entropies)

    results = []
    for imagine in (agent.imagine, lambda _: plain_imagine()):
        tf.keras.utils.set_random_seed(5)  # the world model's samples alike
        agent.seed.reset(seed_state)       # and the actor's
        with tf.GradientTape() as tape:
            features, log_probs, entropies = imagine(start)
            loss = tf.reduce_sum(log_probs * tf.cos(features[:-1, :, 0])) + tf.reduce_sum(entropies)
        results.append((features, log_probs, entropies, tape.gradient(loss, agent.actor.trainable_variables)))
    for batched, plain in zip(*results):
        for b, p in zip(tf.nest.flatten(batched), tf.nest.flatten(plain)):
            np.testing.assert_allclose(b.numpy(), p.numpy(), rtol=1e-4, atol=1e-5)


def test_bfloat16_compute_gives_float32s_losses_within_its_sampling_noise():
    from rlkit.rl.learners.dreamer import DreamerAgent

    hparams, world_model = create_hparams("dreamer_actor_critic_minatar"), create_hparams("rssm_minatar")
    features = minatar_windows(4, world_model.num_context_frames + world_model.num_target_frames)
    losses = {}
    for dtype in ("float32", "bfloat16"):
        tf.keras.utils.set_random_seed(0)
        agent = DreamerAgent(hparams, world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0, compute_dtype=dtype)
        losses[dtype] = agent.world_model.train_loss(features)[1]
        assert all(v.dtype == tf.float32 for v in agent.world_model.trainable_variables)  # checkpoints alike
    for name in ("image_loss", "kl", "reward_loss", "continue_loss"):
        assert float(losses["bfloat16"][name]) == pytest.approx(float(losses["float32"][name]), rel=0.1), name
