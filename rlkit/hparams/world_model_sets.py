"""World-model hparam sets (rlkit.models.next_frame), at SimPLe's values and tiny ones for tests.

A world model's frame shape and number of actions are not hparams: they come from the env it
models (the loop's env settings, or the data a standalone world model trains on).
"""

from rlkit.hparams.checks import (anything, fail, non_empty, non_negative, one_of, positive, probability,
                                  register_family, shrink)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams

# The families of world-model sets, which python -m rlkit.rl.trainer_world_model trains: SimPLe's
# next-frame models (here) and DreamerV2's RSSM (dreamer_sets).
WORLD_MODEL_FAMILIES = ("next_frame", "rssm")

# rlkit.models.optimizers.SCHEDULES (the models' floor; the hparams sit below it).
WORLD_MODEL_SCHEDULES = ("constant", "linear_warmup", "linear_warmup_rsqrt_decay")

# Values every world model's set has (SimPLe's and DreamerV2's), read by the estimator and the windows.
WORLD_MODEL_RULES = dict(
    model=non_empty, num_context_frames=positive, num_target_frames=positive, hidden_size=positive,
    batch_size=positive, learning_rate=positive, clip_grad_norm=positive, mixed_precision=anything,
    train_steps=positive, save_checkpoints_steps=positive, save_summary_steps=positive, keep_checkpoints=positive,
    dream_length=positive, predict_episode_ends=anything, rewarded_window_share=probability,
    ending_window_share=probability,
)


def check_window_shares(world_model, prefix, run=None):
    if world_model.rewarded_window_share + world_model.ending_window_share > 1.0:
        fail(prefix, "ending_window_share", world_model.ending_window_share,
             f"with rewarded_window_share ({world_model.rewarded_window_share}) must add up to at most 1")


def check_next_frame_together(world_model, prefix, run):
    check_window_shares(world_model, prefix)
    if world_model.filter_double_steps > world_model.num_compress_steps:
        fail(prefix, "filter_double_steps", world_model.filter_double_steps,
             f"must be at most num_compress_steps ({world_model.num_compress_steps})")
    if world_model.single_frame and not world_model.recurrent_state_size:
        fail(prefix, "single_frame", True, "needs recurrent_state_size > 0 (the state is the model's only memory)")


def shrink_next_frame_for_dev(world_model, _):
    """50 training steps of batch 2 an epoch, a checkpoint every 25, summaries every 5."""
    for name, value in (("train_steps", 50), ("batch_size", 2), ("save_checkpoints_steps", 25),
                        ("save_summary_steps", 5)):
        shrink(world_model, name, value)


register_family("next_frame", dict(
    WORLD_MODEL_RULES,
    learning_rate_schedule=one_of(*WORLD_MODEL_SCHEDULES), learning_rate_warmup_steps=non_negative,
    num_compress_steps=positive, filter_double_steps=non_negative, num_hidden_layers=positive, dropout=probability,
    residual_dropout=probability, input_noise=probability, recurrent_state_size=non_negative, single_frame=anything,
    full_resolution_action_layers=non_negative, pixel_loss_cutoff=non_negative, changed_pixel_weight=positive,
    reward_loss_coef=non_negative, end_loss_coef=non_negative, end_target=one_of("last_frame", "ending_step"),
    head_pooling=one_of("mean", "mean_and_max"), frame_decoding=one_of("likeliest", "objects"),
    bottleneck_bits=positive, bottleneck_noise=non_negative, bit_flip_probability=probability,
    latent_discriminator_filters=positive, latent_predictor_state_size=positive,
    latent_predictor_dropout=probability, bit_loss_coef=non_negative, discretize_warmup_steps=non_negative,
    latent_rnn_warmup_steps=non_negative, latent_rnn_max_sampling=probability,
    latent_use_max_probability=probability, scheduled_sampling_steps=non_negative,
    scheduled_sampling_max_prob=probability,
), together=check_next_frame_together, dev=shrink_next_frame_for_dev)


@register_hparams
def next_frame_basic_deterministic():
    """SimPLe's deterministic world model: hidden 64, 6 compress steps, 1 target frame."""
    hparams = HParams(
        family="next_frame",
        model="next_frame_basic_deterministic",
        num_context_frames=4,
        num_target_frames=1,
        hidden_size=64,
        num_compress_steps=6,
        filter_double_steps=2,
        num_hidden_layers=2,
        dropout=0.1,           # before every encoder and decoder step
        residual_dropout=0.5,  # before every middle layer
        input_noise=0.0,       # share of input pixels replaced by the background in training
        recurrent_state_size=0,  # channels of a conv-GRU memory at full resolution; 0: none
        pixel_loss_cutoff=0.01,
        reward_loss_coef=1.0,
        # Adafactor (updates scaled by each weight's RMS) at learning_rate x the schedule:
        # "linear_warmup" rises over learning_rate_warmup_steps, "linear_warmup_rsqrt_decay"
        # then decays as 1/sqrt(step). Gradients clipped to global norm clip_grad_norm.
        learning_rate=1.5,
        learning_rate_schedule="linear_warmup_rsqrt_decay",
        learning_rate_warmup_steps=8000,
        clip_grad_norm=1.0,
        batch_size=4,
        train_steps=15000,  # python -m rlkit.rl.trainer_world_model's steps (SimPLe's model_train_steps)
    )
    return _with_rlkit_options(hparams)


def _with_rlkit_options(hparams):
    """Adds the options SimPLe's models did not have, each as SimPLe behaved, and the training
    command's bookkeeping."""
    # True: the original stochastic model's recurrent design, one frame in per step and a state
    # warmed up over the context; False: rlkit's k stacked frames (see the README).
    hparams.add_hparam("single_frame", False)
    # Also predict whether each predicted frame is its episode's last, so the world model's env
    # can end episodes (MinAtar's games end at the first lost life).
    hparams.add_hparam("predict_episode_ends", False)
    # Layers after the decoder at full resolution, each a 3x3 conv on the features with the
    # action injected, so the model can move a one-cell object as the action says (MinAtar's
    # players: docs/results_journal.md, "Where the world models go wrong").
    hparams.add_hparam("full_resolution_action_layers", 0)
    # The pixel loss's weight on pixels that changed since the frame before (1: SimPLe's plain
    # mean), so a model cannot fade small moving objects cheaply.
    hparams.add_hparam("changed_pixel_weight", 1.0)
    hparams.add_hparam("end_loss_coef", 1.0)  # the end head's loss weight (with predict_episode_ends)
    # The share of training windows drawn from those whose targets follow a rewarded step, for
    # games whose rewards are too rare for the reward head (Asterix: 0.73%).
    hparams.add_hparam("rewarded_window_share", 0.0)
    # The share drawn from those whose targets hold their episode's last frame, for games whose
    # ends are too rare for the end head (Asterix: one frame in ~90). Measured harmful so far: an
    # end is always a window's last target, so the head learns when ends come, not where
    # (docs/results_journal.md, "Ending windows").
    hparams.add_hparam("ending_window_share", 0.0)
    # What the end head predicts (with predict_episode_ends). "last_frame": that the frame it
    # predicts is its episode's last, from windows inside episodes. "ending_step": that the step
    # it is given (frames and action) ends the episode, as the env says, from windows that also
    # run past episodes' ends (the frames after the end left out of the losses); where an end
    # hangs on the action (Asterix: an enemy next to the player), the frame before it cannot
    # tell (docs/results_journal.md, "Ending steps").
    hparams.add_hparam("end_target", "last_frame")
    # How the reward and end heads pool the features over positions: "mean" (SimPLe's), or
    # "mean_and_max" (the maxima too), for one-cell events such as MinAtar's player stepping onto
    # an enemy or the gold, a hundredth of a 10x10 mean.
    hparams.add_hparam("head_pooling", "mean")
    # "likeliest" (SimPLe's): each cell's likeliest value. "objects", for on/off frames, also
    # keeps an object spread over neighbouring cells at its likeliest cell
    # (rlkit.models.world_model.object_frames), where the likeliest frame loses it.
    hparams.add_hparam("frame_decoding", "likeliest")
    hparams.add_hparam("mixed_precision", False)  # float16 compute with float32 variables: for GPUs
    hparams.add_hparam("save_checkpoints_steps", 1000)
    hparams.add_hparam("save_summary_steps", 100)
    hparams.add_hparam("keep_checkpoints", 3)
    hparams.add_hparam("dream_length", 12)  # steps of the dream rollouts shown next to real frames in TensorBoard
    return hparams


@register_hparams
def next_frame_pixel_noise():
    """The deterministic model with 5% input pixel noise: the world model of SimPLe's rlmb_base."""
    hparams = next_frame_basic_deterministic()
    hparams.input_noise = 0.05
    return hparams


def shrink_for_tests(hparams):
    """Sizes and schedules small enough to train in CPU tests."""
    hparams.hidden_size = 8
    hparams.num_compress_steps = 2
    hparams.filter_double_steps = 1
    hparams.num_hidden_layers = 1
    hparams.dropout = 0.0
    hparams.residual_dropout = 0.0
    hparams.learning_rate = 0.02
    hparams.learning_rate_schedule = "linear_warmup"
    hparams.learning_rate_warmup_steps = 5
    hparams.train_steps = 40
    hparams.save_checkpoints_steps = 20
    hparams.save_summary_steps = 10
    hparams.dream_length = 4
    return hparams


@register_hparams
def next_frame_basic_deterministic_tiny():
    """A deterministic world model small enough to train in CPU tests."""
    return shrink_for_tests(next_frame_basic_deterministic())


@register_hparams
def next_frame_basic_stochastic_discrete():
    """SimPLe's stochastic discrete world model: hidden 96, 6 compress steps, 128 bits, 6 targets."""
    hparams = HParams(
        family="next_frame",
        model="next_frame_basic_stochastic_discrete",
        num_context_frames=4,
        num_target_frames=6,
        hidden_size=96,
        num_compress_steps=6,
        filter_double_steps=3,
        num_hidden_layers=2,
        dropout=0.15,
        residual_dropout=0.5,
        input_noise=0.0,
        recurrent_state_size=64,
        pixel_loss_cutoff=0.03,
        reward_loss_coef=1.0,
        learning_rate=2e-3,
        learning_rate_schedule="linear_warmup",
        learning_rate_warmup_steps=2000,
        clip_grad_norm=1.0,
        batch_size=4,
        train_steps=15000,
        bottleneck_bits=128,
        bottleneck_noise=0.2,         # Gaussian, before tanh
        bit_flip_probability=0.1,
        latent_discriminator_filters=128,
        latent_predictor_state_size=128,
        latent_predictor_dropout=0.1,
        bit_loss_coef=1.0,
        # Schedules, in training steps (see rlkit.models.next_frame_sd).
        discretize_warmup_steps=40000,
        latent_rnn_warmup_steps=40000,
        latent_rnn_max_sampling=0.5,
        latent_use_max_probability=0.8,
        scheduled_sampling_steps=40000,
        scheduled_sampling_max_prob=1.0,
    )
    return _with_rlkit_options(hparams)


@register_hparams
def next_frame_basic_stochastic_discrete_long():
    """The stochastic discrete model on 16 target frames, batch 2."""
    hparams = next_frame_basic_stochastic_discrete()
    hparams.num_target_frames = 16
    hparams.batch_size = 2
    return hparams


@register_hparams
def next_frame_basic_stochastic_discrete_tiny():
    """A stochastic discrete world model small enough to train in CPU tests."""
    hparams = shrink_for_tests(next_frame_basic_stochastic_discrete())
    hparams.num_target_frames = 2
    hparams.recurrent_state_size = 4
    hparams.bottleneck_bits = 16
    hparams.latent_discriminator_filters = 8
    hparams.latent_predictor_state_size = 16
    hparams.discretize_warmup_steps = 20
    hparams.latent_rnn_warmup_steps = 20
    hparams.scheduled_sampling_steps = 20
    return hparams


@register_hparams
def next_frame_minatar():
    """The stochastic discrete model sized for MinAtar's 10x10 frames on a CPU: 2 compress steps
    (10 -> 5 -> 3), hidden 64, 32 latent bits, 4 target frames at batch 16, its schedules
    shortened to the ~20K steps rlmb_minatar trains it for."""
    hparams = next_frame_basic_stochastic_discrete()
    hparams.hidden_size = 64
    hparams.num_compress_steps = 2
    hparams.filter_double_steps = 1
    hparams.dropout = 0.1
    hparams.residual_dropout = 0.1
    hparams.num_target_frames = 4
    hparams.batch_size = 16
    hparams.recurrent_state_size = 16
    hparams.learning_rate_warmup_steps = 500
    hparams.bottleneck_bits = 32
    hparams.latent_discriminator_filters = 64
    hparams.latent_predictor_state_size = 64
    hparams.discretize_warmup_steps = 3000
    hparams.latent_rnn_warmup_steps = 3000
    hparams.scheduled_sampling_steps = 3000
    hparams.train_steps = 1000
    hparams.dream_length = 12
    return hparams


@register_hparams
def next_frame_pong_cpu():
    """The stochastic discrete model sized for real Pong (105x80 RGB) on a 2-core CPU: hidden 16
    (SimPLe: 96), 32 latent bits (128), 2 target frames (6), 2.8M parameters against 82M; its
    schedules shortened to the ~7K steps rlmb_pong_cpu trains it for."""
    hparams = next_frame_basic_stochastic_discrete()
    hparams.hidden_size = 16
    hparams.bottleneck_bits = 32
    hparams.latent_discriminator_filters = 32
    hparams.latent_predictor_state_size = 32
    hparams.recurrent_state_size = 8
    hparams.num_target_frames = 2
    hparams.learning_rate_warmup_steps = 500
    hparams.discretize_warmup_steps = 2000
    hparams.latent_rnn_warmup_steps = 2000
    hparams.scheduled_sampling_steps = 2000
    hparams.train_steps = 600
    return hparams
