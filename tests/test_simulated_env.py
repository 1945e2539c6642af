import gymnasium as gym
import keras
import numpy as np
import pytest

from conftest import collect_random_pong
from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.frame_store import FrameStore
from rlkit.hparams import create_hparams
from rlkit.models.registry import get_model
from rlkit.rl.learners.ppo import PPOLearner
from rlkit.rl.loops.rollout import collect_rollout
from rlkit.rl.loops.simulated_env import SimulatedBatchEnv


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("pong") / "data")
    collect_random_pong(data_dir, 40)
    return data_dir


@pytest.fixture(scope="module")
def episodes(data_dir):
    """The reference: the stored episodes, read whole."""
    return storage.read_rollouts(data_dir).episodes


def world_model(set_name):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name)
    return get_model(hparams.model)(hparams, (105, 80, 3), 6)


@pytest.fixture(scope="module")
def store(data_dir):
    return FrameStore(data_dir)


def make_env(model, store, num_envs=3):
    return SimulatedBatchEnv(model, store, num_envs, gym.spaces.Discrete(6))


def find_window(frame, episodes):
    """(episode index, time) of a real frame, or None."""
    for i, episode in enumerate(episodes):
        for t, real in enumerate(episode.frames):
            if np.array_equal(real, frame):
                return i, t
    return None


@pytest.mark.parametrize("set_name", ["next_frame_basic_deterministic_tiny",
                                      "next_frame_basic_stochastic_discrete_tiny"])
def test_shapes_and_rewards(set_name, episodes, store):
    env = make_env(world_model(set_name), store)
    observation = env.reset(seed=0)
    assert observation.shape == (3, 105, 80, 3) and observation.dtype == np.uint8
    for _ in range(5):
        step = env.step(np.array([0, 1, 2]))
        assert step.observation.shape == (3, 105, 80, 3) and step.observation.dtype == np.uint8
        assert set(np.unique(step.reward)) <= {-1.0, 0.0, 1.0}
        assert not step.done.any()  # the loop resets the env; it never ends episodes itself
    assert find_window(env.reset()[0], episodes) is not None  # reset restarts from real frames


def test_initial_frames_come_from_real_windows(episodes, store):
    env = make_env(world_model("next_frame_basic_deterministic_tiny"), store, num_envs=4)
    for seed in range(3):
        observation = env.reset(seed=seed)
        # Env 0 starts at a true episode start: its newest frame is the episode's 4th.
        assert any(e.starts_at_reset and np.array_equal(e.frames[3], observation[0]) for e in episodes)
        for env_index in range(1, 4):
            assert find_window(observation[env_index], episodes) is not None
    first = env.reset(seed=5)
    np.testing.assert_array_equal(first, env.reset(seed=5))


def test_rewards_come_from_the_reward_head(episodes, store):
    model = world_model("next_frame_basic_deterministic_tiny")
    env = make_env(model, store)
    env.reset(seed=0)
    env.step(np.zeros(3, np.int64))  # builds the model
    head = model.reward_head
    head.kernel.assign(np.zeros(head.kernel.shape, np.float32))
    head.bias.assign(np.array([-10.0, -10.0, 10.0], np.float32))  # class 2: reward +1
    step = env.step(np.zeros(3, np.int64))
    np.testing.assert_array_equal(step.reward, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(step.raw_reward, [1.0, 1.0, 1.0])
    head.bias.assign(np.array([10.0, -10.0, -10.0], np.float32))  # class 0: reward -1
    np.testing.assert_array_equal(env.step(np.zeros(3, np.int64)).reward, [-1.0, -1.0, -1.0])


@pytest.mark.parametrize("set_name", ["next_frame_basic_deterministic_tiny",
                                      "next_frame_basic_stochastic_discrete_tiny"])
def test_expected_rewards_are_the_reward_heads_mean(set_name, episodes, store):
    model = world_model(set_name)
    likeliest, expected = (SimulatedBatchEnv(model, store, 3, gym.spaces.Discrete(6), temperature=0.0, reward=kind)
                           for kind in ("likeliest", "expected"))
    for env in (likeliest, expected):
        env.reset(seed=0)
        env.step(np.zeros(3, np.int64))  # the first builds the model
    head = model.reward_head if hasattr(model, "reward_head") else model.frame_model.reward_head
    head.kernel.assign(np.zeros(head.kernel.shape, np.float32))
    # P(-1, 0, 1) = softmax(0, 2, 1) = (0.090, 0.665, 0.245): the likeliest reward is 0, the mean 0.155.
    head.bias.assign(np.array([0.0, 2.0, 1.0], np.float32))
    probabilities = np.exp([0.0, 2.0, 1.0]) / np.exp([0.0, 2.0, 1.0]).sum()
    likeliest_step, step = likeliest.step(np.ones(3, np.int64)), expected.step(np.ones(3, np.int64))
    np.testing.assert_array_equal(likeliest_step.reward, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(step.reward, probabilities[2] - probabilities[0], rtol=1e-5)
    np.testing.assert_allclose(step.raw_reward, step.reward)  # not clipped to its sign
    np.testing.assert_array_equal(likeliest_step.observation, step.observation)  # only the reward differs


def test_policy_starts_from_the_real_window(episodes, store):
    env = make_env(world_model("next_frame_basic_deterministic_tiny"), store, num_envs=2)
    stacked = FrameStack(env, 4).reset(seed=1)
    for window in stacked:
        assert any(np.array_equal(window, e.frames[t:t + 4]) for e in episodes for t in range(len(e) - 3))


def test_ppo_collects_inside_the_world_model(episodes, store):
    env = make_env(world_model("next_frame_basic_deterministic_tiny"), store, num_envs=2)
    stacked = FrameStack(env, 4)
    learner = PPOLearner(create_hparams("ppo_original_params"), (4, 105, 80, 3), np.uint8, env.action_space, seed=0)
    rollout, _, stats = collect_rollout(stacked, stacked.reset(seed=0), learner.act_for_rollout, 8)
    assert rollout.observations.shape == (8, 2, 4, 105, 80, 3)
    assert not rollout.dones.any() and not stats.lengths  # one fixed-length rollout, bootstrapped
    assert set(learner.update(rollout)) >= {"policy_loss", "value_loss", "entropy"}


@pytest.mark.parametrize("set_name,overrides", [
    ("next_frame_basic_stochastic_discrete_tiny", "predict_episode_ends=True"),
    ("next_frame_basic_stochastic_discrete_tiny", "predict_episode_ends=True,end_target=ending_step"),
])
def test_compiled_rollout_is_the_python_rollout(set_name, overrides, store):
    """One TensorFlow call gives collect_rollout's arrays over a FrameStack, bit for bit: the
    same actions, frames, restarts from the same real windows, episode statistics."""
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name, overrides)
    model = get_model(hparams.model)(hparams, (105, 80, 3), 6)
    env = make_env(model, store, num_envs=3)
    stacked = FrameStack(env, 4)
    learner = PPOLearner(create_hparams("ppo_original_params"), (4, 105, 80, 3), np.uint8, env.action_space, seed=0)

    def seeded(collect):
        model.rng.reset_from_seed(5)  # the stochastic model's latent draws
        learner.policy.rng.reset_from_seed(6)
        return collect()
    python = seeded(lambda: collect_rollout(stacked, stacked.reset(seed=3), learner.act_for_rollout, 12))
    compiled = seeded(lambda: env.compiled_rollout(learner.policy, 4, 12, seed=3))
    for name in ("observations", "actions", "log_probs", "values", "rewards", "dones", "last_values"):
        np.testing.assert_array_equal(getattr(compiled[0], name), getattr(python[0], name), err_msg=name)
    np.testing.assert_array_equal(compiled[1], python[1])
    assert compiled[2].returns == python[2].returns and compiled[2].lengths == python[2].lengths
    assert python[0].dones.sum() >= 2, python[0].dones.sum()  # an untrained end head ends episodes: restarts compared
