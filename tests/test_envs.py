import gymnasium as gym
import numpy as np
import pytest

from rlkit.data_generators.atari import AtariBatchEnv
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.gym_env import gym_atari_batch_env
from rlkit.data_generators.make_env import make_batch_env
from rlkit.errors import UserError
from rlkit.hparams import create_hparams


def random_actions(env, rng):
    return rng.integers(env.action_space.n, size=env.num_envs)


def test_pong_shapes_dtypes_and_actions():
    with make_batch_env(create_hparams("env_atari"), 3) as env:
        assert env.observation_shape == (105, 80, 3)
        assert env.action_meanings == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
        assert env.action_space.n == 6
        observation = env.reset(seed=0)
        assert observation.shape == (3, 105, 80, 3) and observation.dtype == np.uint8
        step = env.step(np.array([0, 1, 2]))
        assert step.observation.shape == (3, 105, 80, 3) and step.observation.dtype == np.uint8
        for name in ("reward", "raw_reward", "episode_return"):
            assert getattr(step, name).shape == (3,) and getattr(step, name).dtype == np.float32
        assert step.terminated.dtype == np.bool_ and step.truncated.dtype == np.bool_
        assert step.episode_length.dtype == np.int32


def test_size_and_grayscale_are_configurable():
    hparams = create_hparams("env_atari", "frame_height=84,frame_width=84,grayscale=true")
    with make_batch_env(hparams, 2) as env:
        assert env.reset(seed=0).shape == (2, 84, 84, 1)


def test_cartpole_through_the_same_interface():
    with make_batch_env(create_hparams("env_cartpole"), 4) as env:
        assert env.action_meanings is None
        observation = env.reset(seed=0)
        assert observation.shape == (4, 4) and observation.dtype == np.float32
        rng = np.random.default_rng(0)
        finished = []
        for _ in range(200):
            step = env.step(random_actions(env, rng))
            assert np.all(step.reward == 1.0)
            finished += list(zip(step.episode_return[step.done], step.episode_length[step.done]))
        assert finished
        assert all(ret == length for ret, length in finished)  # +1 per step, unclipped


def test_scaled_observations_map_the_bounds_onto_the_unit_box():
    """scale_observations: MountainCar's position [-1.2, 0.6] and velocity [-0.07, 0.07] both
    reach the learner on [-1, 1]; an env with unbounded observations, or Atari's frames, is one line."""
    plain_set = create_hparams("rlmf_naf_mountaincar")
    scaled_set = create_hparams("rlmf_naf_mountaincar", "scale_observations=True")
    with make_batch_env(plain_set, 2) as plain, make_batch_env(scaled_set, 2) as scaled:
        assert scaled.observation_space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        raw, unit = plain.reset(seed=3), scaled.reset(seed=3)
        for _ in range(30):
            raw, unit = (env.step(np.ones((2, 1), np.float32)).observation for env in (plain, scaled))
        low, high = np.array([-1.2, -0.07]), np.array([0.6, 0.07])
        np.testing.assert_allclose(unit, 2 * (raw - low) / (high - low) - 1, rtol=1e-5, atol=1e-6)
        assert unit.dtype == np.float32 and np.abs(unit[:, 1]).max() > 0.1  # the velocity, 0.0x raw
    with pytest.raises(UserError, match="needs finite observation bounds; CartPole-v1's are not all finite"):
        make_batch_env(create_hparams("env_cartpole", "scale_observations=True"), 1)
    with pytest.raises(UserError, match="pong's frames are pictures: set scale_observations=False"):
        make_batch_env(create_hparams("env_atari", "scale_observations=True"), 1)


def test_native_and_gymnasium_backends_give_identical_frames():
    rng = np.random.default_rng(1)
    with AtariBatchEnv("pong", 2, max_num_noops=0) as native, \
            gym_atari_batch_env("pong", 2, max_num_noops=0) as fallback:
        assert native.action_meanings == fallback.action_meanings
        np.testing.assert_array_equal(native.reset(seed=0), fallback.reset(seed=0))
        for _ in range(150):
            actions = random_actions(native, rng)
            a, b = native.step(actions), fallback.step(actions)
            np.testing.assert_array_equal(a.observation, b.observation)
            np.testing.assert_array_equal(a.raw_reward, b.raw_reward)


def diverged_envs(max_num_noops):
    """How many of 8 Pong envs, reset with the same seed base, differ from env 0 after 20 NOOPs."""
    with AtariBatchEnv("pong", 8, max_num_noops=max_num_noops) as env:
        env.reset(seed=0)
        for _ in range(20):
            observation = env.step(np.zeros(8, np.int64)).observation
        return sum(bool((observation[i] != observation[0]).any()) for i in range(1, 8))


def test_noops_at_reset_randomise_the_start():
    assert diverged_envs(0) == 0   # Pong starts identically without no-ops
    assert diverged_envs(8) >= 3   # random no-op counts put the envs out of step


def test_same_seed_same_frames():
    def run(seed):
        rng = np.random.default_rng(0)
        with AtariBatchEnv("pong", 2) as env:
            frames = [env.reset(seed=seed)]
            frames += [env.step(random_actions(env, rng)).observation for _ in range(60)]
        return np.stack(frames)
    np.testing.assert_array_equal(run(3), run(3))


@pytest.mark.parametrize("env_set", ["env_atari", "env_minatar", "env_cartpole"])
def test_a_reset_with_a_seed_plays_as_a_fresh_env(env_set):
    """What evaluation relies on when its temperatures share one env: reset(seed) on an env that
    has played (and stopped mid-episode) starts exactly as a new env would (no-ops and sticky
    actions included)."""
    hparams = create_hparams(env_set)

    def play(env, seed):
        rng = np.random.default_rng(seed)
        frames = [env.reset(seed=seed)]
        for _ in range(40):
            step = env.step(random_actions(env, rng))
            frames.append(step.observation)
        return np.stack(frames), step.episode_return, step.episode_length

    with make_batch_env(hparams, 2) as fresh:
        expected = play(fresh, 3)
    with make_batch_env(hparams, 2) as used:
        play(used, 5)
        again = play(used, 3)
    for want, got in zip(expected, again):
        np.testing.assert_array_equal(want, got)


def test_rewards_are_clipped_for_learning_and_kept_raw_for_reporting():
    rng = np.random.default_rng(0)
    with AtariBatchEnv("space_invaders", 4, max_num_noops=0) as env:
        env.reset(seed=0)
        raw = []
        for _ in range(300):
            step = env.step(random_actions(env, rng))
            np.testing.assert_array_equal(step.reward, np.sign(step.raw_reward))
            raw.append(step.raw_reward)
        assert np.max(raw) > 1  # Space Invaders scores 5..30 a hit


@pytest.mark.parametrize("backend", ["native", "gymnasium"])
def test_episode_frame_cap_truncates(backend):
    make = AtariBatchEnv if backend == "native" else gym_atari_batch_env
    with make("pong", 2, max_num_noops=0, max_episode_frames=400) as env:
        env.reset(seed=0)
        for t in range(1, 101):
            step = env.step(np.zeros(2, np.int64))
            assert step.truncated.all() == (t == 100), t
        assert not step.terminated.any()
        np.testing.assert_array_equal(step.episode_length, [100, 100])  # 400 frames / frame skip 4
        assert env.step(np.zeros(2, np.int64)).episode_length.sum() == 0  # a new episode began


def test_episodic_life_ends_the_episode_at_each_lost_life_and_the_game_goes_on():
    """Breakout's 5 lives, the same seed and actions: with episodic_life the first 4 lost lives
    end episodes, and the 5th ends the game within a step per earlier life (ale-py advances the
    game one step at each life's "reset") of where a whole-game env ends it: the game was not
    reset in between (a reset would take another ~180 steps of 5 lives)."""
    def episode_ends(episodic_life):
        rng = np.random.default_rng(0)
        with AtariBatchEnv("breakout", 1, max_num_noops=0, episodic_life=episodic_life) as env:
            env.reset(seed=0)
            ends = []
            for t in range(4000):
                if env.step(random_actions(env, rng)).terminated[0]:
                    ends.append(t)
                    if len(ends) == (5 if episodic_life else 1):
                        return ends
        return ends
    whole_game, per_life = episode_ends(False), episode_ends(True)
    assert len(whole_game) == 1 and len(per_life) == 5, (whole_game, per_life)
    assert abs(per_life[-1] - whole_game[0]) <= 4 and per_life[0] < per_life[1], (whole_game, per_life)


def test_evaluation_plays_whole_games_when_training_ends_episodes_at_lost_lives():
    from rlkit.rl.loops import evaluation
    hparams = create_hparams("rlmf_dqn_nature", "game=breakout,eval_batch_size=1,eval_step_limit=4500,"
                             "eval_max_num_noops=0")
    assert hparams.episodic_life
    rng = np.random.default_rng(0)
    results, _ = evaluation.evaluate_policy(hparams, lambda observation, temperature=1.0: rng.integers(
        4, size=len(observation)), seed=0)
    # A random Breakout game lasts well over one life (~40-60 agent steps each).
    assert list(results.values())[0]["mean_length"] > 120, results


def test_sticky_actions_change_the_trajectory():
    def frames(sticky):
        rng = np.random.default_rng(0)
        with AtariBatchEnv("pong", 1, max_num_noops=0, sticky_actions=sticky) as env:
            env.reset(seed=0)
            return np.stack([env.step(random_actions(env, rng)).observation for _ in range(100)])
    assert not np.array_equal(frames(False), frames(True))


def test_frame_stack():
    with AtariBatchEnv("pong", 2, max_num_noops=0, max_episode_frames=40) as env:
        stack = FrameStack(env, 4)
        stacked = stack.reset(seed=0)
        assert stacked.shape == (2, 4, 105, 80, 3)
        assert all(np.array_equal(stacked[:, i], stacked[:, 0]) for i in range(4))
        history = [stacked[:, -1]]
        for t in range(1, 10):
            stacked, step = stack.step(np.array([2, 3]))
            history.append(step.observation)
            if t >= 3:
                np.testing.assert_array_equal(stacked, np.stack(history[-4:], axis=1))
        stacked, step = stack.step(np.array([2, 3]))  # step 10 ends the 40-frame episode
        assert step.truncated.all()
        for i in range(4):  # the new episode's first frame, four times, nothing from the old one
            np.testing.assert_array_equal(stacked[:, i], step.observation)


def test_gin_wrappers_run_atari_through_gymnasium():
    hparams = create_hparams("env_atari", "max_num_noops=0")
    with make_batch_env(hparams, 2, gym_wrappers=[lambda env: gym.wrappers.TimeLimit(env, 5)]) as env:
        env.reset(seed=0)
        dones = [env.step(np.zeros(2, np.int64)).truncated.all() for _ in range(5)]
        assert dones == [False] * 4 + [True]


@pytest.mark.parametrize("game, suggestion", [("pongg", "'pong'"), ("breakot", "'breakout'"),
                                              ("CartPole-v9", "'CartPole-v1'")])
def test_unknown_game_names_close_ones(game, suggestion):
    with pytest.raises(UserError, match=f"unknown game '{game}'; did you mean") as error:
        make_batch_env(create_hparams("env_atari", f"game={game}"), 1)
    assert suggestion in str(error.value)
