"""The published systems rlkit reproduces, each one's values in one place.

For each named set that reproduces a paper, the values its paper (or the code released with it)
gave, by rlkit's dotted names, with the source, and the values rlkit runs differently on purpose
with why. The sets build these values from shared parents (SimPLe's loop, world model and PPO
are three sets, as they were in tensor2tensor); this page holds them together:

    python -m rlkit.hparams --show=rlmb_base_stochastic_discrete --published

prints each published value beside the set's, and tests/test_published.py checks that every
set here carries its values, and that it differs only where `differences` says.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Published:
    source: str
    values: dict  # dotted name -> the published value
    # dotted name -> (the published value, rlkit's, why rlkit differs), each measured or stated
    # in the README's "Fidelity"
    differences: dict = dataclasses.field(default_factory=dict)


def _nested(prefix, values):
    return {f"{prefix}.{name}": value for name, value in values.items()}


# SimPLe (Kaiser et al. 2020), from tensor2tensor: rl/trainer_model_based_params.py (the loop),
# models/video/basic_deterministic_params.py and basic_stochastic.py (the world models),
# rl/ppo's ppo_original_params (the policy); their names in comments where rlkit's differ.
SIMPLE_LOOP = dict(
    epochs=15, num_real_env_steps=96_000, initial_collection="ppo", collection="learner",
    real_num_envs=16, real_rollout_length=200,  # real_ppo_epoch_length 16 x 200, 16 agents
    longer_training_epochs=[0, 1, 4, 9, 14], longer_training_factor=3, simulated_num_envs=16,
    simulated_ppo_iterations=1000,              # ppo_epochs_num
    frame_stack_size=4, max_num_noops=8, eval_sampling_temps=[0.5, 0.0, 1.0], eval_max_num_noops=8,
    eval_batch_size=32, eval_step_limit=1000, reward_accuracy_lengths=[12, 50],
    reward_accuracy_rollouts=128,               # wm_eval_batch_size 16 x wm_eval_num_batches 8
    frame_height=105, frame_width=80, grayscale=False, frame_skip=4, sticky_actions=False)
SIMPLE_STOCHASTIC_DISCRETE = dict(
    num_context_frames=4, num_target_frames=6, hidden_size=96, num_compress_steps=6, filter_double_steps=3,
    num_hidden_layers=2, dropout=0.15, residual_dropout=0.5, input_noise=0.0, batch_size=4,
    pixel_loss_cutoff=0.03,            # video_modality_loss_cutoff
    learning_rate=0.002,               # learning_rate_constant, Adafactor
    learning_rate_schedule="linear_warmup", learning_rate_warmup_steps=2000, clip_grad_norm=1.0,
    recurrent_state_size=64, bottleneck_bits=128,
    bottleneck_noise=0.2,              # the truncated normal's stddev in tanh_discrete_bottleneck
    bit_flip_probability=0.1,          # bottleneck_noise
    latent_discriminator_filters=128,  # double_discriminator's filters1
    latent_predictor_state_size=128, latent_predictor_dropout=0.1,
    discretize_warmup_steps=40000, latent_rnn_warmup_steps=40000, latent_rnn_max_sampling=0.5,
    latent_use_max_probability=0.8,
    scheduled_sampling_steps=40000,    # scheduled_sampling_decay_steps, mode prob_inverse_lin
    scheduled_sampling_max_prob=1.0,
    train_steps=15000,                 # model_train_steps, in every set
    predict_episode_ends=False)        # rlkit's addition, off as in the original
SIMPLE_DETERMINISTIC_PIXEL_NOISE = dict(  # next_frame_pixel_noise, rlmb_base's world model
    num_context_frames=4, num_target_frames=1, hidden_size=64, num_compress_steps=6, filter_double_steps=2,
    num_hidden_layers=2, dropout=0.1, residual_dropout=0.5, input_noise=0.05, batch_size=4,
    pixel_loss_cutoff=0.01, learning_rate=1.5, learning_rate_schedule="linear_warmup_rsqrt_decay",
    learning_rate_warmup_steps=8000, clip_grad_norm=1.0, train_steps=15000, predict_episode_ends=False)
SIMPLE_PPO = dict(
    learning_rate=1e-4, gamma=0.99, gae_lambda=0.95, clip_coef=0.1, value_coef=1.0, entropy_coef=0.01,
    optimization_epochs=3, rollout_length=50,    # epoch_length
    minibatch_time_steps=20,                     # optimization_batch_size, time steps of every env
    advantage_normalization="rollout",           # define_ppo_epoch: moments over [time, env]
    max_gradient_norm=0.5,                       # clip_grad_norm
    adam_beta1=0.85, adam_beta2=0.997, adam_epsilon=1e-6,  # basic_params1's optimizer_adam_*
    policy_network="simple_policy_cnn")
SIMPLE_SOURCE = ("SimPLe (Kaiser et al. 2020, 'Model-Based Reinforcement Learning for Atari'); tensor2tensor "
                 "rl/trainer_model_based_params.py, models/video/basic_*_params.py, basic_stochastic.py")
SIMPLE_DIFFERENCES = {
    "ppo.dropout": (0.1, 0.0, "dropout_ppo sat in a layer that ran in inference mode: inactive there too"),
    "world_model.single_frame": (True, False, "4 stacked frames and a conv-GRU: as accurate on held-out Pong, "
                                              "1.6x faster to train (docs/simple.md, deliberate differences)"),
}

NATURE_DQN = Published(  # Double DQN's too (below)
    "Nature DQN (Mnih et al. 2015), Extended Data Table 1 and Methods; DeepMind's Lua code for what the "
    "table leaves open",
    dict(frame_height=84, frame_width=84, grayscale=True, frame_skip=4, frame_stack_size=4, max_num_noops=30,
         episodic_life=True,  # a lost life ends a training episode
         eval_max_num_noops=30, eval_step_limit=4500,  # 5 minutes of play: 18,000 frames
         **_nested("dqn", dict(
             policy_network="nature_cnn", batch_size=32, replay_capacity=1_000_000, gamma=0.99,
             # "10,000 parameter updates" in the table; the Lua code counts agent steps
             target_update_period=10_000,
             update_period=4, learning_rate=2.5e-4, rmsprop_decay=0.95, rmsprop_centered=True,
             epsilon_start=1.0, epsilon_final=0.1, epsilon_decay_steps=1_000_000, learning_starts=50_000,
             eval_epsilon=0.05, double=False, dueling=False, n_step=1, prioritized=False))),
    {"dqn.optimizer_epsilon": (0.01, 1e-5, "the paper's 'min squared gradient' is its own RMSProp's; Keras's "
                                           "centred RMSProp takes Dopamine's reading of it, 1e-5")})

PUBLISHED = {
    "rlmb_base_stochastic_discrete": Published(
        SIMPLE_SOURCE,
        dict(SIMPLE_LOOP, **_nested("world_model", SIMPLE_STOCHASTIC_DISCRETE), **_nested("ppo", SIMPLE_PPO)),
        SIMPLE_DIFFERENCES),
    "rlmb_base": Published(
        SIMPLE_SOURCE + " (rlmb_base: the deterministic model with input noise)",
        dict(SIMPLE_LOOP, **_nested("world_model", SIMPLE_DETERMINISTIC_PIXEL_NOISE), **_nested("ppo", SIMPLE_PPO)),
        SIMPLE_DIFFERENCES),
    "rlmf_original": Published(
        SIMPLE_SOURCE + " (its model-free baseline: ppo_original_params on the real env)",
        dict(frame_height=105, frame_width=80, grayscale=False, frame_skip=4, frame_stack_size=4,
             **_nested("ppo", dict(SIMPLE_PPO, learning_rate=2.5e-4))),
        {"ppo.dropout": SIMPLE_DIFFERENCES["ppo.dropout"]}),
    "rlmf_dqn_nature": NATURE_DQN,
    # Double DQN changed only the targets (its tuned variant is another set's business).
    "rlmf_ddqn": Published(
        "Double DQN (van Hasselt et al. 2016): Nature DQN's values, the targets' actions chosen by the online network",
        dict(NATURE_DQN.values, **{"dqn.double": True}), NATURE_DQN.differences),
    "rlmf_dqn_minatar": Published(
        "MinAtar's DQN (Young & Tian 2019; MinAtar examples/dqn.py)",
        dict(frame_skip=1, frame_stack_size=1,  # one 10x10xC state in, its trail channels carry motion
             sticky_actions=True,  # MinAtar's sticky_action_prob 0.1
             **_nested("dqn", dict(
                 policy_network="minatar_cnn", batch_size=32, replay_capacity=100_000, gamma=0.99,
                 target_update_period=1_000, update_period=1, learning_rate=2.5e-4, rmsprop_decay=0.95,
                 optimizer_epsilon=0.01, rmsprop_centered=True, epsilon_start=1.0, epsilon_final=0.1,
                 epsilon_decay_steps=100_000, learning_starts=5_000, double=False, dueling=False, n_step=1,
                 prioritized=False)))),
    "rlmf_a2c_atari": Published(
        "A2C (Mnih et al. 2016's synchronous variant) as OpenAI baselines published it: a2c.learn's defaults, "
        "wrap_deepmind's Atari",
        dict(frame_height=84, frame_width=84, grayscale=True, frame_skip=4, frame_stack_size=4, max_num_noops=30,
             episodic_life=True, num_envs=16,
             **_nested("a2c", dict(
                 policy_network="nature_cnn", learning_rate=7e-4, learning_rate_schedule="linear",
                 rmsprop_decay=0.99, optimizer_epsilon=1e-5, gamma=0.99, rollout_length=5, advantage="returns",
                 value_coef=0.5, entropy_coef=0.01, max_gradient_norm=0.5)))),
    "dreamer_v2_atari": Published(
        "DreamerV2 (Hafner et al. 2021), Table D.1 and Appendix; ../shared/reference/dreamer.md",
        dict(frame_height=64, frame_width=64, grayscale=True, frame_skip=4, sticky_actions=True, max_num_noops=0,
             frame_stack_size=1, max_episode_frames=108_000, prefill_steps=50_000, replay_capacity=2_000_000,
             reward_transform="tanh",
             **_nested("world_model", dict(
                 deter_size=600, stoch_groups=32, stoch_classes=32, encoder_depth=48, encoder_kernels=[4, 4, 4, 4],
                 encoder_strides=[2, 2, 2, 2], decoder_kernels=[5, 5, 6, 6], head_units=400, head_layers=4,
                 kl_scale=0.1, kl_balance=0.8, free_nats=0.0, continue_scale=5.0, learning_rate=2e-4,
                 clip_grad_norm=100.0, batch_size=50)),
             **_nested("actor_critic", dict(
                 actor_critic_units=400, actor_critic_layers=4, actor_learning_rate=4e-5, critic_learning_rate=1e-4,
                 clip_grad_norm=100.0, horizon=15, gamma=0.995, return_lambda=0.95, entropy_coef=1e-3,
                 target_update_period=100)),
             # In rlkit's terms: sequences of 50 as 4 context and 46 target steps; one gradient
             # step on 50 x 50 every 4 policy steps as 2,500 / 4 replayed steps per env step.
             train_ratio=625, **{"world_model.num_context_frames": 4, "world_model.num_target_frames": 46})),
    "dreamer_v3_atari": Published(
        "DreamerV3 (Hafner et al. 2023/2025), its released code's configs.yaml (danijar/dreamerv3 at 05699cd: "
        "atari100k, size200m); ../shared/reference/dreamerv3.md. Its GRU is block-diagonal (8 blocks), its "
        "norms RMSNorm and activations SiLU: rlkit's RSSM is a dense GRU with LayerNorm and ELU",
        dict(frame_height=64, frame_width=64, grayscale=False, frame_skip=4, sticky_actions=False, max_num_noops=30,
             frame_stack_size=1, num_envs=1, num_env_steps=100_000, train_ratio=256, reward_transform="raw",
             **_nested("world_model", dict(
                 batch_size=16, deter_size=8192, hidden_size=1024, stoch_groups=32, stoch_classes=64,
                 encoder_depth=64, head_units=1024, head_layers=1, unimix=0.01, free_nats=1.0,
                 free_nats_per_step=True, reward_head="twohot", continue_scale=1.0)),
             **_nested("actor_critic", dict(
                 actor_critic_units=1024, actor_critic_layers=3, horizon=15, return_lambda=0.95, gamma=1 - 1 / 333,
                 entropy_coef=3e-4, critic_head="twohot", slow_critic_rate=0.02, slow_critic_regularizer=1.0,
                 return_normalization="percentile", actor_unimix=0.01, returns_critic="online",
                 imagined_continue="mode")),
             # batch_length 64 in rlkit's terms: 4 context and 60 target steps
             **{"world_model.num_context_frames": 4, "world_model.num_target_frames": 60}),
        {"world_model.kl_scale": (1.1, 0.6, "the first release's dyn 0.5 and rep 0.1 (the newest: dyn 1.0), "
                                            "as every rlkit DreamerV3 set"),
         "world_model.kl_balance": (10 / 11, 5 / 6, "with kl_scale: dyn 0.5, rep 0.1"),
         "world_model.learning_rate": (4e-5, 1e-4, "Adam at the first release's rate: rlkit has no LaProp"),
         "world_model.clip_grad_norm": (0.3, 1000.0, "the first release's clip by norm: rlkit has no adaptive "
                                                     "gradient clipping (0.3 is AGC's ratio)"),
         "actor_critic.actor_learning_rate": (4e-5, 3e-5, "Adam at the first release's rate"),
         "actor_critic.critic_learning_rate": (4e-5, 3e-5, "Adam at the first release's rate"),
         "actor_critic.clip_grad_norm": (0.3, 100.0, "the first release's clip by norm (0.3 is AGC's ratio)")}),
}


def published(set_name):
    """The Published record of a set, or None where the set reproduces no paper."""
    return PUBLISHED.get(set_name)


def compare(hparams, record):
    """[(dotted name, published value, the set's value, note)] for every published value and
    every stated difference; the note is "" where they agree, the stated reason where rlkit
    differs on purpose, and "NOT AS PUBLISHED" otherwise."""
    flat = hparams.flat_values()
    rows = [(name, value, flat.get(name, "(missing)"), "" if flat.get(name) == value else "NOT AS PUBLISHED")
            for name, value in record.values.items()]
    rows += [(name, paper, flat.get(name, "(missing)"),
              f"differs on purpose: {why}" if flat.get(name) == ours else "NOT AS PUBLISHED, nor as stated")
             for name, (paper, ours, why) in record.differences.items()]
    return rows
