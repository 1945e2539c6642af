"""DreamerV2: its world model (rlkit.models.rssm), its actor-critic (rlkit.rl.learners.dreamer)
and its loop (rlkit.rl.loops.dreamer) at the published values, sized for MinAtar, and tiny.

    python -m rlkit.rl.trainer_model_based --hparams_set=dreamer_v2_minatar --hparams=game=minatar/breakout --output_dir=DIR

Provenance (../shared/reference/dreamer.md): Hafner et al. 2021, "Mastering Atari with Discrete
World Models", Table D.1 (Atari), and the released code (danijar/dreamerv2 configs.yaml).
DreamerV3's sets, these with its changes: rlkit.hparams.dreamer_v3_sets.
"""

from rlkit.hparams.env_sets import (
    add_minatar_eval_hparams,
    env_atari_sticky,
    env_minatar,
)
from rlkit.hparams.checks import (anything, discount, expect_family, fail, non_empty_list_of, non_negative, one_of,
                                  list_of, positive, probability, register_family, shrink, DEV_STEPS)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams
from rlkit.hparams.world_model_sets import WORLD_MODEL_RULES, check_window_shares


def check_rssm_together(world_model, prefix, run):
    check_window_shares(world_model, prefix)
    if world_model.mixed_precision:  # the estimator's float16 is for SimPLe's models
        fail(prefix, "mixed_precision", True, "DreamerV2's world model (rssm) computes in float32 only "
             "(docs/dreamer.md, 'Differences from the paper'): drop the override")


def check_dreamer_loop_together(run, prefix, _):
    expect_family(run, "world_model", "rssm", prefix, "rssm_minatar")
    expect_family(run, "actor_critic", "dreamer_actor_critic", prefix, "dreamer_actor_critic_minatar")
    if run.prefill_steps >= run.num_env_steps and not run.offline_data_dir:
        fail(prefix, "prefill_steps", run.prefill_steps, f"must be below num_env_steps ({run.num_env_steps})")


def shrink_dreamer_loop_for_dev(run, _):
    """DEV_STEPS real steps after 100 random ones, a gradient step every 4 env steps at most."""
    run.num_env_steps = min(run.num_env_steps, DEV_STEPS)
    for name, value in (("prefill_steps", 100), ("shard_steps", 50), ("eval_every_steps", 200),
                        ("log_every_steps", 50), ("log_every_updates", 10), ("offline_updates", 20),
                        ("reward_accuracy_rollouts", 4)):
        shrink(run, name, value)
    world_model = run.world_model  # its batch already shrunk
    replayed_per_update = world_model.batch_size * (world_model.num_context_frames + world_model.num_target_frames)
    run.train_ratio = min(run.train_ratio, max(1, replayed_per_update // 4))


register_family("rssm", dict(
    WORLD_MODEL_RULES,
    deter_size=positive, stoch_groups=positive, stoch_classes=positive, unimix=probability, encoder_depth=positive,
    encoder_kernels=non_empty_list_of(positive), encoder_strides=non_empty_list_of(positive),
    decoder_kernels=list_of(positive), head_units=positive, head_layers=non_negative, kl_scale=non_negative,
    kl_balance=probability, free_nats=non_negative, free_nats_per_step=anything, continue_scale=non_negative,
    reward_head=one_of("gaussian", "twohot"),
), together=check_rssm_together, dev=lambda world_model, _: shrink(world_model, "batch_size", 2))
register_family("dreamer_actor_critic", dict(
    actor_critic_units=positive, actor_critic_layers=non_negative, actor_learning_rate=positive,
    critic_learning_rate=positive, clip_grad_norm=positive, entropy_coef=non_negative, gamma=discount,
    horizon=positive, return_lambda=discount, imagine_starts=non_negative,  # 0: every posterior state of the batch
    target_update_period=positive, critic_head=one_of("mse", "twohot"), slow_critic_rate=probability,
    slow_critic_regularizer=non_negative, return_normalization=one_of("none", "percentile"),
    actor_unimix=probability, returns_critic=one_of("slow", "online"), imagined_continue=one_of("mean", "mode"),
), dev=lambda actor_critic, _: shrink(actor_critic, "horizon", 5))
register_family("dreamer", dict(  # the loop's own values, beside the run's (rlkit.hparams.env_sets)
    num_env_steps=positive, prefill_steps=non_negative, train_ratio=positive, rewarded_sequence_share=probability,
    reward_transform=one_of("env", "tanh", "raw"), compute_dtype=one_of("float32", "bfloat16", "auto"),
    replay_capacity=positive, eval_every_steps=positive, log_every_steps=positive, log_every_updates=positive,
    offline_data_dir=anything, offline_updates=positive, offline_checkpoint_updates=positive,
    simulated_temperature=non_negative, simulated_reward=one_of("likeliest", "expected"),
    reward_accuracy_lengths=non_empty_list_of(positive), reward_accuracy_rollouts=positive,
), together=check_dreamer_loop_together, dev=shrink_dreamer_loop_for_dev)


@register_hparams
def rssm_atari():
    """DreamerV2's Atari world model (paper, Table D.1): GRU 600, 32x32 latents, 64x64 frames,
    encoder depth 48 (4 convs k4 s2), decoder transposed convs k5,5,6,6, heads 4x400, KL scale
    0.1 balanced 0.8 without free nats, continue loss x5, Adam 2e-4 (eps 1e-5), clip 100.
    Batch: the paper's 50 sequences of 50; the released code's 16 x 50 fits a smaller GPU
    (batch_size=16 gives it)."""
    return HParams(
        family="rssm",
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
        # Floor each step's KL at free_nats (DreamerV3's free bits), not the batch's mean (DreamerV2's).
        free_nats_per_step=False,
        # The reward head: "gaussian" (DreamerV2's, unit variance) or "twohot" (DreamerV3's
        # categorical over symlog bins; rlkit.models.twohot).
        reward_head="gaussian",
        # DreamerV3's mix of 1% uniform into every categorical; DreamerV2 has none
        unimix=0.0,
        continue_scale=5.0,
        learning_rate=2e-4,
        clip_grad_norm=100.0,
        batch_size=50,
        # Windows at episodes' starts too (their context padded), so short episodes and their ends
        # are in the data.
        predict_episode_ends=True,
        # trainer_world_model's windows only (as SimPLe's models'); the Dreamer loop draws its
        # sequences with the loop's rewarded_sequence_share.
        rewarded_window_share=0.0,
        ending_window_share=0.0,
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
    windows of 16 steps (MinAtar's episodes at the start of training are short), batch 16, and
    DreamerV2's continuous-control KL (scale 1.0, 1 free nat; below)."""
    return _with_minatar_sizes(rssm_atari())


def _with_minatar_sizes(hparams):
    """rssm_minatar's changes to rssm_atari (rssm_tiny and rssm_vector start from them too)."""
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
    # DreamerV2's continuous-control KL (scale 1.0, 1 free nat), not its Atari one (0.1, none):
    # trained alone on 100K stored Breakout steps (docs/results_journal.md, "DreamerV2 on MinAtar"), at
    # 0.1 the posterior collapsed onto the prior (KL 0.05 nats at 2,000 gradient steps) and never
    # carried the ball (its channel's loss 3.1 nats, frame loss 9.9); at 1.0 the prior learns 10x
    # faster and the model tracked the ball by 1,300-1,700 steps (2 seeds; frame loss 2.2-3.5).
    hparams.kl_scale = 1.0
    hparams.free_nats = 1.0
    return hparams


@register_hparams
def rssm_tiny():
    """A few steps of a small RSSM (rssm_minatar's design): for tests."""
    hparams = _with_minatar_sizes(rssm_atari())
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
def rssm_vector():
    """DreamerV2's world model for a gymnasium env's observation vectors (its continuous-control
    values: KL scale 1.0 with 1 free nat, as on DMC, which rssm_minatar has too): MLP encoder and decoder of 200, GRU 200,
    32x32 latents, heads 2 x 200, sequences of 16 at batch 16: rssm_minatar's values."""
    return _with_minatar_sizes(rssm_atari())


@register_hparams
def dreamer_actor_critic_atari():
    """DreamerV2's actor-critic in imagination on Atari (paper, Table D.1): horizon 15, gamma 0.995 (the table; 0.999 in the main text and the released
    code), lambda 0.95, actor and critic MLPs 4 x 400, Adam 4e-5 (actor) and 1e-4 (critic) with
    epsilon 1e-5 and clip 100, entropy 1e-3 (REINFORCE for discrete actions), the slow critic
    copied every 100 updates. A component of the Dreamer loop sets."""
    return HParams(
        family="dreamer_actor_critic",
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
        # DreamerV3's changes (rlkit.rl.learners.dreamer), all off here: the critic's head, "mse"
        # or "twohot"; the slow critic an EMA at this rate each update (0: a copy every
        # target_update_period) and the critic pulled toward it with this weight; advantages
        # divided by the returns' percentile range ("percentile") or not ("none"); the actor's
        # action probabilities mixed with this share of uniform (discrete actions); the critic the
        # returns bootstrap from and the advantages subtract, the slow one ("slow") or the one
        # being trained ("online"); an imagined step's continuation, the continue head's
        # probability ("mean") or its mode, 0 or 1 ("mode").
        critic_head="mse",
        slow_critic_rate=0.0,
        slow_critic_regularizer=0.0,
        return_normalization="none",
        actor_unimix=0.0,
        returns_critic="slow",
        imagined_continue="mean",
        # Posterior states of a batch that imagination starts from, drawn uniformly: 0 for all of
        # them (DreamerV2); rlkit's CPU variants take fewer, since imagination costs the most.
        imagine_starts=0,
    )


@register_hparams
def dreamer_actor_critic_minatar():
    """The actor-critic sized with rssm_minatar: MLPs 2 x 200 (the paper's other values)."""
    hparams = dreamer_actor_critic_atari()
    hparams.actor_critic_units = 200
    hparams.actor_critic_layers = 2
    return hparams


@register_hparams
def dreamer_actor_critic_tiny():
    """The actor-critic on rssm_tiny, imagining 3 steps: for tests."""
    hparams = dreamer_actor_critic_atari()
    hparams.actor_critic_units = 16
    hparams.actor_critic_layers = 1
    hparams.horizon = 3
    hparams.target_update_period = 2
    hparams.imagine_starts = 8  # of rssm_tiny's 4 x 5 posterior states
    return hparams


@register_hparams
def dreamer_actor_critic_continuous():
    """The actor-critic for continuous actions (DreamerV2's continuous-control values): the
    actor trained by backpropagating the lambda-returns through the dynamics (rho 0), entropy
    1e-4, Adam 8e-5 for both, gamma 0.99, MLPs 2 x 200."""
    hparams = dreamer_actor_critic_atari()
    hparams.actor_critic_units = 200
    hparams.actor_critic_layers = 2
    hparams.entropy_coef = 1e-4
    hparams.actor_learning_rate = 8e-5
    hparams.critic_learning_rate = 8e-5
    hparams.gamma = 0.99
    return hparams


def _dreamer_loop(env, world_model, actor_critic):
    """A Dreamer loop set: the env's values, the world model and the actor-critic, and the loop's."""
    hparams = env
    hparams.frame_stack_size = 1  # the recurrent state replaces frame stacks
    for name, value in dict(
        loop="dreamer",
        world_model=world_model,
        actor_critic=actor_critic,
        num_env_steps=100_000,   # real agent steps
        num_envs=1,
        prefill_steps=50_000,    # uniformly random steps before learning starts
        # Replayed steps per env step (DreamerV3's definition): a gradient step every
        # batch_size x sequence length / train_ratio env steps.
        train_ratio=625,
        # Not DreamerV2's: the share of each batch's sequences drawn to hold a rewarded step
        # (FrameStore.sequences), for games whose rewards are too rare for the reward head.
        rewarded_sequence_share=0.0,
        # What the reward head learns: "env", the env's training rewards (Atari's and MinAtar's
        # clipped to their sign, other envs' as they are); "tanh", tanh of the game's rewards
        # (DreamerV2's Atari target, its configs' clip_rewards: tanh); "raw", the game's own
        # (DreamerV3's clip_reward: False, for its two-hot reward head over symlog bins).
        reward_transform="env",
        # What the networks' matmuls and convolutions compute in: "float32"; "bfloat16" (float32
        # variables, states and losses), for CPUs with native bfloat16 (AMX, AVX512-BF16), where
        # it is several times faster on large matmuls (docs/benchmarks.md); "auto", bfloat16
        # where the CPU has it natively and float32 elsewhere.
        compute_dtype="float32",
        replay_capacity=2_000_000,
        shard_steps=1000,        # steps per env in a replay shard; a checkpoint with each
        eval_every_steps=20_480,
        log_every_steps=1000,
        log_every_updates=100,
        # Offline: learn from another run's data/ (or collect's output) alone, then evaluate.
        offline_data_dir="",
        offline_updates=10_000,
        offline_checkpoint_updates=500,
        # How the evaluator and the player probe the world model (as for SimPLe's: rlmb_base).
        simulated_temperature=1.0,
        simulated_reward="likeliest",
        reward_accuracy_lengths=[12, 50],
        reward_accuracy_rollouts=128,
    ).items():
        hparams.add_hparam(name, value)
    return add_minatar_eval_hparams(hparams) if hparams.game.startswith("minatar/") else hparams


@register_hparams
def dreamer_v2_atari():
    """DreamerV2 on Atari as the paper ran it (Table D.1; ../shared/reference/dreamer.md): 64x64
    grayscale frames, action repeat 4, sticky actions (0.25), no frame stack; prefill 50K random
    steps; a gradient step every 4 agent steps on batch 50 x 50 (train_ratio 625); replay 2M
    steps; the world model rssm_atari and the actor-critic dreamer_actor_critic_atari.
    Where the released code differs: batch 16 x 50 and a gradient step every 16 agent steps
    (`--hparams=world_model.batch_size=16,train_ratio=50`), for a smaller GPU; the paper's values
    are used because they are the published ones. The reward head learns tanh of the game's
    rewards. Evaluation as DreamerV2 reports it: whole episodes (up to the 108,000-frame cap,
    27,000 agent steps) with sticky actions and no no-ops, greedy (its policy's mode) and sampled."""
    from rlkit.hparams.env_sets import add_eval_hparams

    env = env_atari_sticky()
    env.frame_height, env.frame_width, env.grayscale = 64, 64, True
    env.max_num_noops = 0
    hparams = _dreamer_loop(env, rssm_atari(), dreamer_actor_critic_atari())
    hparams.num_env_steps = 50_000_000  # the paper's 200M frames
    hparams.eval_every_steps = 250_000
    hparams.reward_transform = "tanh"
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_max_num_noops = 0
    hparams.eval_step_limit = hparams.max_episode_frames // hparams.frame_skip
    return hparams


@register_hparams
def dreamer_v2_minatar():
    """DreamerV2 on a MinAtar game at 100K real steps, sized for a 2-core CPU: rssm_minatar and
    dreamer_actor_critic_minatar (GRU 200, 32x32 latents, sequences of 16 at batch 16), a prefill
    of 5K random steps, the evaluation of docs/results.md. `--hparams=game=minatar/space_invaders`.

    Measured on Breakout (docs/results_journal.md, "DreamerV2 on MinAtar"), where this set differs from
    DreamerV2's values (there are no official MinAtar ones):
    - entropy bonus 0.01, not 1e-3: at 1e-3 the actor collapsed onto one action by 41K steps,
      chasing returns only the model gave; at 0.01 it did not;
    - imagination from 64 of a batch's 256 posterior states, not all: imagination cost half or
      more of a gradient step, and 64 starts make a step 1.9x faster (scripts/bench_dreamer.py);
    - the world model's KL is DreamerV2's continuous-control one (rssm_minatar): at the Atari KL
      its posterior collapsed and the world model learned Breakout's ball only after 10K-17K
      gradient steps; with it, within about 1,500;
    - a gradient step every 8 env steps (train_ratio 32: about 12K gradient steps in 100K, where
      the community MinAtar runs took one every 10 on batches 10x larger), which finishes a run
      in about an hour here. Train ratio 48 (18K gradient steps, 103 minutes) was chosen while
      the ball took 10K of them; with the ball learned by 1,500, Breakout seed 0 reached 5.76 at
      48 and 5.78 at 32 (seed 1 at 32: 5.29).
    """
    hparams = _dreamer_loop(env_minatar(), rssm_minatar(), dreamer_actor_critic_minatar())
    hparams.prefill_steps = 5000
    hparams.train_ratio = 32
    hparams.replay_capacity = 1_000_000
    hparams.actor_critic.entropy_coef = 0.01
    hparams.actor_critic.imagine_starts = 64
    # Measured (docs/benchmarks.md, issue 64): 102.5 against float32's 116.7 ms a gradient step
    # on this project's CPU (AMX; scripts/bench_fast_loops.py), and Breakout seed 0 in bfloat16
    # ended at 4.87, inside the float32 seeds' 4.73-5.78.
    hparams.compute_dtype = "auto"
    return hparams


@register_hparams
def dreamer_v2_tiny():
    """A few hundred MinAtar steps of the Dreamer loop: for tests."""
    hparams = _dreamer_loop(env_minatar(), rssm_tiny(), dreamer_actor_critic_tiny())
    hparams.num_env_steps = 120
    hparams.num_envs = 2
    hparams.prefill_steps = 40
    hparams.train_ratio = 10  # batches of 4 x 5 steps: a gradient step every 2 env steps
    hparams.shard_steps = 20
    hparams.eval_every_steps = 60
    hparams.log_every_steps = 40
    hparams.log_every_updates = 5
    hparams.offline_updates = 6
    hparams.offline_checkpoint_updates = 3
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_batch_size = hparams.final_eval_batch_size = 2
    hparams.eval_step_limit = 30
    hparams.reward_accuracy_lengths = [2, 4]
    hparams.reward_accuracy_rollouts = 4
    return hparams


@register_hparams
def dreamer_v2_pendulum():
    """DreamerV2 with continuous actions on Pendulum-v1 (observation vectors, a torque in
    [-2, 2]): rssm_vector and dreamer_actor_critic_continuous (the actor learns through the world
    model's dynamics), 50K env steps after a 5K random prefill, a gradient step every 8 env
    steps, evaluated on 8 episodes every 10K steps."""
    from rlkit.hparams.env_sets import add_eval_hparams, env_cartpole

    env = env_cartpole()
    env.game = "Pendulum-v1"
    hparams = _dreamer_loop(env, rssm_vector(), dreamer_actor_critic_continuous())
    hparams.num_env_steps = 50_000
    hparams.prefill_steps = 5000
    hparams.train_ratio = 32
    hparams.eval_every_steps = 10_000
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_max_num_noops = 0
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 200
    return hparams


@register_hparams
def dreamer_v2_pendulum_tiny():
    """A few hundred Pendulum steps of continuous-action Dreamer: for tests."""
    hparams = dreamer_v2_pendulum()
    tiny = dreamer_v2_tiny()
    for name in ("num_env_steps", "num_envs", "prefill_steps", "train_ratio", "shard_steps", "eval_every_steps",
                 "log_every_steps", "log_every_updates", "offline_updates", "offline_checkpoint_updates",
                 "eval_batch_size", "eval_step_limit"):
        setattr(hparams, name, getattr(tiny, name))
    hparams.world_model = rssm_tiny()
    hparams.world_model.kl_scale, hparams.world_model.free_nats = 1.0, 1.0
    hparams.actor_critic.actor_critic_units = 16
    hparams.actor_critic.actor_critic_layers = 1
    hparams.actor_critic.horizon = 3
    return hparams
