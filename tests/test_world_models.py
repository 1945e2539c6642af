import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import SMALL_PONG_FRAME, collect_random_pong
from rlkit.data_generators.frame_store import FrameStore
from rlkit.errors import UserError
from rlkit.hparams import create_hparams
from rlkit.models.estimator import Estimator
from rlkit.models.next_frame import NextFrameBasicDeterministic
from rlkit.models.next_frame_losses import pixel_and_reward_losses
from rlkit.models.registry import get_model
from rlkit.models.world_model import LOSS_KEYS, imagine, likeliest_frames, object_frames

TINY = "next_frame_basic_deterministic_tiny"
WORLD_MODELS = [TINY, "next_frame_basic_stochastic_discrete_tiny"]
PONG = (SMALL_PONG_FRAME, 6)  # Pong's frame shape and number of actions


@pytest.fixture(scope="module")
def pong_batch(tmp_path_factory):
    """A fixed batch of 4 windows (4 context + 1 target frames) of real Pong."""
    data_dir = str(tmp_path_factory.mktemp("pong") / "data")
    collect_random_pong(data_dir, 80, frame_shape=SMALL_PONG_FRAME)
    dataset = FrameStore(data_dir).window_dataset(4, 1, seed=0)
    return next(iter(dataset.skip(40).batch(4)))


def test_output_shapes_and_dtypes(pong_batch):
    model = NextFrameBasicDeterministic(create_hparams(TINY), *PONG)
    pixel_logits, reward_logits, end_logits, _ = model(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3])
    assert pixel_logits.shape == (4, *SMALL_PONG_FRAME, 256) and pixel_logits.dtype == tf.float32
    assert reward_logits.shape == (4, 3) and end_logits is None  # SimPLe's model predicts no episode ends
    frames, rewards, _ = model.next_frame(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3],
                                          model.initial_state(4))
    assert frames.shape == (4, *SMALL_PONG_FRAME) and frames.dtype == tf.uint8
    assert rewards.shape == (4,) and set(rewards.numpy()) <= {-1, 0, 1}
    _, _, ends, _ = model.next_frame_and_end(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3],
                                             model.initial_state(4))
    assert ends.dtype == tf.bool and not ends.numpy().any()
    loss, metrics = model.loss_and_metrics(pong_batch, 0, training=True)
    assert loss.shape == () and set(metrics) == LOSS_KEYS

    # With the episode-end head: its logits, loss and accuracy, learned from the windows' ends.
    with_ends = NextFrameBasicDeterministic(create_hparams(TINY, "predict_episode_ends=True"), *PONG)
    assert with_ends(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3])[2].shape == (4, 2)
    loss, metrics = with_ends.loss_and_metrics(dict(pong_batch, ends=tf.one_hot([4, 9, 9, 9], 5, dtype=tf.int32)),
                                               0, training=True)
    assert set(metrics) == LOSS_KEYS | {"end_loss", "end_accuracy"} and metrics["end_loss"] > 0
    with_ends.hparams.end_loss_coef = 0.25  # read at each step: the end loss enters at its weight
    weighted, weighted_metrics = with_ends.loss_and_metrics(dict(pong_batch, ends=tf.one_hot([4, 9, 9, 9], 5, dtype=tf.int32)),
                                                            0, training=False)
    np.testing.assert_allclose(float(weighted), float(weighted_metrics["pixel_loss"] + weighted_metrics["reward_loss"]
                                                      + 0.25 * weighted_metrics["end_loss"]), rtol=1e-5)


def test_pixel_loss_cutoff():
    target = tf.constant([[7, 9]], tf.uint8)
    confident = tf.one_hot(target, 256) * 20.0  # cross-entropy ~ 1e-6 per pixel: under the cutoff
    metrics = pixel_and_reward_losses(confident, tf.constant([[0.0, 5.0, 0.0]]), target, tf.constant([0]), 0.03)
    assert float(metrics["pixel_loss"]) == 0.0
    assert float(metrics["pixel_accuracy"]) == 1.0 and float(metrics["reward_accuracy"]) == 1.0
    uniform = tf.zeros([1, 2, 256])
    metrics = pixel_and_reward_losses(uniform, tf.zeros([1, 3]), target, tf.constant([1]), 0.03)
    np.testing.assert_allclose(float(metrics["pixel_loss"]), np.log(256) - 0.03, rtol=1e-5)
    np.testing.assert_allclose(float(metrics["reward_loss"]), np.log(3), rtol=1e-5)


def test_changed_pixel_weight():
    # Two on/off cells, both predicted with P(on) = 0.5 (cross-entropy ln 2 each); the second turned
    # on since the frame before, so with weight 5 it counts 5 times: mean (1 + 5) / 2 x (ln 2 - cutoff).
    target, previous = tf.constant([[0, 1]], tf.uint8), tf.constant([[0, 0]], tf.uint8)
    unsure = tf.zeros([1, 2, 2])
    plain = pixel_and_reward_losses(unsure, tf.zeros([1, 3]), target, tf.constant([0]), 0.03, previous)
    np.testing.assert_allclose(float(plain["pixel_loss"]), np.log(2) - 0.03, rtol=1e-5)
    weighted = pixel_and_reward_losses(unsure, tf.zeros([1, 3]), target, tf.constant([0]), 0.03, previous, 5.0)
    np.testing.assert_allclose(float(weighted["pixel_loss"]), 3 * (np.log(2) - 0.03), rtol=1e-5)
    assert float(weighted["pixel_accuracy"]) == float(plain["pixel_accuracy"])


def test_tiny_model_overfits_a_batch_of_real_pong(pong_batch, tmp_path):
    keras.utils.set_random_seed(0)
    batch = lambda: tf.data.Dataset.from_tensors(pong_batch).repeat()  # noqa: E731
    hparams = create_hparams(TINY)
    estimator = Estimator(hparams.model, hparams, str(tmp_path), model_args=PONG, save_summary_steps=50)
    estimator.train(batch, max_steps=100)
    results = estimator.evaluate(batch, steps=1)
    assert results["pixel_accuracy"] >= 0.9, results
    prediction = next(estimator.predict(lambda: tf.data.Dataset.from_tensors(pong_batch)))
    target = pong_batch["frames"][:, 4].numpy()
    assert np.mean(prediction["frames"] == target) >= 0.9


def test_restoring_a_checkpoint_of_another_size_fails_clearly(pong_batch, tmp_path):
    batch = lambda: tf.data.Dataset.from_tensors(pong_batch).repeat()  # noqa: E731
    hparams = create_hparams(TINY)
    Estimator(hparams.model, hparams, str(tmp_path), model_args=PONG).train(batch, max_steps=2)
    bigger = Estimator(hparams.model, create_hparams(TINY, "hidden_size=16"), str(tmp_path), model_args=PONG)
    with pytest.raises(UserError, match="cannot restore checkpoint .* into model 'next_frame_basic_deterministic'"):
        bigger.train(batch, max_steps=4)


@pytest.mark.parametrize("set_name", WORLD_MODELS)
def test_checkpoint_round_trip_gives_identical_predictions(set_name, pong_batch, tmp_path):
    hparams = create_hparams(set_name, "num_target_frames=1")
    batch = lambda: tf.data.Dataset.from_tensors(pong_batch).repeat()  # noqa: E731
    once = lambda: tf.data.Dataset.from_tensors(pong_batch)  # noqa: E731
    trained = Estimator(hparams.model, hparams, str(tmp_path), model_args=PONG)
    trained.train(batch, max_steps=3)
    if hasattr(trained.model, "rng"):
        trained.model.rng.reset_from_seed(1)
    expected = next(trained.predict(once))
    restored = Estimator(hparams.model, hparams, str(tmp_path), model_args=PONG)
    next(restored.predict(once))  # builds and restores
    if hasattr(restored.model, "rng"):
        restored.model.rng.reset_from_seed(1)
    actual = next(restored.predict(once))
    np.testing.assert_array_equal(expected["frames"], actual["frames"])
    np.testing.assert_array_equal(expected["rewards"], actual["rewards"])


@pytest.mark.parametrize("set_name", WORLD_MODELS)
def test_the_end_heads_probability_is_what_the_env_ends_by(set_name, pong_batch):
    """next_frame_and_end ends where end_probabilities is above 0.5; a head made sure of ends ends all."""
    keras.utils.set_random_seed(0)
    model = get_model(create_hparams(set_name, "predict_episode_ends=True").model)(
        create_hparams(set_name, "predict_episode_ends=True"), *PONG)
    history, actions = pong_batch["frames"][:, :4], pong_batch["actions"][:, 3]
    state = model.start_state(history, pong_batch["actions"][:, :3])
    for bias in (None, [-10.0, 10.0]):
        head = getattr(model, "frame_model", model).end_head
        if bias is not None:
            head.kernel.assign(tf.zeros_like(head.kernel))
            head.bias.assign(bias)
        probabilities = model.end_probabilities(history, actions, state, 0.0).numpy()
        _, _, ends, _ = model.next_frame_and_end(history, actions, state, 0.0)
        assert probabilities.shape == (4,) and ((0 <= probabilities) & (probabilities <= 1)).all()
        np.testing.assert_array_equal(ends.numpy(), probabilities > 0.5)
    assert ends.numpy().all()


@pytest.mark.parametrize("single_frame", [False, True])
@pytest.mark.parametrize("set_name", WORLD_MODELS)
def test_every_world_model_has_the_same_interface(set_name, single_frame, pong_batch):
    """Shapes, the recurrent state threaded through steps, the temperature, and `imagine`."""
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name, f"recurrent_state_size=4,num_target_frames=1,single_frame={single_frame}")
    model = get_model(hparams.model)(hparams, *PONG)
    assert model.frame_shape == SMALL_PONG_FRAME and model.num_actions == 6
    history, actions = pong_batch["frames"][:, :4], pong_batch["actions"][:, 3]
    state = model.start_state(history, pong_batch["actions"][:, :3])
    assert state.shape == (4, *SMALL_PONG_FRAME[:2], 4)
    # The stacked model starts fresh; the single-frame model's state has warmed up over the history.
    assert (float(tf.reduce_max(tf.abs(state))) > 0) == single_frame
    frames, rewards, next_state = model.next_frame(history, actions, state, 0.0)
    assert frames.shape == (4, *SMALL_PONG_FRAME) and frames.dtype == tf.uint8
    assert rewards.shape == (4,) and set(rewards.numpy()) <= {-1, 0, 1}
    assert next_state.shape == state.shape and float(tf.reduce_max(tf.abs(next_state))) > 0
    # Greedy (temperature 0) predictions repeat.
    again, _, _ = model.next_frame(history, actions, state, 0.0)
    np.testing.assert_array_equal(frames, again)
    # The reward head's distribution: the greedy step's reward is its likeliest.
    probabilities = model.reward_probabilities(history, actions, state, 0.0).numpy()
    assert probabilities.shape == (4, 3) and np.allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_array_equal(probabilities.argmax(axis=1) - 1, rewards.numpy())
    np.testing.assert_array_equal(model.end_probabilities(history, actions, state, 0.0), np.zeros(4))  # no end head
    loss, metrics = model.loss_and_metrics(pong_batch, 0, training=False)
    assert loss.shape == () and LOSS_KEYS <= set(metrics)

    # imagine feeds the model its own frames: step by step equals one call over all actions.
    plan = np.tile(pong_batch["actions"][:, 3:4].numpy(), (1, 3))
    dreamed, dreamed_rewards, _, last_window, final_state = imagine(model, history, plan, temperature=0.0)
    assert dreamed.shape == (4, 3, *SMALL_PONG_FRAME) and dreamed_rewards.shape == (4, 3)
    np.testing.assert_array_equal(last_window[:, -3:], dreamed)
    np.testing.assert_array_equal(last_window[:, 0], history[:, -1])
    window, state = history, None
    for t in range(3):
        frame, _, _, window, state = imagine(model, window, plan[:, t:t + 1], state, temperature=0.0)
        np.testing.assert_array_equal(frame[:, 0], dreamed[:, t])
    np.testing.assert_allclose(state, final_state)


def test_the_single_frame_model_reads_one_frame_and_warms_up_over_the_context(pong_batch):
    """The original's recurrent design: one frame in per step, a state built over the context
    frames, and the pixel loss of the warm-up predictions added to the loss."""
    keras.utils.set_random_seed(0)
    hparams = create_hparams(TINY, "recurrent_state_size=4,single_frame=True")
    model = NextFrameBasicDeterministic(hparams, *PONG)
    history, actions = pong_batch["frames"][:, :4], pong_batch["actions"]
    other_past = tf.concat([tf.reverse(history[:, :3], axis=[0]), history[:, 3:]], axis=1)
    state = model.initial_state(4)
    # Only the last frame goes in: earlier frames reach the model through the state alone.
    np.testing.assert_array_equal(model(history, actions[:, 3], state)[0], model(other_past, actions[:, 3], state)[0])
    assert not np.allclose(model.start_state(history, actions[:, :3]), model.start_state(other_past, actions[:, :3]))
    loss, metrics = model.loss_and_metrics(pong_batch, 0, training=False)
    assert float(metrics["warm_up_pixel_loss"]) > 0
    np.testing.assert_allclose(loss, metrics["pixel_loss"] + metrics["reward_loss"] + metrics["warm_up_pixel_loss"],
                               rtol=1e-6)
    with pytest.raises(UserError, match="needs recurrent_state_size > 0"):
        create_hparams(TINY, "single_frame=True")  # refused where the value enters
    stateless = create_hparams(TINY)
    stateless.single_frame = True
    with pytest.raises(ValueError, match="recurrent_state_size"):
        NextFrameBasicDeterministic(stateless, *PONG)


def test_object_decoding_keeps_an_object_spread_over_cells_once_where_the_likeliest_frame_loses_it():
    on = np.full((1, 10, 10, 3), 0.01, np.float32)
    on[0, 4, 3:6, 0] = [0.3, 0.4, 0.3]      # channel 0: one object, unsure which of three cells
    on[0, 1, 1, 1], on[0, 6, 6:8, 1] = 0.9, 0.45  # channel 1: a sure cell; an object split evenly over two
    on[0, 2:5, 2:5, 2] = 0.06                # channel 2: a faint haze, no object
    on[0, 8, 8, 2] = 0.2                     # and a cell likelier than its neighbours, but alone under half an object
    on[0, 6:9, 1:4, 2] = 0.07                # and a broad blur: two thirds of an object over 9 cells, none
    on[0, 7, 2, 2] = 0.1                     # holding a third of it
    logits = tf.constant(np.stack([np.log(1 - on), np.log(on)], axis=-1))

    def cells(frames, channel):
        return np.argwhere(frames.numpy()[0, ..., channel] == 255).tolist()

    assert [cells(likeliest_frames(logits), c) for c in range(3)] == [[], [[1, 1]], []]
    assert [cells(object_frames(logits), c) for c in range(3)] == [[[4, 4]], [[1, 1], [6, 7]], []]


def test_a_full_resolution_action_layer_moves_a_one_cell_object_as_the_action_says(tmp_path):
    """MinAtar-like frames: one cell on a 10x10 grid, moved one cell by each of 4 actions (or
    kept by a no-op). Through SimPLe's coarse action injections alone the model learns this
    slowly (docs/results.md: Asterix's player); one full-resolution action layer learns it here."""
    moves = np.array([(0, 0), (0, -1), (-1, 0), (0, 1), (1, 0)])

    def windows(rng, count, length=5):
        position, actions = rng.integers(0, 10, (count, 2)), rng.integers(0, 5, (count, length)).astype(np.int32)
        frames = np.zeros((count, length, 10, 10, 1), np.uint8)
        for t in range(length):
            frames[np.arange(count), t, position[:, 0], position[:, 1], 0] = 255
            position = np.clip(position + moves[actions[:, t]], 0, 9)
        return {"frames": frames, "actions": actions, "rewards": np.zeros((count, length), np.int32)}

    keras.utils.set_random_seed(0)
    hparams = create_hparams("next_frame_minatar", "full_resolution_action_layers=1,num_target_frames=1,hidden_size=32,"
                                                   "learning_rate=0.005,learning_rate_warmup_steps=100")
    train = windows(np.random.default_rng(0), 4096)
    estimator = Estimator(hparams.model, hparams, str(tmp_path), model_args=((10, 10, 1), 5, 2),
                          save_summary_steps=10**6)
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(train).shuffle(4096, seed=0).repeat().batch(16),
                    max_steps=600)
    test = windows(np.random.default_rng(1), 256)
    frames, _, _, _, _ = imagine(estimator.model, test["frames"][:, :4], test["actions"][:, 3:4], temperature=0.0,
                              history_actions=test["actions"][:, :3])
    assert np.mean((frames[:, 0] == test["frames"][:, 4]).all(axis=(1, 2, 3))) >= 0.8  # whole frames right


@pytest.mark.parametrize("set_name", WORLD_MODELS)
def test_ending_steps_leave_the_frames_after_an_end_out_and_label_the_step_before_each_target(set_name, pong_batch):
    """world_model.end_target=ending_step: the first window's target frame lies past its
    episode's end (stored 0), so nothing it holds changes a loss; its end label is the step
    before it (the action taken on the last context frame), not the target frame's own."""
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name, "predict_episode_ends=True,num_target_frames=1,end_target=ending_step")
    model = get_model(hparams.model)(hparams, *PONG)
    ended = dict(pong_batch, ends=tf.constant([[0, 0, 0, 1, 0]] + [[0] * 5] * 3),
                 stored=tf.constant([[1, 1, 1, 1, 0]] + [[1] * 5] * 3))

    def metrics_of(features):
        if hasattr(model, "rng"):
            model.rng.reset_from_seed(1)
        return {name: float(value) for name, value in model.loss_and_metrics(features, 0, training=False)[1].items()}
    base = metrics_of(ended)
    noise = tf.random.stateless_uniform(pong_batch["frames"].shape[2:], [1, 2], maxval=256, dtype=tf.int32)
    frames = tf.tensor_scatter_nd_update(pong_batch["frames"], [[0, 4]], tf.cast(noise, tf.uint8)[None])
    assert metrics_of(dict(ended, frames=frames)) == pytest.approx(base, rel=1e-6)
    # The label is ends[3]: moving the end to the target frame's own step changes the end loss.
    moved = metrics_of(dict(ended, ends=tf.constant([[0, 0, 0, 0, 1]] + [[0] * 5] * 3)))
    assert moved["end_loss"] != pytest.approx(base["end_loss"]) and moved["pixel_loss"] == pytest.approx(base["pixel_loss"])
    # Stored, the same noisy target frame counts.
    counted = dict(ended, frames=frames, stored=tf.ones_like(ended["stored"]))
    assert metrics_of(counted)["pixel_loss"] != pytest.approx(metrics_of(dict(ended, stored=tf.ones_like(ended["stored"])))["pixel_loss"])


def test_head_pooling_mean_and_max_gives_the_heads_the_maxima_over_positions_too(pong_batch):
    """world_model.head_pooling=mean_and_max (not in SimPLe): the reward and end heads read each
    feature's maximum over positions beside its mean, so a one-cell event is not a 1/(H*W) share."""
    model = NextFrameBasicDeterministic(create_hparams(TINY, "head_pooling=mean_and_max,predict_episode_ends=True"), *PONG)
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(model.pooled(tf.constant(x)),
                               np.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2))], axis=1), rtol=1e-6)
    _, reward_logits, end_logits, _ = model(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3])
    assert reward_logits.shape == (4, 3) and end_logits.shape == (4, 2)
    mean_only = NextFrameBasicDeterministic(create_hparams(TINY, "predict_episode_ends=True"), *PONG)
    mean_only(pong_batch["frames"][:, :4], pong_batch["actions"][:, 3])
    assert model.reward_hidden.kernel.shape[0] == 2 * mean_only.reward_hidden.kernel.shape[0]
    assert model.end_hidden.kernel.shape[0] == 2 * mean_only.end_hidden.kernel.shape[0]
