"""rlkit's SimPLe against the original (tensor2tensor rl/trainer_model_based_params.py,
models/video/basic_*_params.py, basic_stochastic.py): the values of every named set, and the
behaviours that differed before (issue 12)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rlkit.hparams import create_hparams
from rlkit.hparams.published import (SIMPLE_DETERMINISTIC_PIXEL_NOISE, SIMPLE_LOOP, SIMPLE_PPO,
                                     SIMPLE_STOCHASTIC_DISCRETE)
from rlkit.models.optimizers import WarmupSchedule, world_model_optimizer
from rlkit.models.registry import get_model
from rlkit.rl.loops.evaluation import reward_accuracies
from rlkit.rl.loops.simple import ppo_iterations_factor, simulated_iterations_target, world_model_target

# The original's values, by rlkit's names (rlkit.hparams.published, where each is sourced).
LOOP, PPO = SIMPLE_LOOP, SIMPLE_PPO
STOCHASTIC_DISCRETE, DETERMINISTIC_PIXEL_NOISE = SIMPLE_STOCHASTIC_DISCRETE, SIMPLE_DETERMINISTIC_PIXEL_NOISE
ORIGINAL_SETS = {
    "rlmb_base": (dict(LOOP), DETERMINISTIC_PIXEL_NOISE),
    "rlmb_base_stochastic_discrete": (dict(LOOP), STOCHASTIC_DISCRETE),
    "rlmb_long_stochastic_discrete": (dict(LOOP), dict(STOCHASTIC_DISCRETE, num_target_frames=16, batch_size=2)),
    "rlmb_base_stochastic_discrete_20k": (dict(LOOP, num_real_env_steps=19200, epochs=6,
                                               simulated_ppo_iterations=2000), STOCHASTIC_DISCRETE),
    "rlmb_base_stochastic_discrete_50k": (dict(LOOP, num_real_env_steps=48000), STOCHASTIC_DISCRETE),
    "rlmb_base_stochastic_discrete_1m": (dict(LOOP, num_real_env_steps=960000), STOCHASTIC_DISCRETE),
    "rlmb_base_stochastic_discrete_sticky": (dict(LOOP, sticky_actions=True), STOCHASTIC_DISCRETE),
}
# SimPLe's model-free baseline (rlmf_original: ppo_original_params on the real env) takes the same PPO.
MODEL_FREE_PPO = dict(PPO, learning_rate=2.5e-4)


@pytest.mark.parametrize("set_name", sorted(ORIGINAL_SETS))
def test_every_simple_set_carries_the_original_values(set_name):
    hparams = create_hparams(set_name)
    loop, world_model = ORIGINAL_SETS[set_name]
    assert {k: hparams.get(k) for k in loop} == loop
    assert {k: hparams.world_model.get(k) for k in world_model} == world_model
    assert {k: hparams.ppo.get(k) for k in PPO} == PPO


def test_simple_model_free_baseline_runs_the_original_ppo():
    hparams = create_hparams("rlmf_original")
    assert {k: hparams.ppo.get(k) for k in MODEL_FREE_PPO} == MODEL_FREE_PPO


def test_policy_training_lengths_follow_the_original():
    """x2 in epochs 1, 7 and 11, x3 in the last: 20K iterations over 15 epochs."""
    hparams = create_hparams("rlmb_base_stochastic_discrete")
    assert [ppo_iterations_factor(hparams, e) for e in range(15)] == [1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2, 1, 1, 3]
    assert simulated_iterations_target(hparams, 14) == 20_000
    assert world_model_target(hparams, 14) == 15000 * (10 + 5 * 3)


def test_world_model_learning_rate_schedules():
    warmup = WarmupSchedule(0.002, 2000, "linear_warmup")
    np.testing.assert_allclose([float(warmup(s)) for s in (0, 999, 1999, 50000)],
                               [0.002 / 2000, 0.001, 0.002, 0.002], rtol=1e-5)
    decay = WarmupSchedule(1.5, 8000, "linear_warmup_rsqrt_decay")
    np.testing.assert_allclose([float(decay(s)) for s in (7999, 32000)], [1.5 / 8000 ** 0.5, 1.5 / 32000 ** 0.5],
                               rtol=1e-5)
    optimizer = world_model_optimizer(create_hparams("next_frame_basic_stochastic_discrete"))
    assert isinstance(optimizer, keras.optimizers.Adafactor) and optimizer.global_clipnorm == 1.0


def test_the_prior_learns_the_clean_sign_of_the_posterior_logits():
    keras.utils.set_random_seed(0)
    hparams = create_hparams("next_frame_basic_stochastic_discrete_tiny", "bit_flip_probability=0.5")
    model = get_model(hparams.model)(hparams, (105, 80, 3), 6)
    rng = np.random.default_rng(0)
    history = tf.constant(rng.integers(0, 256, (2, 4, 105, 80, 3)), tf.uint8)
    target = tf.constant(rng.integers(0, 256, (2, 105, 80, 3)), tf.uint8)
    actions = tf.constant([1, 2])
    targets = []
    model.prior_loss = lambda bottleneck, bits, training, weights=None: targets.append(bits) or 0.0
    model.frame_model(history, actions, inject_latent=model._training_latent(history, target, actions, 0, []),
                      training=True)
    logits = model.posterior_logits(history, target, actions)
    np.testing.assert_array_equal(targets[0], np.sign(logits))
    # The bits the frame model gets are noisy: half of them flipped here.
    noisy = model.posterior_bits_for_training(logits, 10**6)
    assert 0.2 < np.mean(noisy.numpy() != np.sign(logits)) < 0.8


def test_reward_accuracy_compares_cumulative_rewards():
    real = np.array([[0, 1, 0, -1], [0, 0, 1, 0]])
    predicted = np.array([[1, 0, 0, -1], [0, 1, 0, 0]])  # the same sums at steps 2 and 4; at step 4 only
    results = reward_accuracies(predicted, real, [2, 4])
    assert results == {"reward_accuracy/at_2": 0.5, "reward_accuracy/at_4": 1.0,
                       "reward_accuracy_every_step/at_2": 0.0, "reward_accuracy_every_step/at_4": 0.0}


def test_archived_runs_keep_the_ppo_and_reward_values_they_ran_with():
    """SimPLe's PPO (and DreamerV2's Atari reward target) came to the published sets after the
    MinAtar results were run: their sets pin the values the archive's runs ran with, so every
    command in docs/results.md still reproduces its rows."""
    import glob
    import json
    import os

    from rlkit.hparams import HParams, with_keys_added_later

    pinned = [f"ppo.{k}" for k in ("adam_beta1", "adam_beta2", "adam_epsilon", "minibatch_time_steps",
                                   "advantage_normalization", "num_minibatches")] + ["reward_transform"]
    runs = glob.glob(os.path.join(os.path.dirname(__file__), "..", "docs", "results", "runs", "*", "*", "run.json"))
    checked = 0
    for path in runs:
        run = json.load(open(path))
        saved_path = os.path.join(os.path.dirname(path), "hparams.json")
        if not run.get("hparams_set") or not os.path.exists(saved_path):
            continue
        saved = with_keys_added_later(HParams.from_dict(json.load(open(saved_path)))).flat_values()
        now = create_hparams(run["hparams_set"], run.get("hparams", "")).flat_values()
        for key in pinned:
            assert saved.get(key) == now.get(key), (path, key)
        checked += 1
    assert checked >= 100
