"""Replay memory for off-policy learners, on rlkit's rollout storage.

Transitions are appended as the acting envs step, and can be sampled as soon as they are whole
(an `n_step` transition once the step `n_step` later is stored, or its episode ended), as in
DQN's replay. They are also written as atomic shards under `REPLAY_DIR/epoch_000/`, the layout
collected rollouts have, so a killed run resumes with its replay contents: a new
`ReplayMemory` on the same directory reads the shards back; steps not yet in a shard are lost
then, as the counters checkpointed with each shard expect. Each observation is stored once,
LZ4-compressed in a `FrameStore`; the frame stacks of both ends of a transition are assembled
when it is sampled.

Sampling is uniform, or proportional to priorities (Schaul et al. 2016): transition i is drawn
with probability p_i^alpha / sum_j p_j^alpha and weighted by (N * P(i))^-beta, divided by the
batch's largest weight (as Dopamine does). New transitions get the largest priority so far.
The priorities are saved with every shard (`REPLAY_DIR/priorities.npz`, atomically), so a
resumed run samples as the killed one would have at that shard; steps stored after the last
save get the largest priority.

Capacity counts whole episodes: once more than `capacity` steps are stored, the episodes that
ended before the newest `capacity` steps are forgotten (their frames freed) with each shard
written, so memory stays near `capacity` steps plus a shard and one unfinished episode per env.
"""

import os

import numpy as np

from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.fileio import atomic_write_npz

PRIORITIES_FILE = "priorities.npz"


class SumTree:
    """Priorities of slots 0..size-1 in a binary tree of sums, for proportional sampling in
    O(log n) per draw; every operation takes a batch of slots at once."""

    def __init__(self, size=1024):
        self.leaves = 1 << max(size - 1, 1).bit_length()
        self.nodes = np.zeros(2 * self.leaves, np.float64)  # node i's children: 2i, 2i+1; root 1

    def grow(self, size):
        """Makes room for `size` slots, keeping the priorities."""
        if size <= self.leaves:
            return
        values = self.nodes[self.leaves:].copy()
        self.__init__(size)
        self.set(np.arange(len(values)), values)

    @property
    def total(self):
        return self.nodes[1]

    def get(self, slots):
        return self.nodes[self.leaves + np.asarray(slots)]

    def set(self, slots, values):
        slots = self.leaves + np.asarray(slots, np.int64)
        self.nodes[slots] = values
        nodes = np.unique(slots)
        while nodes[0] > 1:
            nodes = np.unique(nodes // 2)
            self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]

    def find(self, targets):
        """The slots whose cumulative priority range holds each of `targets` (in [0, total)); a
        branch without priority is never taken, whatever the rounding."""
        targets = np.minimum(np.asarray(targets, np.float64), self.total * (1 - 1e-12))
        nodes = np.ones(len(targets), np.int64)
        while nodes[0] < self.leaves:
            left = self.nodes[2 * nodes]
            go_right = (targets >= left) & (self.nodes[2 * nodes + 1] > 0)
            targets = np.where(go_right, targets - left, targets)
            nodes = 2 * nodes + go_right
        return nodes - self.leaves


class ReplayMemory:
    """Transitions of a BatchEnv's steps, stored as shards in `replay_dir` and sampled as
    `n_step` transitions of `stack`-frame observations.

    add(observations, actions, step) once per env step (the newest frame of each env's stack);
    every `shard_steps` steps per env the steps since the last shard are written as one, and
    `add` returns True (the caller checkpoints then). sample(rng, batch_size) -> a batch (see
    `FrameStore.n_step_transitions`) with `indices` and importance `weights`;
    update_priorities(indices, td_errors) after a prioritized update.
    """

    def __init__(self, replay_dir, num_envs, stack, capacity, shard_steps, n_step=1, clip_rewards=True,
                 prioritized=False, priority_exponent=0.6, priority_epsilon=1e-6):
        self.stack, self.capacity, self.shard_steps, self.n_step = stack, capacity, shard_steps, n_step
        # Atari's rewards are clipped for learning; other games' are learned as they are.
        self.reward_column = "rewards" if clip_rewards else "raw_rewards"
        self.prioritized, self.priority_exponent, self.priority_epsilon = prioritized, priority_exponent, priority_epsilon
        self.replay_dir = replay_dir
        self.store = FrameStore(replay_dir)  # what a killed run stored
        self.writer = storage.RolloutWriter(replay_dir, 0, num_envs)
        self.tree = SumTree(max(self.store.num_steps, 1024)) if prioritized else None
        self.max_priority = 1.0
        self._in_tree = np.zeros(1024, bool)  # per global step: has a priority (grown as steps come)
        # Per global step, its number in a store read back from the shards: steps added as they
        # come interleave the envs, a shard read back lists each env's steps in turn.
        self._number_when_read = np.arange(self.store.num_steps)
        self._prioritized_candidates = 0      # candidates() up to here have one
        self._forget_old_episodes()
        if prioritized:
            self._restore_priorities()

    @property
    def num_steps(self):
        """Steps added, forgotten ones included (those since the last shard too)."""
        return self.store.num_steps

    def __len__(self):
        """Transitions that can be sampled now."""
        return len(self.candidates())

    def add(self, frames, actions, step):
        self.store.add_steps(self.writer.add(frames, actions, step), epoch=0)
        if self.prioritized:
            self._prioritize_new_candidates()
        if self.writer.num_buffered_steps < self.shard_steps:
            return False
        self.flush()
        return True

    def flush(self):
        """Writes the steps since the last shard as a shard (also when fewer than `shard_steps`)."""
        num_envs, shard_steps = self.writer.num_envs, self.writer.num_buffered_steps
        path, _ = self.writer.write_shard_arrays()
        if path is not None:
            self.store.adopt_shard(path)
            first = len(self._number_when_read)
            step, env = np.divmod(np.arange(num_envs * shard_steps), num_envs)
            self._number_when_read = np.concatenate([self._number_when_read, first + env * shard_steps + step])
            self._forget_old_episodes()
            if self.prioritized:
                self._save_priorities()

    def _save_priorities(self):
        """The priorities of every stored step, in the order a store reading the shards numbers them."""
        priorities = np.zeros(self.store.num_steps)
        priorities[self._number_when_read] = self.tree.get(np.arange(self.store.num_steps))
        atomic_write_npz(os.path.join(self.replay_dir, PRIORITIES_FILE), priorities=priorities,
                         max_priority=self.max_priority)

    def _restore_priorities(self):
        """The priorities saved with the last shard, for the transitions still stored."""
        path = os.path.join(self.replay_dir, PRIORITIES_FILE)
        if not os.path.exists(path):
            return
        with np.load(path) as saved:
            priorities, self.max_priority = saved["priorities"], float(saved["max_priority"])
        slots = np.flatnonzero(priorities[:self.store.num_steps] > 0)
        slots = slots[self._in_tree[slots]]  # not forgotten since, and whole transitions
        if len(slots):
            self.tree.set(slots, priorities[slots])

    def _forget_old_episodes(self):
        forgotten = self.store.forget_before(self.store.num_steps - self.capacity)
        if self.prioritized:
            if len(forgotten):
                self.tree.set(forgotten, 0.0)
            self._prioritized_candidates = 0  # the candidates were recomputed: find the new ones anew
            self._prioritize_new_candidates()

    def _prioritize_new_candidates(self):
        """Transitions whole for the first time get the largest priority so far."""
        self.tree.grow(self.store.num_steps)
        if len(self._in_tree) < self.store.num_steps:
            room = max(self.store.num_steps, len(self._in_tree))
            self._in_tree = np.concatenate([self._in_tree, np.zeros(room, bool)])
        candidates = self.candidates()[self._prioritized_candidates:]
        new = candidates[~self._in_tree[candidates]]
        if len(new):
            self.tree.set(new, self.max_priority ** self.priority_exponent)
            self._in_tree[new] = True
        self._prioritized_candidates += len(candidates)

    def candidates(self):
        """The global steps that start a whole transition, in the order they became whole."""
        return self.store.transition_indices(n_step=self.n_step)

    def sample(self, rng, batch_size, importance_exponent=0.0):
        """`batch_size` transitions, uniformly or by priority, with `indices` [B] and `weights`
        [B] float32: (N * P(i))^-importance_exponent over the batch's largest (all 1 uniformly)."""
        candidates = self.candidates()
        if not len(candidates):
            raise ValueError("the replay memory holds no whole transition yet")
        if self.prioritized:
            indices = self.tree.find(rng.uniform(0, self.tree.total, size=batch_size))
            probabilities = self.tree.get(indices) / self.tree.total
            weights = (len(candidates) * probabilities) ** -importance_exponent
            weights = (weights / weights.max()).astype(np.float32)
        else:
            indices = candidates[rng.integers(len(candidates), size=batch_size)]
            weights = np.ones(batch_size, np.float32)
        batch = self.store.n_step_transitions(indices, self.stack, self.n_step, self.reward_column)
        return dict(batch, indices=indices, weights=weights)

    def update_priorities(self, indices, td_errors):
        """Priorities |td_error| + epsilon for the sampled transitions `indices`."""
        priorities = np.abs(np.asarray(td_errors, np.float64)) + self.priority_epsilon
        self.max_priority = max(self.max_priority, float(priorities.max()))
        self.tree.set(indices, priorities ** self.priority_exponent)
