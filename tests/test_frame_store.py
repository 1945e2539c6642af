import resource
import sys
import threading

import numpy as np
import pytest

from conftest import collect_random_pong
from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from test_storage import NUM_ENVS, H, W, fake_step, frames_at, write_collection


def episodes_by_id(data_dir):
    """The reference: whole episodes read straight from the shards."""
    return {e.episode_id: e for e in storage.read_rollouts(data_dir).episodes}


def test_store_holds_the_same_episodes_as_the_shards(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    store, reference = FrameStore(data_dir), episodes_by_id(data_dir)
    assert store.num_steps == 60 and store.frame_shape == (H, W, 3)
    assert [e.episode_id for e in store.episodes] == list(reference)
    for i, episode in enumerate(store.episodes):
        expected = reference[episode.episode_id]
        window = store.window(i, 0, len(episode))
        np.testing.assert_array_equal(window["frames"], expected.frames)  # joined across shards
        np.testing.assert_array_equal(window["actions"], expected.actions)
        np.testing.assert_array_equal(window["rewards"], expected.rewards)
        np.testing.assert_array_equal(window["raw_rewards"], expected.raw_rewards)
        assert (episode.starts_at_reset, episode.complete) == (expected.starts_at_reset, expected.complete)


def test_a_store_fed_step_by_step_holds_what_one_reading_the_shards_holds(tmp_path):
    """A replay memory adds each step as it comes (add_steps); its store must hold the episodes,
    columns, whole transitions, frame stacks and n-step transitions of a store that reads the
    same steps back from their shards, though it numbers them in another order."""
    data_dir = str(tmp_path / "data")
    fed = FrameStore(str(tmp_path / "nothing"))
    fed.transition_indices(n_step=3)  # extended as steps come, not recomputed
    writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=NUM_ENVS)
    for t in range(30):
        dones = [(t, env) in ((9, 0), (20, 1), (25, 0)) for env in range(NUM_ENVS)]
        step = fake_step(t, dones, [5.0 if t % 7 == 0 else 0.0, -2.0 if t % 5 == 0 else 0.0])
        fed.add_steps(writer.add(frames_at(t), np.array([t % 6, (t + 1) % 6]), step), epoch=0)
        if writer.num_buffered_steps == 8:
            writer.write_shard()
    writer.write_shard()
    read = FrameStore(data_dir)

    def env_and_time(store, steps):
        return [tuple(int(v) for v in frame[0, 0, :2]) for frame in store.frames(np.asarray(steps))]

    def by_step(store, n_step):  # (env, t) of each whole transition -> its n-step transition
        steps = store.transition_indices(n_step=n_step)
        batch = store.n_step_transitions(steps, stack=2, n_step=n_step, reward_column="raw_rewards")
        return {key: tuple(value[i].tobytes() for value in batch.values())
                for i, key in enumerate(env_and_time(store, steps))}

    assert fed.num_steps == read.num_steps == 60
    assert [e.episode_id for e in fed.episodes] == [e.episode_id for e in read.episodes]
    for mine, theirs in zip(fed.episodes, read.episodes):
        assert env_and_time(fed, mine.indices) == env_and_time(read, theirs.indices)
        assert (mine.starts_at_reset, mine.complete) == (theirs.starts_at_reset, theirs.complete)
        for name in ("actions", "rewards", "raw_rewards", "dones", "terminated"):
            np.testing.assert_array_equal(fed.step_values(name, mine.indices), read.step_values(name, theirs.indices))
    for n_step in (1, 3):
        assert by_step(fed, n_step) == by_step(read, n_step)
    assert len(fed.transition_indices(n_step=3)) == 60 - 2 * 3  # the ongoing episodes' last 3 wait


def test_windows_stay_inside_episodes_and_match_the_episodes(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    store, reference = FrameStore(data_dir), episodes_by_id(data_dir)
    windows = list(store.window_dataset(num_context_frames=4, num_target_frames=2, seed=0).as_numpy_iterator())
    # Valid starts per episode: len - 6 + 1 for episodes of 10, 16, 4 (none), 21, 9 steps.
    assert len(windows) == 5 + 11 + 16 + 4
    for window in windows:
        assert window["frames"].shape == (6, H, W, 3) and window["frames"].dtype == np.uint8
        env, times = window["frames"][0, 0, 0, 0], window["frames"][:, 0, 0, 1].astype(int)
        np.testing.assert_array_equal(np.diff(times), 1)  # consecutive steps of one env
        episode_ends = [9, 25] if env == 0 else [20]
        assert not any(times[0] <= end < times[-1] for end in episode_ends)  # no boundary inside
        matches = [e for e in reference.values() for t in range(len(e) - 5)
                   if np.array_equal(e.frames[t:t + 6], window["frames"])
                   and np.array_equal(e.actions[t:t + 6], window["actions"])
                   and np.array_equal(e.rewards[t:t + 6], window["rewards"])]
        assert len(matches) == 1
    starts = [tuple(w["frames"][0, 0, 0, :2]) for w in windows]
    assert len(set(starts)) == len(starts)
    with pytest.raises(ValueError, match="22 steps a window needs"):
        store.window_dataset(20, 2)
    for number, episode in enumerate(store.episodes):  # per-step columns read without frames
        whole = store.window(number, 0, len(episode))
        for name, column in (("actions", "actions"), ("rewards", "rewards"), ("dones", "ends")):
            np.testing.assert_array_equal(store.step_values(name, episode.indices), whole[column])


def test_padded_windows_start_episodes_with_their_first_frame_and_carry_their_ends(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    store = FrameStore(data_dir)
    windows = list(store.window_dataset(num_context_frames=4, num_target_frames=2, seed=0,
                                        pad_starts=True).as_numpy_iterator())
    # 3 more starts per episode (up to 3 frames before its first): the 4-step episode now has 2.
    assert len(windows) == 5 + 11 + 16 + 4 + 5 * 3 - 1
    for window in windows:
        times = window["frames"][:, 0, 0, 1].astype(int)
        padded = np.concatenate([np.diff(times) == 0, [False]])  # before the real first frame, repeated
        assert not padded[3:].any() and (np.diff(times)[~padded[:-1]] == 1).all()
        assert (window["actions"][:4][padded[:4]] == 0).all() and (window["ends"][padded] == 0).all()
    # Every complete episode's end is a target of some window: the frame after which it ended.
    ends = [w for w in windows if w["ends"][4:].any()]
    complete = sum(e.complete for e in store.episodes if len(e) >= 3)
    assert len(ends) == complete and all(w["ends"][-1] == 1 for w in ends)


def test_frame_stacks_match_what_the_policy_saw(tmp_path):
    """Stacks from the store equal FrameStack's, padding at episode starts included."""
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    store = FrameStore(data_dir)
    for episode in store.episodes:
        frames = store.frames(episode.indices)
        # FrameStack's rule: k copies of the first frame at the start, then shift in each new one.
        stack = np.repeat(frames[:1], 4, axis=0)
        for t in range(len(episode)):
            if t:
                stack = np.concatenate([stack[1:], frames[t:t + 1]])
            np.testing.assert_array_equal(store.stacks([episode.indices[t]], 4)[0], stack)


def test_transitions_link_a_stack_to_the_next_and_end_with_episodes(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    store = FrameStore(data_dir)
    indices = store.transition_indices()
    # Every step but the last of the 2 episodes cut off by the end of the collection.
    assert len(indices) == 60 - 2
    batch = store.stacked_transitions(indices, 4)
    assert batch["observations"].shape == (58, 4, H, W, 3) and batch["next_observations"].shape == (58, 4, H, W, 3)
    for i in range(58):
        if batch["dones"][i]:
            continue
        # The next stack is this one shifted by one step of the same env.
        np.testing.assert_array_equal(batch["next_observations"][i, :-1], batch["observations"][i, 1:])
        now, later = batch["observations"][i, -1, 0, 0], batch["next_observations"][i, -1, 0, 0]
        assert now[0] == later[0] and later[1] == now[1] + 1
    assert batch["dones"].sum() == 3  # the episodes that ended after steps 9, 20 and 25
    first, again = (store.sample_transitions(np.random.default_rng(0), 8, 4) for _ in range(2))
    np.testing.assert_array_equal(first["observations"], again["observations"])  # seeded
    assert first["observations"].shape == (8, 4, H, W, 3) and first["actions"].shape == (8,)


def test_update_reads_only_new_shards(tmp_path):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir, num_steps=16)
    store = FrameStore(data_dir)
    assert store.num_steps == 32
    read = list(store.shards)

    def episodes_of_at_least(length):  # what chosen_episodes must answer, whatever it remembers
        return tuple(i for i, e in enumerate(store.episodes) if len(e) >= length and not e.forgotten)
    before = store.chosen_episodes(min_length=5)
    assert before == episodes_of_at_least(5) and store.chosen_episodes(min_length=5) == before
    write_collection(data_dir, num_steps=8)  # one more shard, as a collection goes on
    assert store.update() == 16
    assert store.shards[:len(read)] == read and len(store.shards) == len(read) + 1
    assert store.update() == 0
    # Episodes grew and came: the answers are the new store's, not the remembered ones.
    assert store.chosen_episodes(min_length=5) == episodes_of_at_least(5) != before
    store.forget_before(store.episodes[0].indices[-1] + 1)
    assert store.chosen_episodes(min_length=5) == episodes_of_at_least(5) and 0 not in store.chosen_episodes()


def test_damaged_shard_is_reported_once_and_skipped_like_the_resume_logic(tmp_path, caplog):
    data_dir = str(tmp_path / "data")
    write_collection(data_dir)
    last = storage.list_shards(data_dir)[-1]
    with open(last, "r+b") as f:
        f.truncate(200)
    store = FrameStore(data_dir)
    assert store.skipped == [last] and store.num_steps == 48
    assert storage.stored_steps(data_dir, 0) == store.num_steps  # both count the same shards
    assert FrameStore(data_dir).skipped == []  # set aside: reported once


def test_memory_of_a_store_stays_small(tmp_path):
    """A few thousand real Pong steps: compressed frames are a small part of the raw ones, and
    opening the store grows the process by far less than the raw frames."""
    data_dir = str(tmp_path / "data")
    collect_random_pong(data_dir, 1000, num_envs=2)
    raw_bytes = 2000 * 105 * 80 * 3  # 50 MB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    store = FrameStore(data_dir)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert store.num_steps == 2000
    assert store.compressed_bytes < raw_bytes / 20
    assert grown < raw_bytes / 2, grown  # one shard decoded at a time, never all frames
    np.testing.assert_array_equal(store.frames(store.episodes[0].indices[:3]),
                                  storage.read_rollouts(data_dir).episodes[0].frames[:3])


def test_threads_decoding_windows_together_join_the_columns_once(tmp_path):
    """Found in a Breakout loop run: window_dataset's decoding threads each found the joined
    columns missing after an update and rebuilt them over one another (KeyError: 'position')."""
    data_dir = str(tmp_path / "data")
    writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=NUM_ENVS)
    num_steps = 3000  # 1,500 two-step episodes per env: joining takes long enough for threads to collide
    for t in range(num_steps):
        writer.add(np.zeros((NUM_ENVS, H, W, 3), np.uint8), np.zeros(NUM_ENVS, np.int64),
                   fake_step(t, [t % 2 == 1] * NUM_ENVS, np.zeros(NUM_ENVS)))
    writer.write_shard()
    store = FrameStore(data_dir)
    assert len(store.episodes) == num_steps
    errors = []

    def read_a_window(barrier):
        barrier.wait()
        try:
            store.window(len(store.episodes) - 1, 0, 2)
        except Exception as e:  # noqa: BLE001  (any failure of a reading thread fails the test)
            errors.append(repr(e))

    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can: any race shows
    try:
        for _ in range(10):
            store.update()  # nothing new, but the joined columns are dropped, as after a collection
            barrier = threading.Barrier(8)
            threads = [threading.Thread(target=read_a_window, args=(barrier,)) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(switch_interval)
    assert not errors, errors[:3]


def store_with_two_rewards(data_dir):
    """60 steps of 2 envs, two rewarded: env 0's step 13 and env 1's step 27 (env 0's episode ends at 9)."""
    writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=NUM_ENVS)
    for t in range(30):
        raw = [1.0 if t == 13 else 0.0, 1.0 if t == 27 else 0.0]
        writer.add(frames_at(t), np.array([0, 0]), fake_step(t, [t == 9, False], raw))
    writer.write_shard()
    return FrameStore(data_dir)


def test_a_rewarded_share_of_sequences_holds_the_rare_rewards(tmp_path):
    store = store_with_two_rewards(str(tmp_path / "data"))

    def rewarded(batch):
        return (batch["rewards"] != 0).any(axis=1)
    uniform = store.sequences(np.random.default_rng(0), 64, 4)
    assert rewarded(uniform).mean() < 0.3  # about 8 of 60 starts reach a reward within 4 steps
    # Share 0 draws exactly what the uniform sampler does (runs from before the option resume alike).
    np.testing.assert_array_equal(store.sequences(np.random.default_rng(0), 64, 4, rewarded_share=0.0)["frames"],
                                  uniform["frames"])
    assert rewarded(store.sequences(np.random.default_rng(0), 64, 4, rewarded_share=1.0)).all()
    half = store.sequences(np.random.default_rng(1), 64, 4, rewarded_share=0.5)
    assert rewarded(half)[:32].all() and rewarded(half).mean() < 0.7
    # The rewarded step lands at every place in the sequence, not only at its start or end.
    places = np.argmax(store.sequences(np.random.default_rng(2), 256, 4, rewarded_share=1.0)["rewards"] != 0, axis=1)
    assert set(places) == {0, 1, 2, 3}


def test_a_rewarded_share_of_windows_has_a_reward_for_the_targets_to_predict(tmp_path):
    store = store_with_two_rewards(str(tmp_path / "data"))

    def windows(share, count):
        dataset = store.window_dataset(4, 2, seed=0, pad_starts=True, rewarded_share=share)
        return list(dataset.take(count).as_numpy_iterator())

    def predicts_a_reward(window):  # targets 4 and 5 are predicted with the rewards of steps 3 and 4
        return window["rewards"][3:5].any()
    # Share 0: every window once, as before the option.
    assert len(windows(0.0, 1000)) == len(store.window_starts(6, padding=3))
    assert np.mean([predicts_a_reward(w) for w in windows(0.0, 1000)]) < 0.1  # 4 of 54 windows
    everything = windows(1.0, 200)
    assert all(predicts_a_reward(w) for w in everything)
    # The rewarded step is either target's (step 3 or 4), never the last step's, which nothing predicts.
    assert {int(w["frames"][3, 0, 0, 1]) for w in everything} == {12, 13, 26, 27}
    half = np.mean([predicts_a_reward(w) for w in windows(0.5, 400)])
    assert 0.4 < half < 0.65


def test_an_ending_share_of_windows_has_an_episode_end_for_the_targets_to_predict(tmp_path):
    """Env 0's first episode ends on frame 9: the one window whose targets (steps 4 and 5) hold
    it starts at frame 4; the other episodes go on past the data."""
    store = store_with_two_rewards(str(tmp_path / "data"))

    def windows(count, **shares):
        dataset = store.window_dataset(4, 2, seed=0, pad_starts=True, **shares)
        return list(dataset.take(count).as_numpy_iterator())
    assert sum(w["ends"][4:].any() for w in windows(1000)) == 1  # every window once, one ending
    ending = windows(50, ending_share=1.0)
    assert all(w["ends"][5] == 1 and w["frames"][5, 0, 0, 1] == 9 and w["frames"][5, 0, 0, 0] == 0 for w in ending)
    mixed = windows(400, rewarded_share=0.25, ending_share=0.25)
    share_ending = np.mean([w["ends"][4:].any() for w in mixed])
    share_rewarded = np.mean([w["rewards"][3:5].any() for w in mixed])
    assert 0.15 < share_ending < 0.35 and 0.2 < share_rewarded < 0.45


def test_windows_past_an_episodes_end_mark_the_steps_after_it_and_hold_its_ending_step_at_each_target(tmp_path):
    """With past_end (world_model.end_target=ending_step) a window may run up to its targets'
    number of steps past its episode's last frame: those steps repeat the last frame with no
    action, reward or end, and `stored` says which they are. Env 0's first episode ends on frame 9."""
    store = store_with_two_rewards(str(tmp_path / "data"))

    def windows(count=None, **options):
        dataset = store.window_dataset(4, 2, seed=0, pad_starts=True, past_end=True, **options)
        return list((dataset.take(count) if count else dataset).as_numpy_iterator())
    everything = windows()
    assert len(everything) == len(store.window_starts(6, padding=3, past_end=2)) == 10 + 20 + 30
    for window in everything:
        stored = window["stored"].astype(bool)
        assert stored[:4].all() and (np.diff(window["stored"]) <= 0).all()  # the context always stored
        last = np.flatnonzero(stored)[-1]
        assert (window["frames"][~stored] == window["frames"][last]).all()
        assert not (window["actions"][~stored].any() or window["rewards"][~stored].any() or window["ends"][~stored].any())
    # Every window once, the ending step of env 0's episode as the last context frame's (both
    # targets past the end) or as the first target's (the second past it).
    ending = [w for w in everything if w["ends"].any()]
    assert sorted(int(np.argmax(w["ends"])) for w in ending) == [3, 4, 5]
    # With an ending share, the end is a target's step (the step before a target frame: 3 or 4).
    drawn = windows(100, ending_share=1.0)
    places = [int(np.argmax(w["ends"])) for w in drawn]
    assert all(w["ends"].sum() == 1 and w["frames"][p, 0, 0, 1] == 9 and w["frames"][p, 0, 0, 0] == 0
               and not w["stored"][p + 1:].any() for w, p in zip(drawn, places))
    assert set(places) == {3, 4}
