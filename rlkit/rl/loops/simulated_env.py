"""A world model behind the BatchEnv interface, so PPO trains inside it unchanged.

Each env keeps its last `num_context_frames` frames and the model's recurrent state; all envs
step together through the model's `next_frame_and_end`, and rewards come from the reward head.
`reset` starts every env from a random window of real frames of a FrameStore (env 0 from the
start of a real episode, so the policy also learns the game's opening). As in SimPLe, the
model-based loop resets it before every fixed-length PPO rollout, and PPO bootstraps from the
value of the last frame. A model without `predict_episode_ends` (SimPLe's) never ends an
episode; one with it ends the episode on the step taken from a frame it predicted to be the
last, or with `end_target=ending_step` on the step it says ends it, and that env starts again
from a new real window, as a real env resets.

Rewards are the reward head's likeliest class, as in SimPLe, or with reward="expected" its
mean, P(1) - P(-1) (not in SimPLe): where rewards are rare the likeliest class is almost
always 0, even on steps the head rates far above the rest (docs/results.md, check_rewards).

`compiled_rollout` runs a whole rollout of a policy from a reset as one TensorFlow call (the
steps in a `tf.while_loop`, restarts drawing their real windows through `tf.numpy_function`):
the same steps, random draws and arrays as `collect_rollout` over a FrameStack of this env
(tests/test_simulated_env.py), without Python between the steps (docs/benchmarks.md, issue 64).
"""

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.data_generators.batch_env import BatchEnv
from rlkit.hparams.rlmb_sets import SIMULATED_REWARDS
from rlkit.models.world_model import end_target
from rlkit.rl.loops.rollout import EpisodeStats, Rollout


class SimulatedBatchEnv(BatchEnv):
    def __init__(self, model, store, num_envs, action_space, action_meanings=None, temperature=1.0, epochs=None,
                 reward="likeliest"):
        """store: a FrameStore of real experience; epochs: those it starts from (default all);
        reward: "likeliest" (SimPLe) or "expected" (the head's mean, in [-1, 1])."""
        if reward not in SIMULATED_REWARDS:
            raise ValueError(f"reward={reward!r}: one of {SIMULATED_REWARDS}")
        self.model = model
        self.context = model.hparams.num_context_frames
        self.store, self.epochs = store, epochs
        if not store.chosen_episodes(epochs, self.context, from_start=True):
            raise ValueError("the world model's env needs at least one stored episode start "
                             f"with {self.context} frames")
        self.temperature = temperature
        self.ends_on_step = end_target(model.hparams) == "ending_step"
        self.expected_reward = reward == "expected"
        super().__init__(num_envs, gym.spaces.Box(0, 255, model.frame_shape, np.uint8), action_space,
                         action_meanings, clip_rewards=not self.expected_reward)
        self._rng = np.random.default_rng()
        self._history = self._state = self._on_last_frame = None
        self._compiled = {}  # compiled_rollout's traced functions, by (policy, stack size, steps)

    def initial_windows(self, count=None):
        """`count` (default N) windows of k real steps, stacked (frames [count, k, H, W, C],
        actions [count, k], ...): the first from an episode start, the others anywhere."""
        windows = [self.store.random_window(self._rng, self.context, from_start=env == 0, epochs=self.epochs)
                   for env in range(count or self.num_envs)]
        return {name: np.stack([w[name] for w in windows]) for name in windows[0]}

    def _start(self, count):
        """(history, state) of `count` envs started from new real windows."""
        windows = self.initial_windows(count)
        history = windows["frames"]
        return history, self.model.start_state(history, windows["actions"][:, :-1], self.temperature)

    def _reset(self, seed):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._history, self._state = self._start(self.num_envs)
        self._on_last_frame = np.zeros(self.num_envs, bool)
        return self._history[:, -1]

    def initial_stack(self, observation, k):
        """A policy starts from the same real frames as the model (as many as it stacks)."""
        if k <= self.context:
            return self._history[:, self.context - k:].copy()
        return super().initial_stack(observation, k)

    def _step(self, actions):
        frames, rewards, ends, state = self.model.next_frame_and_end(
            tf.convert_to_tensor(self._history), tf.constant(actions, tf.int32), self._state,
            tf.constant(self.temperature, tf.float32), expected_reward=self.expected_reward)
        frames, rewards = frames.numpy(), rewards.numpy().astype(np.float32)
        self._history = np.concatenate([self._history[:, 1:], frames[:, None]], axis=1)
        if self.ends_on_step:  # the model says whether this step ends its episode
            terminated = ends.numpy()
        else:  # it says whether the frame it predicted is the last: the step taken on it ends the episode
            terminated, self._on_last_frame = self._on_last_frame, ends.numpy()
        if terminated.any():  # those envs start again from real frames, as a real env resets
            # A model's state may be a structure of tensors (the RSSM's (h, z)).
            state = tf.nest.map_structure(lambda part: part.numpy(), state)
            restarted = np.flatnonzero(terminated)
            history, new_state = self._start(len(restarted))
            for part, new_part in zip(tf.nest.flatten(state), tf.nest.flatten(new_state)):
                part[restarted] = new_part.numpy()
            self._history[restarted] = history
            frames[restarted], self._on_last_frame[restarted] = history[:, -1], False
        self._state = tf.nest.map_structure(tf.convert_to_tensor, state)
        return frames, rewards, terminated, np.zeros(self.num_envs, bool)

    def compiled_rollout(self, policy, stack_size, num_steps, seed):
        """Resets the env with `seed`, then steps it `num_steps` times with `policy` (a Policy:
        act(observations, temperature) -> action, log_prob, value) sampling at temperature 1 on
        stacks of the last `stack_size` frames, all in one TensorFlow call. Returns what
        `collect_rollout` over FrameStack(self, stack_size) returns: (Rollout, the last stacks,
        EpisodeStats)."""
        observation = self.reset(seed)
        stack = self.initial_stack(observation, stack_size)
        key = (id(policy), stack_size, num_steps)
        if key not in self._compiled:
            self._compiled[key] = tf.function(
                lambda *args: self._rollout_graph(policy, stack_size, num_steps, *args), autograph=False)
        columns, history, self._state, on_last_frame, stack, last_values = self._compiled[key](
            tf.constant(self._history), self._state, tf.constant(self._on_last_frame), tf.constant(stack))
        columns, self._history, self._on_last_frame, stack, last_values = tf.nest.map_structure(
            lambda tensor: tensor.numpy(), (columns, history, on_last_frame, stack, last_values))
        observations, actions, log_probs, values, raw_rewards, dones = columns
        stats, rewards = EpisodeStats(), []
        for raw_reward, done in zip(raw_rewards, dones):  # what BatchEnv.step counts, step by step
            step = self.count_step(None, raw_reward, done, np.zeros_like(done))
            stats.add(step)
            rewards.append(step.reward)
        rollout = Rollout(observations, actions, log_probs, values, np.stack(rewards), dones, last_values)
        return rollout, stack, stats

    def _rollout_graph(self, policy, stack_size, num_steps, history, state, on_last_frame, stack):
        """compiled_rollout's steps, in the order of the Python loop (`_step` under a FrameStack)
        so that every random draw comes in the same order: the policy's action, the model's
        step, the restarts."""
        temperature = tf.constant(self.temperature, tf.float32)
        policy_temperature = tf.constant(1.0)
        action_dtype = policy.act.get_concrete_function().structured_outputs["action"].dtype
        dtypes = (tf.uint8, action_dtype, tf.float32, tf.float32, tf.float32, tf.bool)
        columns = tuple(tf.TensorArray(dtype, num_steps) for dtype in dtypes)

        def step(t, history, state, on_last_frame, stack, columns):
            acted = policy.act(stack, policy_temperature)
            frames, rewards, ends, state = self.model.next_frame_and_end(
                history, tf.cast(acted["action"], tf.int32), state, temperature, expected_reward=self.expected_reward)
            history = tf.concat([history[:, 1:], frames[:, None]], axis=1)
            if self.ends_on_step:
                terminated = ends
            else:
                terminated, on_last_frame = on_last_frame, ends
            history, state, frames, on_last_frame = tf.cond(
                tf.reduce_any(terminated),
                lambda: self._restart(terminated, history, state, frames, on_last_frame, temperature),
                lambda: (history, state, frames, on_last_frame))
            next_stack = tf.concat([stack[:, 1:], frames[:, None]], axis=1)
            next_stack = tf.where(terminated[:, None, None, None, None],
                                  tf.repeat(frames[:, None], stack_size, axis=1), next_stack)
            values = (stack, acted["action"], acted["log_prob"], acted["value"], tf.cast(rewards, tf.float32),
                      terminated)
            columns = tuple(column.write(t, value) for column, value in zip(columns, values))
            return t + 1, history, state, on_last_frame, next_stack, columns

        _, history, state, on_last_frame, stack, columns = tf.while_loop(
            lambda t, *_: t < num_steps, step, (tf.constant(0), history, state, on_last_frame, stack, columns))
        last_values = policy.act(stack, policy_temperature)["value"]
        return tuple(column.stack() for column in columns), history, state, on_last_frame, stack, last_values

    def _restart(self, terminated, history, state, frames, on_last_frame, temperature):
        """`_step`'s restarts in the graph: the terminated envs from new real windows."""
        restarted = tf.where(terminated)  # [R, 1]
        window_frames, window_actions = tf.numpy_function(
            lambda count: self._window_arrays(int(count)), [tf.shape(restarted)[0]], [tf.uint8, tf.int32])
        window_frames.set_shape([None] + history.shape[1:])
        window_actions.set_shape([None, self.context])
        new_state = self.model.start_state(window_frames, window_actions[:, :-1], temperature)
        state = tf.nest.map_structure(lambda part, new: tf.tensor_scatter_nd_update(part, restarted, new),
                                      state, new_state)
        return (tf.tensor_scatter_nd_update(history, restarted, window_frames), state,
                tf.tensor_scatter_nd_update(frames, restarted, window_frames[:, -1]),
                tf.tensor_scatter_nd_update(on_last_frame, restarted, tf.zeros_like(restarted[:, 0], bool)))

    def _window_arrays(self, count):
        windows = self.initial_windows(count)
        return windows["frames"], windows["actions"].astype(np.int32)
