"""Rollout storage: collected experience as per-epoch shards under OUTPUT_DIR/data/.

Layout: `data/epoch_{K:03d}/shard_{S:05d}.npz`, one compressed npz per shard, read with
`allow_pickle=False`. A shard holds T consecutive steps of each of N envs:

    frames       [N, T, H, W, C] uint8   the observation each action was taken on (a game
                                         without image frames: [N, T, D] float32 vectors)
    actions      [N, T] int32            ([N, T, A] float32 for continuous actions)
    rewards      [N, T] int8             clipped to {-1, 0, 1}: what agents and world models learn
    raw_rewards  [N, T] float32          the game's score
    dones        [N, T] bool             the episode ended after this step
    terminated   [N, T] bool             ...in the game (a done step that is not is a cut: a time
                                         limit, whose next observation is not stored); shards
                                         written before it existed lack it: their dones count
    firsts       [N, T] bool             this frame starts an episode
    episode_ids  [N, T] int64            unique within a data dir; an episode may span shards

Shards are written atomically (temporary file, then rename), so a reader sees whole shards
only. A shard that cannot be read anyway (a damaged disk, a foreign file) is reported once and
moved aside as `shard_S.npz.damaged`: every reader, the frame store and the resume logic
(`stored_steps`) then skip it alike, so its steps are collected again, never counted as stored.
`frame_store.FrameStore` holds the stored frames compactly for training; `read_rollouts` reads
whole episodes into memory, for small data and inspection.
"""

import dataclasses
import glob
import os
import zipfile

import numpy as np
from absl import logging

from rlkit.fileio import atomic_write_npz

FIELDS = ("frames", "actions", "rewards", "raw_rewards", "dones", "firsts", "episode_ids")
OPTIONAL_FIELDS = ("terminated",)
DAMAGED_SUFFIX = ".damaged"
_DTYPES = dict(frames=np.uint8, actions=np.int32, rewards=np.int8, raw_rewards=np.float32,
               dones=np.bool_, firsts=np.bool_, episode_ids=np.int64, terminated=np.bool_)


def stored_dtype(name, array):
    """The dtype a field is stored as: observations and actions that are not integers (vector
    observations, continuous actions) as float32, everything else as _DTYPES says."""
    if name in ("frames", "actions") and not np.issubdtype(array.dtype, np.integer):
        return np.float32
    return _DTYPES[name]


def epoch_dir(data_dir, epoch):
    return os.path.join(data_dir, f"epoch_{epoch:03d}")


def epoch_of(shard_path):
    """The epoch a shard belongs to, from its directory's name."""
    return int(os.path.basename(os.path.dirname(shard_path))[len("epoch_"):])


def list_shards(data_dir, epochs=None):
    """Shard paths in (epoch, shard) order; temporary files of unfinished writes are not shards."""
    paths = sorted(glob.glob(os.path.join(data_dir, "epoch_*", "shard_*.npz")))
    if epochs is not None:
        wanted = {os.path.basename(epoch_dir("", epoch)) for epoch in epochs}
        paths = [p for p in paths if os.path.basename(os.path.dirname(p)) in wanted]
    return paths


def _read_fields(path, names):
    """Some arrays of a shard (npz decompresses only those); ValueError if it cannot be read or
    lacks a field, so that counting a shard's steps and reading it agree on what is a shard."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [name for name in FIELDS if name not in npz.files]
            if missing:
                raise KeyError(f"no {', '.join(missing)}")
            return {name: npz[name] if name in npz.files else npz["dones"] for name in names}
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise ValueError(f"unreadable shard {path}: {e}") from None


def shard_num_steps(path):
    """Agent steps (over all envs) in a shard, read without decompressing its frames."""
    return _read_fields(path, ["dones"])["dones"].size


def stored_frame_shape(data_dir):
    """The shape of one stored step's frames ((H, W, C), or (D,) for vectors) in the first readable
    shard of `data_dir`, read from the array's header alone; None where no shard is readable."""
    for path in list_shards(data_dir):
        try:
            with np.load(path, allow_pickle=False) as npz, npz.zip.open("frames.npy") as f:
                version = np.lib.format.read_magic(f)
                shape, _, _ = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)(f)
            return tuple(shape[2:])
        except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile):
            continue
    return None


def largest_stored_action(data_dir):
    """The largest discrete action stored in `data_dir`'s readable shards (None for continuous
    actions or no data): reads the actions alone."""
    largest = None
    for path in list_shards(data_dir):
        try:
            actions = _read_fields(path, ["actions"])["actions"]
        except ValueError:
            continue
        if not np.issubdtype(actions.dtype, np.integer):
            return None
        if actions.size:
            largest = max(int(actions.max()), -1 if largest is None else largest)
    return largest


def set_aside(path, error):
    """Reports a damaged shard once and renames it to *.damaged, so that from now on every
    reader skips it and its steps count as not stored."""
    logging.warning("Skipping %s; moved aside as %s", error, os.path.basename(path) + DAMAGED_SUFFIX)
    try:
        os.replace(path, path + DAMAGED_SUFFIX)
    except OSError:
        pass  # a read-only copy (such as the gs:// cache): skipped again, reported again


def stored_steps(data_dir, epoch):
    """Agent steps (over all envs) stored for `epoch` in readable shards."""
    total = 0
    for path in list_shards(data_dir, [epoch]):
        try:
            total += shard_num_steps(path)
        except ValueError as e:
            set_aside(path, e)
    return total


def read_shards(data_dir, epochs=None, skip=()):
    """Yields (path, arrays) of each shard of `epochs` not in `skip`, in order; (path, None)
    for a damaged one, which is set aside."""
    for path in list_shards(data_dir, epochs):
        if path in skip:
            continue
        try:
            shard = load_shard(path)
        except ValueError as e:
            set_aside(path, e)
            shard = None
        yield path, shard


def load_shard(path):
    """The arrays of one shard; raises ValueError if it is not a readable, complete shard."""
    shard = _read_fields(path, FIELDS + OPTIONAL_FIELDS)
    num_envs, num_steps = shard["actions"].shape[:2]
    for name, array in shard.items():
        if array.shape[:2] != (num_envs, num_steps):
            raise ValueError(f"unreadable shard {path}: {name} has shape {array.shape}")
    return shard


class RolloutWriter:
    """Buffers the steps of a BatchEnv and writes them as shards of one epoch.

    Call `add` once per env step, with the frames the actions were taken on, then
    `write_shard`. Episode ids continue from those already in `data_dir`, so rerunning a
    killed collection adds to it without clashing.
    """

    def __init__(self, data_dir, epoch, num_envs):
        self.data_dir = data_dir
        self.directory = epoch_dir(data_dir, epoch)
        self.num_envs = num_envs
        # After the last shard ever written, damaged ones included, so no name is reused.
        numbers = [int(os.path.basename(p).split("_")[1].split(".")[0])
                   for p in glob.glob(os.path.join(self.directory, "shard_*.npz*"))]
        self._next_shard = max(numbers, default=-1) + 1
        self._next_episode_id = _max_episode_id(data_dir) + 1
        self._episode_ids = self._new_episode_ids(np.ones(num_envs, bool), np.zeros(num_envs, np.int64))
        self._firsts = np.ones(num_envs, bool)  # envs are fresh from a reset
        self._steps = []

    def _new_episode_ids(self, mask, ids):
        ids = ids.copy()
        count = int(mask.sum())
        ids[mask] = np.arange(self._next_episode_id, self._next_episode_id + count)
        self._next_episode_id += count
        return ids

    @property
    def num_buffered_steps(self):
        return len(self._steps)

    def add(self, frames, actions, step):
        """Records one batched step: `frames` [N, H, W, C] were seen, `actions` taken, `step`
        returned. Returns the step as a one-step shard's arrays ([N, 1, ...], as stored)."""
        done = step.done
        record = dict(
            frames=np.asarray(frames), actions=np.asarray(actions),
            rewards=np.sign(step.reward).astype(np.int8), raw_rewards=step.raw_reward.astype(np.float32),
            dones=done.copy(), firsts=self._firsts.copy(), episode_ids=self._episode_ids.copy(),
            terminated=step.terminated.copy())
        self._steps.append(record)
        self._firsts = done.copy()
        self._episode_ids = self._new_episode_ids(done, self._episode_ids)
        return {name: value[:, None].astype(stored_dtype(name, value)) for name, value in record.items()}

    def write_shard(self):
        """Writes the buffered steps as the next shard of the epoch; returns its path (None if empty)."""
        return self.write_shard_arrays()[0]

    def write_shard_arrays(self):
        """As `write_shard`, returning (path, the shard's arrays); (None, None) if empty."""
        if not self._steps:
            return None, None
        arrays = {}
        for name in FIELDS + OPTIONAL_FIELDS:
            array = np.stack([s[name] for s in self._steps], axis=1)
            arrays[name] = array.astype(stored_dtype(name, array))
        path = os.path.join(self.directory, f"shard_{self._next_shard:05d}.npz")
        atomic_write_npz(path, compressed=True, **arrays)
        self._next_shard += 1
        self._steps = []
        return path, arrays


def _max_episode_id(data_dir):
    largest = -1
    for path in list_shards(data_dir):
        try:
            largest = max(largest, int(_read_fields(path, ["episode_ids"])["episode_ids"].max()))
        except ValueError:
            continue
    return largest


@dataclasses.dataclass
class Episode:
    """One episode's steps (or the part of it that was collected), time first."""
    episode_id: int
    frames: np.ndarray       # [T, H, W, C] uint8
    actions: np.ndarray      # [T] int32
    rewards: np.ndarray      # [T] int8, clipped
    raw_rewards: np.ndarray  # [T] float32
    starts_at_reset: bool    # frames[0] is the first frame of the episode
    complete: bool           # starts at a reset and ends with done

    def __len__(self):
        return len(self.actions)


@dataclasses.dataclass
class RolloutData:
    episodes: list           # of Episode, in collection order
    shards: list             # paths read
    skipped: list            # paths that could not be read

    @property
    def num_steps(self):
        return sum(len(e) for e in self.episodes)


def read_rollouts(data_dir, epochs=None):
    """Every episode (or episode part) stored in `data_dir`, joined across shards."""
    pieces, order, shards, skipped = {}, [], [], []
    for path, shard in read_shards(data_dir, epochs):
        if shard is None:
            skipped.append(path)
            continue
        shards.append(path)
        for env in range(shard["actions"].shape[0]):
            ids = shard["episode_ids"][env]
            boundaries = np.flatnonzero(np.diff(ids)) + 1
            for start, end in zip(np.r_[0, boundaries], np.r_[boundaries, len(ids)]):
                episode_id = int(ids[start])
                if episode_id not in pieces:
                    pieces[episode_id] = []
                    order.append(episode_id)
                pieces[episode_id].append({name: shard[name][env, start:end] for name in FIELDS})
    episodes = []
    for episode_id in order:
        parts = pieces[episode_id]
        joined = {name: np.concatenate([p[name] for p in parts]) for name in FIELDS}
        episodes.append(Episode(
            episode_id=episode_id, frames=joined["frames"], actions=joined["actions"],
            rewards=joined["rewards"], raw_rewards=joined["raw_rewards"],
            starts_at_reset=bool(joined["firsts"][0]),
            complete=bool(joined["firsts"][0] and joined["dones"][-1])))
    return RolloutData(episodes, shards, skipped)
