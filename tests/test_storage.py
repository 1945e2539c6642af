import os

import numpy as np
import pytest

from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import Step
from rlkit.fileio import atomic_write_bytes

NUM_ENVS, H, W = 2, 6, 5


def fake_step(t, dones, raw_rewards):
    done = np.asarray(dones, bool)
    raw = np.asarray(raw_rewards, np.float32)
    zeros = np.zeros(NUM_ENVS)
    return Step(observation=None, reward=np.sign(raw), raw_reward=raw, terminated=done,
                truncated=np.zeros(NUM_ENVS, bool), episode_return=zeros,
                episode_clipped_return=zeros, episode_length=zeros)


def frames_at(t):
    """Frames that encode (env, t) so a test can tell where any frame came from."""
    frames = np.zeros((NUM_ENVS, H, W, 3), np.uint8)
    for env in range(NUM_ENVS):
        frames[env, 0, 0, 0], frames[env, 0, 0, 1] = env, t
    return frames


def write_collection(data_dir, num_steps=30, shard_steps=8, done_at=((9, 0), (20, 1), (25, 0))):
    """Writes `num_steps` steps of 2 envs; env e's episode ends after step t for (t, e) in done_at."""
    writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=NUM_ENVS)
    for t in range(num_steps):
        dones = [(t, env) in done_at for env in range(NUM_ENVS)]
        raw = [5.0 if t % 7 == 0 else 0.0, -2.0 if t % 5 == 0 else 0.0]
        writer.add(frames_at(t), np.array([t % 6, (t + 1) % 6]), fake_step(t, dones, raw))
        if writer.num_buffered_steps == shard_steps:
            writer.write_shard()
    writer.write_shard()
    return writer


def test_round_trip_joins_episodes_across_shards(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    shards = storage.list_shards(data_dir)
    assert [os.path.basename(p) for p in shards] == [f"shard_0000{i}.npz" for i in range(4)]
    shard = storage.load_shard(shards[0])
    assert shard["frames"].shape == (2, 8, H, W, 3) and shard["frames"].dtype == np.uint8
    assert shard["rewards"].dtype == np.int8 and shard["raw_rewards"].dtype == np.float32

    data = storage.read_rollouts(data_dir)
    assert data.skipped == [] and data.num_steps == 60
    by_env = {}
    for episode in data.episodes:
        by_env.setdefault(int(episode.frames[0, 0, 0, 0]), []).append(episode)
    # env 0: steps 0-9 (done), 10-25 (done), 26-29 (partial); env 1: 0-20 (done), 21-29 (partial)
    assert [(len(e), e.complete) for e in by_env[0]] == [(10, True), (16, True), (4, False)]
    assert [(len(e), e.complete) for e in by_env[1]] == [(21, True), (9, False)]
    second = by_env[0][1]
    np.testing.assert_array_equal(second.frames[:, 0, 0, 1], np.arange(10, 26))  # across 2 shards
    np.testing.assert_array_equal(second.actions, np.arange(10, 26) % 6)
    expected_raw = np.where(np.arange(10, 26) % 7 == 0, 5.0, 0.0)
    np.testing.assert_array_equal(second.raw_rewards, expected_raw)
    np.testing.assert_array_equal(second.rewards, np.sign(expected_raw))
    assert len({e.episode_id for e in data.episodes}) == 5


def test_half_written_and_damaged_shards_never_break_the_reader(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    epoch_dir = storage.epoch_dir(data_dir, 0)
    # What a crash in the middle of atomic_write_bytes leaves: a temporary file, not a shard.
    with open(os.path.join(epoch_dir, ".tmp-abc123"), "wb") as f:
        f.write(b"PK\x03\x04 half a zip")
    # A shard damaged after it was written (truncated on a full disk, say).
    good = open(storage.list_shards(data_dir)[0], "rb").read()
    with open(os.path.join(epoch_dir, "shard_00099.npz"), "wb") as f:
        f.write(good[: len(good) // 2])
    data = storage.read_rollouts(data_dir)
    assert len(data.shards) == 4
    damaged = os.path.join(epoch_dir, "shard_00099.npz")
    assert data.skipped == [damaged]
    assert data.num_steps == 60
    # Reported once: set aside, so every reader and the resume logic skip it from now on.
    assert os.path.exists(damaged + ".damaged") and not os.path.exists(damaged)
    assert storage.read_rollouts(data_dir).skipped == []
    assert storage.stored_steps(data_dir, 0) == 60
    # A new shard never takes the damaged one's name.
    assert storage.RolloutWriter(data_dir, 0, NUM_ENVS)._next_shard == 100


def test_resume_logic_counts_only_readable_shards(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    last = storage.list_shards(data_dir)[-1]
    with open(last, "r+b") as f:
        f.truncate(100)
    assert storage.stored_steps(data_dir, 0) == 48  # the damaged shard's 12 steps are collected again
    assert storage.list_shards(data_dir)[-1] != last


def test_a_shard_without_all_fields_is_not_counted_as_stored(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    last = storage.list_shards(data_dir)[-1]
    with np.load(last) as npz:
        kept = {name: npz[name] for name in npz.files if name != "frames"}
    with open(last, "wb") as f:
        np.savez_compressed(f, **kept)  # its actions are readable, its frames are gone
    assert storage.stored_steps(data_dir, 0) == 48
    assert storage.read_rollouts(data_dir).num_steps == 48


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    path = str(tmp_path / "shard_00000.npz")
    atomic_write_bytes(path, b"old")

    def killed(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(path, b"new and longer")
    assert open(path, "rb").read() == b"old"
    assert os.listdir(tmp_path) == ["shard_00000.npz"]


def test_a_new_writer_continues_shards_and_episode_ids(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    first_ids = {e.episode_id for e in storage.read_rollouts(data_dir).episodes}
    write_collection(data_dir, num_steps=8)  # a rerun after a kill
    assert len(storage.list_shards(data_dir)) == 5
    ids = {e.episode_id for e in storage.read_rollouts(data_dir).episodes}
    assert len(ids) == len(first_ids) + 2 and min(ids - first_ids) > max(first_ids)
