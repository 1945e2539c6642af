"""One store for every stored step of a data dir, whose memory stays small as runs grow.

Each frame is held once, compressed on its own with LZ4: on Pong's 84x84 grayscale frames
~270 bytes instead of 7,056, decoded alone in ~5 us (zlib: ~230 bytes, ~14 us; its decoding
held sampling to a few times what a DQN update consumes), so windows and frame stacks are
assembled by index when they are sampled. scripts/bench_data.py measures it. Actions, rewards and dones are small numpy arrays. `update()` reads the
shards written since the last call and nothing else, so a store follows a growing collection.

Who uses it: world-model training (`window_dataset`), the simulated env's starting windows
and the player's (`random_window`), reward accuracy and dream rollouts (`windows`, `window`),
and off-policy replay (`transition_indices`, `stacked_transitions`, `sample_transitions`).

Positions: a step is a global index (the order the store read it); an episode is a list of
global indices, so an episode spanning shards is one sequence. A window never crosses an
episode's end; a frame stack at an episode's first steps repeats its first frame, as
`batch_env.FrameStack` does when acting.

Steps come from shards on disk (`update`) or straight from an acting loop (`add_steps`, a
replay memory's newest steps, samplable before any shard holds them). Either way adding costs
what is added, not what is stored: columns grow in place, each step knows its neighbours in
its episode, and the whole transitions are extended, not recomputed.
"""

import dataclasses
import threading

import lz4.block
import numpy as np

from rlkit.data_generators import storage


class GrowingArray:
    """A numpy array appended to in place, its capacity doubled as it fills, so that appending
    costs what is appended. `values` is the filled part (a view: read it, do not keep it)."""

    def __init__(self, dtype=None):
        self._data, self._size, self.dtype = None, 0, dtype

    def __len__(self):
        return self._size

    @property
    def values(self):
        return self._data[:self._size] if self._data is not None else np.zeros(0, self.dtype or np.float64)

    def extend(self, new):
        new = np.asarray(new, self.dtype)
        if self._data is None:
            self.dtype = new.dtype
            self._data = np.zeros((max(1024, len(new)),) + new.shape[1:], new.dtype)
        if self._size + len(new) > len(self._data):
            grown = np.zeros((max(2 * len(self._data), self._size + len(new)),) + self._data.shape[1:], self.dtype)
            grown[:self._size] = self._data[:self._size]
            self._data = grown
        self._data[self._size:self._size + len(new)] = new
        self._size += len(new)

    def __setitem__(self, index, value):
        self.values[index] = value


@dataclasses.dataclass
class StoredEpisode:
    """One episode's (or the stored part of one's) steps, as global indices into the store."""
    episode_id: int
    epoch: int
    indices: np.ndarray      # [T] global step indices, in time order
    starts_at_reset: bool    # its first step is the episode's first
    complete: bool           # ...and its last step ended it
    forgotten: bool = False  # its frames were freed (a replay memory's capacity)

    def __len__(self):
        return len(self.indices)


class FrameStore:
    """The steps stored in `data_dir` (only its `epochs`, if given), frames compressed one by one."""

    def __init__(self, data_dir, epochs=None):
        self.data_dir = data_dir
        self.epochs = None if epochs is None else list(epochs)
        self.episodes = []          # StoredEpisode, in the order first seen
        self.shards = []            # paths read
        self.skipped = []           # damaged shards, skipped (and moved aside, see storage)
        self.frame_shape = self.frame_dtype = None
        self._frames = []           # compressed bytes per global step
        self._columns = {name: GrowingArray() for name in ("actions", "rewards", "raw_rewards", "dones", "terminated")}
        # Per global step: its episode (index into self.episodes), its position there, and the
        # steps before and after it in that episode (itself at either end: stacks repeat the end frames).
        self._columns.update(episode=GrowingArray(np.int64), position=GrowingArray(np.int64),
                             previous=GrowingArray(np.int64), next=GrowingArray(np.int64))
        self._layout = None         # every episode's steps end to end (for windows' shares), built when asked
        self._building = threading.Lock()
        self._transitions = {}      # (epochs, n_step) -> transition_indices, extended as steps come
        self._chosen = {}           # chosen_episodes' answers, recomputed after steps come
        self._by_id = {}            # episode id -> StoredEpisode
        self.update()

    @property
    def num_steps(self):
        return len(self._frames)

    @property
    def compressed_bytes(self):
        return sum(len(frame) for frame in self._frames if frame is not None)

    def update(self):
        """Reads the shards written since the last call; returns how many steps they added."""
        before, read = self.num_steps, set(self.shards)
        for path, shard in storage.read_shards(self.data_dir, self.epochs, skip=read):
            if shard is None:
                self.skipped.append(path)
                continue
            self.add_steps(shard, storage.epoch_of(path))
            self.shards.append(path)
        return self.num_steps - before

    def adopt_shard(self, path):
        """Marks the shard a writer just wrote at `path`, whose steps were added as they came
        (`add_steps`), as read: `update` skips it."""
        self.shards.append(path)

    def add_steps(self, arrays, epoch):
        """Adds steps of `epoch` given as a shard's arrays ([N, T, ...] per field, see storage):
        a shard read from disk, or a replay memory's newest step ([N, 1, ...]), samplable at once."""
        num_envs, num_steps = arrays["actions"].shape[:2]
        self.frame_shape, self.frame_dtype = arrays["frames"].shape[2:], arrays["frames"].dtype
        for env in range(num_envs):
            ids = arrays["episode_ids"][env]
            boundaries = (np.flatnonzero(np.diff(ids)) + 1).tolist() if num_steps > 1 else []
            for start, end in zip([0] + boundaries, boundaries + [num_steps]):
                first = self.num_steps
                self._frames += [lz4.block.compress(frame.tobytes()) for frame in arrays["frames"][env, start:end]]
                for name in ("actions", "rewards", "raw_rewards", "dones", "terminated"):
                    self._columns[name].extend(arrays[name][env, start:end])
                self._add_piece(int(ids[start]), epoch, np.arange(first, self.num_steps),
                                bool(arrays["firsts"][env, start]), bool(arrays["dones"][env, end - 1]))
        self._layout, self._chosen = None, {}

    def _add_piece(self, episode_id, epoch, indices, first, done):
        episode = self._by_id.get(episode_id)
        before = 0 if episode is None else len(episode)
        if episode is None:
            episode = StoredEpisode(episode_id, epoch, indices, starts_at_reset=first, complete=first and done)
            self._by_id[episode_id] = episode
            self.episodes.append(episode)
            self._columns["previous"].extend(np.concatenate([indices[:1], indices[:-1]]))
        else:  # the episode continues from an earlier shard, or from the step before
            self._columns["next"][episode.indices[-1]] = indices[0]
            self._columns["previous"].extend(np.concatenate([episode.indices[-1:], indices[:-1]]))
            episode.indices = np.concatenate([episode.indices, indices])
            episode.complete = episode.starts_at_reset and done
        self._columns["next"].extend(np.concatenate([indices[1:], indices[-1:]]))
        self._columns["episode"].extend(np.full(len(indices), self._episode_number(episode)))
        self._columns["position"].extend(np.arange(before, len(episode)))
        for (epochs, n_step), transitions in self._transitions.items():
            if not episode.forgotten and (epochs is None or episode.epoch in epochs):
                transitions.extend(self._whole_transitions(episode, n_step, before))

    def _episode_number(self, episode):
        if self.episodes[-1] is episode:
            return len(self.episodes) - 1
        return self._columns["episode"].values[episode.indices[0]]

    def _whole_transitions(self, episode, n_step, stored_before=0):
        """The steps of `episode` that start a whole `n_step` transition and did not when it held
        `stored_before` steps (see `transition_indices`)."""
        ended = self._columns["terminated"].values[episode.indices[-1]]
        whole = len(episode) if ended else max(len(episode) - n_step, 0)
        return episode.indices[max(stored_before - n_step, 0):whole]

    def _column(self, name):
        if name in self._columns:
            return self._columns[name].values
        layout = self._layout
        if layout is None:
            # window_dataset decodes on several threads at once: one builds, the others wait for it.
            with self._building:
                if self._layout is None:
                    self._layout = self._episode_layout()
                layout = self._layout
        return layout[name]

    def _episode_layout(self):
        """Every episode's steps end to end: episode e's are episode_steps[episode_start[e]:][:episode_length[e]]."""
        lengths = np.array([len(e) for e in self.episodes], np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        return dict(episode_length=lengths, episode_start=starts,
                    episode_steps=(np.concatenate([e.indices for e in self.episodes])
                                   if self.episodes else np.zeros(0, np.int64)))

    def step_values(self, name, indices):
        """A per-step column ("actions", "rewards", "raw_rewards", "dones") at the global steps
        `indices`, without decoding their frames."""
        return self._column(name)[np.asarray(indices)]

    def frames(self, indices):
        """Decoded frames [..., H, W, C] uint8 (or stored vectors) of the global steps `indices` (any shape)."""
        indices = np.asarray(indices)
        flat = [np.frombuffer(lz4.block.decompress(self._frames[i]), self.frame_dtype) for i in indices.ravel()]
        return np.stack(flat).reshape(indices.shape + tuple(self.frame_shape))

    # Windows: consecutive steps of one episode.

    def chosen_episodes(self, epochs=None, min_length=1, from_start=False):
        """Indices of the episodes of `epochs` (default all) with at least `min_length` steps."""
        key = (None if epochs is None else tuple(epochs), min_length, from_start)
        if key not in self._chosen:  # the world model's env asks at every restart, over thousands of episodes
            self._chosen[key] = tuple(i for i, e in enumerate(self.episodes)
                                      if len(e) >= min_length and not e.forgotten
                                      and (epochs is None or e.epoch in epochs) and (e.starts_at_reset or not from_start))
        return self._chosen[key]

    def window_starts(self, length, epochs=None, padding=0, past_end=0):
        """[M, 2] (episode index, start) of every window of `length` steps inside one episode;
        with `padding`, also those starting up to `padding` steps before its first, and with
        `past_end`, those ending up to `past_end` steps after its last (see `window`)."""
        pairs = [np.stack([np.full(len(self.episodes[i]) - length + 1 + padding + past_end, i),
                           np.arange(-padding, len(self.episodes[i]) - length + 1 + past_end)], axis=1)
                 for i in self.chosen_episodes(epochs, max(length - padding - past_end, 1))]
        return np.concatenate(pairs).astype(np.int64) if pairs else np.zeros((0, 2), np.int64)

    def window(self, episode, start, length):
        """frames [L, H, W, C] uint8, actions [L] int32, rewards [L] int32 (clipped), raw_rewards
        [L] float32, ends [L] int32, stored [L] int32 of `length` steps of episode number
        `episode` from `start`: actions[i] was taken on frames[i], rewards[i] followed it, and
        ends[i] is 1 where that step ended the episode (frames[i] was its last). A window starting
        before the episode's first step (start < 0) repeats that first frame, as FrameStack does,
        with no-op actions, no rewards and no ends; one running past its last step repeats the
        last frame, with no actions, rewards or ends, and `stored` 0 there (1 elsewhere)."""
        positions = np.arange(start, start + length)
        assert positions[0] < len(self.episodes[episode]), (episode, start, length)
        last = len(self.episodes[episode]) - 1
        indices = self.episodes[episode].indices[np.clip(positions, 0, last)]
        real = (positions >= 0) & (positions <= last)

        def column(name, dtype):
            return np.where(real, self._column(name)[indices], 0).astype(dtype)
        return dict(frames=self.frames(indices), actions=column("actions", np.int32),
                    rewards=column("rewards", np.int32), raw_rewards=column("raw_rewards", np.float32),
                    ends=column("dones", np.int32), stored=(positions <= last).astype(np.int32))

    def windows(self, rng, count, length, epochs=None):
        """`count` windows drawn uniformly from all windows of `length` steps, stacked: each
        field [count, L, ...]. None if no episode has `length` steps."""
        starts = self.window_starts(length, epochs)
        if not len(starts):
            return None
        chosen = [self.window(e, s, length) for e, s in starts[rng.integers(len(starts), size=count)]]
        return {name: np.stack([w[name] for w in chosen]) for name in chosen[0]}

    def random_window(self, rng, length, from_start=False, epochs=None):
        """A random window (as `window`): the start of a random episode that began at a reset
        (from_start), or any window of a random episode long enough."""
        episodes = self.chosen_episodes(epochs, length, from_start)
        if not episodes:
            raise ValueError(f"no stored episode{' start' if from_start else ''} has {length} steps")
        episode = episodes[rng.integers(len(episodes))]
        start = 0 if from_start else rng.integers(len(self.episodes[episode]) - length + 1)
        return self.window(episode, start, length)

    def window_dataset(self, num_context_frames, num_target_frames, seed=None, epochs=None, pad_starts=False,
                       rewarded_share=0.0, ending_share=0.0, past_end=False):
        """A shuffled tf.data.Dataset of every window of context + target steps (of `epochs`),
        decoded in parallel as it is read; elements are `window`'s dicts. pad_starts: also the
        windows whose context begins before an episode's first frame (repeated), so every step
        after an episode's first, of short episodes too, is a target. past_end: also the windows
        whose targets run past an episode's last frame (marked in `stored`), so that its ending
        step can be any target's, from the last context frame on. With `rewarded_share` or
        `ending_share` (not SimPLe's), the dataset repeats without end and that share of its
        windows is drawn from those whose targets follow a rewarded step, or that hold their
        episode's end as a target's (its last frame; with past_end, its ending step), so that a
        reward or end head sees rare rewards or ends."""
        import tensorflow as tf  # only the datasets need TensorFlow

        length = num_context_frames + num_target_frames
        starts = self.window_starts(length, epochs, num_context_frames - 1 if pad_starts else 0,
                                    num_target_frames if past_end else 0)
        if not len(starts):
            raise ValueError(f"no episode in {self.data_dir} has the {length} steps a window needs")
        names = ("frames", "actions", "rewards", "raw_rewards", "ends", "stored")
        dtypes = (tf.uint8, tf.int32, tf.int32, tf.float32, tf.int32, tf.int32)

        def decode(pair):
            window = self.window(int(pair[0]), int(pair[1]), length)
            return tuple(window[name] for name in names)

        def load(pair):
            values = tf.numpy_function(decode, [pair], dtypes, stateful=False)
            for value, shape in zip(values, [(length,) + tuple(self.frame_shape)] + [(length,)] * 5):
                value.set_shape(shape)
            return dict(zip(names, values))

        def shuffled(pairs):
            return (tf.data.Dataset.from_tensor_slices(pairs)
                    .shuffle(len(pairs), seed=seed, reshuffle_each_iteration=True))

        # A target frame i is predicted with the reward of step i - 1 (window steps context-1 ..
        # length-2) and with its own end (steps context .. length-1), or with past_end, the end
        # of step i - 1.
        end_offset = 1 if past_end else 0
        special = [(starts[self._any_between(starts, first, last, column)], share)
                   for share, first, last, column in ((rewarded_share, num_context_frames - 1, length - 2, "rewards"),
                                                      (ending_share, num_context_frames - end_offset,
                                                       length - 1 - end_offset, "dones"))
                   if share]
        special = [(pairs, share) for pairs, share in special if len(pairs)]
        if not special:  # every window once per pass, as SimPLe draws them
            dataset = shuffled(starts)
        else:
            uniform_share = 1.0 - sum(share for _, share in special)
            dataset = tf.data.Dataset.sample_from_datasets(
                [shuffled(starts).repeat()] + [shuffled(pairs).repeat() for pairs, _ in special],
                weights=[uniform_share] + [share for _, share in special], seed=seed)
        return dataset.map(load, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)

    def _any_between(self, starts, first_offset, last_offset, column):
        """[M] bool: whether any step first..last_offset steps after each window start of `starts`
        [M, 2] (episode, start) has a non-zero `column` (a clipped reward, an end); steps before
        the episode (padded starts) or after it (windows past its end) do not count."""
        values, steps = self._column(column), self._column("episode_steps")
        episode_starts = self._column("episode_start")[starts[:, 0]]
        lengths = self._column("episode_length")[starts[:, 0]]
        found = np.zeros(len(starts), bool)
        for offset in range(first_offset, last_offset + 1):
            positions = starts[:, 1] + offset
            inside = (positions >= 0) & (positions < lengths)
            found |= inside & (values[steps[episode_starts + np.clip(positions, 0, lengths - 1)]] != 0)
        return found

    # Sequences: DreamerV2's training chunks, which run on from one episode into another.

    def sequences(self, rng, count, length, epochs=None, reward_column="rewards", rewarded_share=0.0):
        """`count` sequences of `length` stored steps, stacked [count, L, ...]: each starts at a
        step drawn uniformly from every stored step (of `epochs`) and, where its episode's stored
        steps run out, goes on at the start of another random episode, as DreamerV2's replay
        chunks run over episode boundaries. With `rewarded_share` (not DreamerV2's), that share
        of the sequences is drawn instead to hold a rewarded step, drawn uniformly from those
        stored, at a uniform place in the sequence, so that a reward head sees rare rewards.
        Fields: frames, actions, rewards (float32, from `reward_column`: the clipped "rewards" or
        the game's "raw_rewards"), raw_rewards, ends (the step ended the episode in the game: a
        terminal, not a time limit), firsts (an episode's first step, where a recurrent state
        starts afresh). None if nothing is stored."""
        chosen = self.chosen_episodes(epochs)
        if not chosen:
            return None
        lengths = np.array([len(self.episodes[i]) for i in chosen])
        starts_at_reset = [i for i in chosen if self.episodes[i].starts_at_reset] or list(chosen)
        # A step drawn uniformly: its episode by length, then its position.
        episodes = rng.choice(len(chosen), size=count, p=lengths / lengths.sum())
        before_rewards = (self._starts_before_rewards(rng, chosen, lengths, int(round(count * rewarded_share)),
                                                      length, reward_column) if rewarded_share else [])
        indices, firsts = np.zeros((count, length), np.int64), np.zeros((count, length), bool)
        for row, choice in enumerate(episodes):
            choice, position = before_rewards[row] if row < len(before_rewards) else (choice, None)
            episode = self.episodes[chosen[choice]]
            position = int(rng.integers(len(episode))) if position is None else position
            filled = 0
            while filled < length:
                piece = episode.indices[position:position + length - filled]
                indices[row, filled:filled + len(piece)] = piece
                firsts[row, filled] = filled > 0 or (position == 0 and episode.starts_at_reset)
                filled += len(piece)
                episode, position = self.episodes[starts_at_reset[rng.integers(len(starts_at_reset))]], 0
        actions = self._column("actions")[indices]
        return dict(frames=self.frames(indices),
                    actions=actions.astype(np.int32 if np.issubdtype(actions.dtype, np.integer) else np.float32),
                    rewards=self._column(reward_column)[indices].astype(np.float32),
                    raw_rewards=self._column("raw_rewards")[indices].astype(np.float32),
                    ends=self._column("terminated")[indices].astype(np.int32), firsts=firsts)

    def _starts_before_rewards(self, rng, chosen, lengths, count, length, reward_column):
        """`count` (chosen episode, position) pairs from which a sequence of `length` holds a
        rewarded step; none where no stored step has a reward."""
        steps = np.concatenate([self.episodes[i].indices for i in chosen])
        rewarded = np.flatnonzero(self._column(reward_column)[steps] != 0)
        if not count or not len(rewarded):
            return []
        picks = rewarded[rng.integers(len(rewarded), size=count)]
        episode_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        choices = np.searchsorted(episode_starts, picks, side="right") - 1
        positions = np.maximum(picks - episode_starts[choices] - rng.integers(length, size=count), 0)
        return [(int(c), int(p)) for c, p in zip(choices, positions)]

    # Transitions: a frame stack, the action taken on it, its reward and the next stack.

    def transition_indices(self, epochs=None, n_step=1):
        """Global steps that start a whole `n_step` transition: every stored step of an episode
        that ended in the game, and all but the last `n_step` of one still going or cut by a time
        limit (the observation `n_step` steps later is not stored, so nothing bootstraps from
        it). Forgotten episodes have none."""
        key = (None if epochs is None else tuple(epochs), n_step)
        if key not in self._transitions:  # sampling asks for them with every batch; new steps extend them
            self._transitions[key] = GrowingArray(np.int64)
            for i in self.chosen_episodes(epochs):
                self._transitions[key].extend(self._whole_transitions(self.episodes[i], n_step))
        return self._transitions[key].values

    def forget_before(self, first_kept):
        """Frees the frames of every episode whose last stored step is before global step
        `first_kept` (a replay memory's capacity, counted in whole episodes; an episode a killed
        run left unfinished goes too); they are no longer sampled. Returns the global steps forgotten."""
        forgotten = []
        for episode in self.episodes:
            if not episode.forgotten and episode.indices[-1] < first_kept:
                for i in episode.indices:
                    self._frames[i] = None
                episode.forgotten = True
                forgotten.append(episode.indices)
        if forgotten:
            self._transitions, self._chosen = {}, {}
        return np.concatenate(forgotten) if forgotten else np.zeros(0, np.int64)

    def _stack_steps(self, indices, first_offset, last_offset):
        """[B, n] global steps at positions offset first..last from each of `indices` within its
        episode, clamped to the episode: the first frame repeats before it, the last after it."""
        assert first_offset <= 0 <= last_offset, (first_offset, last_offset)
        previous, following = self._column("previous"), self._column("next")
        steps = [indices]
        for _ in range(-first_offset):
            steps.insert(0, previous[steps[0]])
        for _ in range(last_offset):
            steps.append(following[steps[-1]])
        return np.stack(steps, axis=-1)

    def stacks(self, indices, stack):
        """Frame stacks [B, stack, H, W, C] ending at the global steps `indices`; at an episode's
        first steps the stack repeats its first frame."""
        return self.frames(self._stack_steps(np.asarray(indices), 1 - stack, 0))

    def stacked_transitions(self, indices, stack):
        """For global steps `indices` (from `transition_indices`): observations and
        next_observations [B, stack, H, W, C] uint8, actions [B] int32, rewards [B] float32
        (clipped), dones [B] bool. After a done step the next observation means nothing."""
        transitions = self.n_step_transitions(indices, stack, 1, "rewards")
        return dict(transitions, rewards=transitions["rewards"][:, 0], dones=transitions["dones"][:, 0])

    def n_step_transitions(self, indices, stack, n_step, reward_column="rewards"):
        """For global steps `indices` (from `transition_indices(n_step=...)`): observations
        [B, stack, ...], actions [B] (or [B, A]), the `n_step` rewards [B, n] float32 (from
        `reward_column`: the clipped "rewards" or the game's "raw_rewards") and dones [B, n] of
        the steps from each index on, and next_observations [B, stack, ...] `n_step` steps later.
        Past an episode's last stored step the rewards and dones repeat its last (a done one):
        returns stop at the first done, and the next observation then means nothing."""
        indices = np.asarray(indices)
        # Both stacks and the steps between them: each frame is decoded once.
        steps = self._stack_steps(indices, 1 - stack, n_step)
        frames = self.frames(steps)
        following = steps[:, stack - 1:stack - 1 + n_step]  # the step itself and the n - 1 after it
        return dict(observations=frames[:, :stack], actions=self._column("actions")[indices],
                    rewards=self._column(reward_column)[following].astype(np.float32),
                    dones=self._column("dones")[following].astype(bool), next_observations=frames[:, n_step:])

    def sample_transitions(self, rng, batch_size, stack, epochs=None):
        """A batch of `batch_size` transitions drawn uniformly from `transition_indices`, as
        `stacked_transitions` gives them: the replay sampling of off-policy learners. Plain numpy
        in the caller's thread: decoding a batch costs a few percent of a DQN update on a CPU,
        and tf.data's hand-over of the arrays cost more than the decoding (scripts/bench_data.py)."""
        candidates = self.transition_indices(epochs)
        if not len(candidates):
            raise ValueError(f"no whole transition is stored in {self.data_dir}")
        return self.stacked_transitions(candidates[rng.integers(len(candidates), size=batch_size)], stack)
