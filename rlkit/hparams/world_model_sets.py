"""World-model hparam sets (rlkit.models.next_frame), at SimPLe's sizes and tiny ones for tests.

A world model's frame shape and number of actions are not hparams: they come from the env it
models (the loop's env settings, or the data a standalone world model trains on).
"""

from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams


@register_hparams
def next_frame_basic_deterministic():
    """SimPLe's deterministic world model: hidden 64, 6 compress steps, 1 target frame."""
    return HParams(
        model="next_frame_basic_deterministic",
        num_context_frames=4,
        num_target_frames=1,
        hidden_size=64,
        num_compress_steps=6,
        filter_double_steps=2,
        num_hidden_layers=2,
        dropout=0.1,
        recurrent_state_size=0,  # channels of a conv-GRU memory at full resolution; 0: none
        pixel_loss_cutoff=0.03,
        reward_loss_coef=1.0,
        learning_rate=1e-3,
        batch_size=4,
        mixed_precision=False,  # float16 compute with float32 variables: for GPUs
        # Training command (python -m rlkit.rl.trainer_world_model):
        train_steps=15000,
        save_checkpoints_steps=1000,
        save_summary_steps=100,
        keep_checkpoints=3,
        dream_length=12,  # steps of the dream rollouts shown next to real frames in TensorBoard
    )


@register_hparams
def next_frame_basic_deterministic_tiny():
    """A deterministic world model small enough to train in CPU tests."""
    hparams = next_frame_basic_deterministic()
    hparams.hidden_size = 8
    hparams.num_compress_steps = 2
    hparams.filter_double_steps = 1
    hparams.num_hidden_layers = 1
    hparams.dropout = 0.0
    hparams.learning_rate = 1e-2
    hparams.train_steps = 40
    hparams.save_checkpoints_steps = 20
    hparams.save_summary_steps = 10
    hparams.dream_length = 4
    return hparams


@register_hparams
def next_frame_basic_stochastic_discrete():
    """SimPLe's stochastic discrete world model: hidden 96, 6 compress steps, 128 bits, 6 targets."""
    hparams = next_frame_basic_deterministic()
    hparams.model = "next_frame_basic_stochastic_discrete"
    hparams.hidden_size = 96
    hparams.filter_double_steps = 3
    hparams.num_target_frames = 6
    hparams.learning_rate = 2e-3
    hparams.recurrent_state_size = 64
    hparams.add_hparam("bottleneck_bits", 128)
    hparams.add_hparam("bottleneck_noise", 0.2)
    hparams.add_hparam("bit_flip_probability", 0.1)
    hparams.add_hparam("latent_hidden_size", 128)
    hparams.add_hparam("latent_compress_steps", 4)
    hparams.add_hparam("bit_loss_coef", 1.0)
    # Training steps over which the share of examples driven by the prior's bits, and the share of
    # later targets predicted from the model's own frames, rise to their maxima.
    hparams.add_hparam("latent_prior_schedule_steps", 20000)
    hparams.add_hparam("latent_prior_max_mix", 0.5)
    hparams.add_hparam("scheduled_sampling_steps", 40000)
    hparams.add_hparam("scheduled_sampling_max", 0.5)
    return hparams


@register_hparams
def next_frame_basic_stochastic_discrete_long():
    """The stochastic discrete model trained on 16 target frames."""
    hparams = next_frame_basic_stochastic_discrete()
    hparams.num_target_frames = 16
    return hparams


@register_hparams
def next_frame_basic_stochastic_discrete_tiny():
    """A stochastic discrete world model small enough to train in CPU tests."""
    hparams = next_frame_basic_stochastic_discrete()
    for name, value in next_frame_basic_deterministic_tiny().values().items():
        if name != "model":
            hparams.set_hparam(name, value)
    hparams.num_target_frames = 2
    hparams.recurrent_state_size = 4
    hparams.bottleneck_bits = 16
    hparams.latent_hidden_size = 16
    hparams.latent_compress_steps = 2
    hparams.latent_prior_schedule_steps = 20
    hparams.scheduled_sampling_steps = 20
    return hparams
