"""DreamerV2's world model (rlkit.models.rssm) at the published values, sized for MinAtar, and tiny.

Provenance (../shared/reference/dreamer.md): Hafner et al. 2021, "Mastering Atari with Discrete
World Models", Table D.1 (Atari), and the released code (danijar/dreamerv2 configs.yaml).
"""

from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams


@register_hparams
def rssm_atari():
    """DreamerV2's Atari world model (paper, Table D.1): GRU 600, 32x32 latents, 64x64 frames,
    encoder depth 48 (4 convs k4 s2), decoder transposed convs k5,5,6,6, heads 4x400, KL scale
    0.1 balanced 0.8 without free nats, continue loss x5, Adam 2e-4 (eps 1e-5), clip 100.
    Batch: the paper's 50 sequences of 50; the released code's 16 x 50 fits a smaller GPU
    (batch_size=16 gives it)."""
    return HParams(
        model="rssm",
        # Windows: num_context_frames frames filtered before the imagined steps of the interface
        # (imagine, the player); training windows are context + target steps long.
        num_context_frames=4,
        num_target_frames=46,
        deter_size=600,
        stoch_groups=32,
        stoch_classes=32,
        hidden_size=600,
        encoder_depth=48,
        encoder_kernels=[4, 4, 4, 4],
        encoder_strides=[2, 2, 2, 2],
        decoder_kernels=[5, 5, 6, 6],
        head_units=400,
        head_layers=4,
        kl_scale=0.1,
        kl_balance=0.8,
        free_nats=0.0,
        continue_scale=5.0,
        learning_rate=2e-4,
        clip_grad_norm=100.0,
        batch_size=50,
        # Windows at episodes' starts too (their context padded), so short episodes and their ends
        # are in the data.
        predict_episode_ends=True,
        mixed_precision=False,
        train_steps=100_000,
        save_checkpoints_steps=1000,
        save_summary_steps=100,
        keep_checkpoints=3,
        dream_length=12,
    )


@register_hparams
def rssm_minatar():
    """DreamerV2's world model for MinAtar's 10x10 on/off cells (no official values; the community
    MinAtar runs in dreamer.md used GRU 200, a k3 conv of depth 16 and short horizons): GRU 200,
    32x32 latents, two k3 convs of depth 16 and 32, a Bernoulli decoder per cell, heads 2x200,
    windows of 16 steps (MinAtar's episodes at the start of training are short), batch 16."""
    hparams = rssm_atari()
    hparams.num_target_frames = 12
    hparams.deter_size = 200
    hparams.hidden_size = 200
    hparams.encoder_depth = 16
    hparams.encoder_kernels = [3, 3]
    hparams.encoder_strides = [1, 1]
    hparams.decoder_kernels = []
    hparams.head_units = 200
    hparams.head_layers = 2
    hparams.learning_rate = 3e-4
    hparams.batch_size = 16
    hparams.train_steps = 4000
    return hparams


@register_hparams
def rssm_tiny():
    """A few steps of a small RSSM: for tests."""
    hparams = rssm_minatar()
    hparams.num_context_frames = 2
    hparams.num_target_frames = 3
    hparams.deter_size = 16
    hparams.stoch_groups = 4
    hparams.stoch_classes = 4
    hparams.hidden_size = 16
    hparams.encoder_depth = 4
    hparams.head_units = 16
    hparams.head_layers = 1
    hparams.batch_size = 4
    hparams.train_steps = 4
    hparams.save_checkpoints_steps = 2
    hparams.save_summary_steps = 2
    hparams.dream_length = 3
    return hparams


@register_hparams
def dreamer_actor_critic_atari():
    """DreamerV2's actor-critic in imagination on Atari (paper, Table D.1), with its world model as
    `world_model`: horizon 15, gamma 0.995 (the table; 0.999 in the main text and the released
    code), lambda 0.95, actor and critic MLPs 4 x 400, Adam 4e-5 (actor) and 1e-4 (critic) with
    epsilon 1e-5 and clip 100, entropy 1e-3 (REINFORCE for discrete actions), the slow critic
    copied every 100 updates. A component of the Dreamer loop sets (the loop is not built yet)."""
    return HParams(
        world_model=rssm_atari(),
        actor_critic_units=400,
        actor_critic_layers=4,
        actor_learning_rate=4e-5,
        critic_learning_rate=1e-4,
        clip_grad_norm=100.0,
        horizon=15,
        gamma=0.995,
        return_lambda=0.95,
        entropy_coef=1e-3,
        target_update_period=100,
    )


@register_hparams
def dreamer_actor_critic_minatar():
    """The actor-critic sized with rssm_minatar: MLPs 2 x 200 (the paper's other values)."""
    hparams = dreamer_actor_critic_atari()
    hparams.world_model = rssm_minatar()
    hparams.actor_critic_units = 200
    hparams.actor_critic_layers = 2
    return hparams


@register_hparams
def dreamer_actor_critic_tiny():
    """The actor-critic on rssm_tiny, imagining 3 steps: for tests."""
    hparams = dreamer_actor_critic_minatar()
    hparams.world_model = rssm_tiny()
    hparams.actor_critic_units = 16
    hparams.actor_critic_layers = 1
    hparams.horizon = 3
    hparams.target_update_period = 2
    return hparams
