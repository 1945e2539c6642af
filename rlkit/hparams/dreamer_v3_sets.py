"""DreamerV3 (Hafner et al. 2023, ../shared/reference/dreamerv3.md): DreamerV2's sets
(rlkit.hparams.dreamer_sets) with DreamerV3's changes, each an option of the same loop, RSSM and
actor-critic; the one set rlkit runs on every MinAtar game, its released code's Atari 100K set,
and tiny.

    python -m rlkit.rl.trainer_model_based --hparams_set=dreamer_v3_minatar --hparams=game=minatar/breakout --output_dir=DIR
"""

from rlkit.hparams.dreamer_sets import dreamer_v2_atari, dreamer_v2_minatar, dreamer_v2_pendulum, dreamer_v2_tiny
from rlkit.hparams.registry import register_hparams


def with_dreamer_v3(hparams):
    """DreamerV3's changes on a Dreamer set (Hafner et al. 2023, ../shared/reference/dreamerv3.md;
    its first release's values where releases differ), each an option of the same loop, RSSM and
    actor-critic: rewards and values as two-hot categoricals over symlog bins; the KL as dyn 0.5
    and rep 0.1 (kl_scale 0.6 at balance 5/6) with free bits of 1 nat per step; the continue
    head's loss at scale 1 (its `cont: 1.0`; DreamerV2's Atari 5); 1% uniform mixed
    into the latents and into the actor's action probabilities; rewards unclipped; the slow
    critic an EMA (0.02 an update) that regularises the critic (1.0), while the returns bootstrap
    from the critic being trained and the advantages subtract its values; an imagined step
    continues or ends as the continue head's mode says (0 or 1, not its probability); advantages
    divided by max(1, the returns' 5-95 percentile range); entropy 3e-4; discount 1 - 1/333 (its
    `horizon: 333`). Sizes, train ratio and the optimizers' rates, clips and epsilons stay the set's."""
    world_model, actor_critic = hparams.world_model, hparams.actor_critic
    hparams.reward_transform = "raw"  # the game's rewards, unclipped (symlog bins take any scale)
    world_model.reward_head = "twohot"
    world_model.kl_scale, world_model.kl_balance = 0.6, 5 / 6
    world_model.free_nats, world_model.free_nats_per_step = 1.0, True
    world_model.continue_scale = 1.0
    world_model.unimix = actor_critic.actor_unimix = 0.01
    actor_critic.critic_head = "twohot"
    actor_critic.slow_critic_rate, actor_critic.slow_critic_regularizer = 0.02, 1.0
    actor_critic.return_normalization = "percentile"
    actor_critic.returns_critic, actor_critic.imagined_continue = "online", "mode"
    actor_critic.entropy_coef = 3e-4
    actor_critic.gamma = 1 - 1 / 333
    return hparams


@register_hparams
def dreamer_v3_minatar():
    """DreamerV3 on a MinAtar game at 100K real steps, one set for every game: dreamer_v2_minatar's
    sizes and schedule (rssm_minatar's GRU 200 and 32x32 latents, sequences of 16 at batch 16, a
    gradient step every 8 env steps, imagination from 64 states) with DreamerV3's changes
    (with_dreamer_v3) and three values chosen on tuning seeds 100 and 101 only (docs/dreamer.md,
    "DreamerV3", where each run that chose them is listed):
    - world-model learning rate 1e-3, not 3e-4: at 3e-4 the reward head had Asterix's gold only
      after 3,900 gradient steps and the run ended at random's level (0.42); at 1e-3, 0.76, and
      Breakout went from 1.48 to 3.80;
    - entropy 1e-3 (DreamerV2's Atari value), not DreamerV3's 3e-4: at 3e-4 Breakout's actor
      settled on one action within 2,500 gradient steps; at 1e-3 it kept 0.12 nats and Breakout
      ended at 5.09 against 3.80;
    - half of each batch's sequences drawn to hold a rewarded step (rlkit's
      rewarded_sequence_share 0.5, not DreamerV3's): without it Freeway's replay held too few
      crossings for the reward head to learn any, and the actor stayed uniform."""
    hparams = with_dreamer_v3(dreamer_v2_minatar())
    hparams.world_model.learning_rate = 1e-3
    hparams.actor_critic.entropy_coef = 1e-3
    hparams.rewarded_sequence_share = 0.5
    return hparams


@register_hparams
def dreamer_v3_atari():
    """DreamerV3 on Atari 100K as its released code runs it (danijar/dreamerv3 configs.yaml at
    05699cd: `atari100k` and the default model size `size200m`; rlkit.hparams.published): 64x64
    RGB, action repeat 4, no sticky actions, up to 30 no-ops, the game's needed actions, one env,
    100K agent steps (400K frames), train ratio 256 on batches of 16 sequences of 64 steps, the
    200M model's sizes (GRU 8192, hidden 1024, 32 x 64 latents, encoder depth 64, MLPs of 1024;
    heads of one layer, actor and critic of three), whole games evaluated. Where rlkit's code
    has no counterpart it keeps its own, stated in the published record: a dense GRU (not 8
    blocks), LayerNorm and ELU (RMSNorm and SiLU), Adam at the first release's rates and clips
    (not LaProp with adaptive clipping), the first release's KL (dyn 0.5; with_dreamer_v3). For
    accelerators: on a 2-core CPU one gradient step of this size takes minutes."""
    hparams = with_dreamer_v3(dreamer_v2_atari())
    hparams.grayscale = False
    hparams.sticky_actions = False
    hparams.max_num_noops = hparams.eval_max_num_noops = 30
    hparams.num_env_steps = 100_000
    hparams.eval_every_steps = 25_000
    # The released code trains as soon as its replay holds a batch: 16 x 64 steps.
    hparams.prefill_steps = 1_024
    hparams.train_ratio = 256
    world_model = hparams.world_model
    world_model.num_target_frames = 60  # sequences of 64 steps: 4 context and 60 targets
    world_model.batch_size = 16
    world_model.deter_size, world_model.hidden_size = 8192, 1024
    world_model.stoch_groups, world_model.stoch_classes = 32, 64
    world_model.encoder_depth = 64
    world_model.head_units, world_model.head_layers = 1024, 1
    world_model.learning_rate, world_model.clip_grad_norm = 1e-4, 1000.0
    actor_critic = hparams.actor_critic
    actor_critic.actor_critic_units, actor_critic.actor_critic_layers = 1024, 3
    actor_critic.actor_learning_rate = actor_critic.critic_learning_rate = 3e-5
    actor_critic.clip_grad_norm = 100.0
    return hparams


@register_hparams
def dreamer_v3_tiny():
    """A few hundred MinAtar steps of DreamerV3: for tests."""
    return with_dreamer_v3(dreamer_v2_tiny())


@register_hparams
def dreamer_v3_pendulum():
    """DreamerV3 with continuous actions on Pendulum-v1: dreamer_v2_pendulum with DreamerV3's changes."""
    return with_dreamer_v3(dreamer_v2_pendulum())
