"""Replay memory for off-policy learners, on rlkit's rollout storage.

Transitions are appended as the acting envs step and written as atomic shards under
`REPLAY_DIR/epoch_000/`, the layout collected rollouts have, so a killed run resumes with its
replay contents: a new `ReplayMemory` on the same directory reads the shards back. Each
observation is stored once, LZ4-compressed in a `FrameStore`; the frame stacks of both ends of
a transition are assembled when it is sampled. Steps still buffered (fewer than a shard) are
not sampled yet, and are lost if the run is killed.

Sampling is uniform, or proportional to priorities (Schaul et al. 2016): transition i is drawn
with probability p_i^alpha / sum_j p_j^alpha and weighted by (N * P(i))^-beta, divided by the
batch's largest weight (as Dopamine does). New transitions get the largest priority so far.
The priorities are saved with every shard (`REPLAY_DIR/priorities.npz`, atomically), so a
resumed run samples as the killed one would have at that shard; steps stored after the last
save get the largest priority.

Capacity counts whole episodes: once more than `capacity` steps are stored, the episodes that
ended before the newest `capacity` steps are forgotten (their frames freed), so memory stays
near `capacity` steps plus one unfinished episode per env.
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
    every `shard_steps` steps per env the buffered steps become a shard and samplable, and
    `add` returns True. sample(rng, batch_size) -> a batch (see `FrameStore.n_step_transitions`)
    with `indices` and importance `weights`; update_priorities(indices, td_errors) after a
    prioritized update.
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
        self._in_tree = np.zeros(0, bool)
        self._candidates = None
        self._after_new_steps()
        if prioritized:
            self._restore_priorities()

    @property
    def num_steps(self):
        """Steps stored (written as shards), forgotten ones included."""
        return self.store.num_steps

    def __len__(self):
        """Transitions that can be sampled now."""
        return len(self.candidates())

    def add(self, frames, actions, step):
        self.writer.add(frames, actions, step)
        if self.writer.num_buffered_steps < self.shard_steps:
            return False
        self.flush()
        return True

    def flush(self):
        """Writes the buffered steps as a shard, now samplable (also when fewer than a shard)."""
        path, arrays = self.writer.write_shard_arrays()
        if path is not None:
            self.store.add_shard(path, arrays)
            self._after_new_steps()
            if self.prioritized:
                self._save_priorities()

    def _save_priorities(self):
        atomic_write_npz(os.path.join(self.replay_dir, PRIORITIES_FILE),
                         priorities=self.tree.get(np.arange(self.store.num_steps)), max_priority=self.max_priority)

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

    def _after_new_steps(self):
        forgotten = self.store.forget_before(self.store.num_steps - self.capacity)
        self._candidates = None
        if not self.prioritized:
            return
        self.tree.grow(self.store.num_steps)
        if len(forgotten):
            self.tree.set(forgotten, 0.0)
        in_tree = np.zeros(self.store.num_steps, bool)
        in_tree[:len(self._in_tree)] = self._in_tree
        candidates = self.candidates()
        new = candidates[~in_tree[candidates]]
        if len(new):  # transitions whole for the first time
            self.tree.set(new, self.max_priority ** self.priority_exponent)
            in_tree[new] = True
        self._in_tree = in_tree

    def candidates(self):
        if self._candidates is None:
            self._candidates = self.store.transition_indices(n_step=self.n_step)
        return self._candidates

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
