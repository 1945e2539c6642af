"""Off-policy learners' sets: DQN's and NAF's values, held by model-free sets as `hparams.dqn`
or `hparams.naf`."""

from rlkit.hparams.checks import (LEARNER_SCHEDULES, POLICY_NETWORK_RULES, anything, discount, non_negative, one_of,
                                  positive, probability, register_family, shrink, DEV_STEPS)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams

# Q-learning from a replay memory (rlkit.rl.learners.q_learning), the same in DQN and NAF.
REPLAY_LEARNING_RULES = dict(
    POLICY_NETWORK_RULES,
    learning_rate=positive, learning_rate_schedule=one_of(*LEARNER_SCHEDULES), gamma=discount,
    batch_size=positive, replay_capacity=positive, learning_starts=non_negative, update_period=positive,
    target_update_period=positive, n_step=positive, prioritized=anything, priority_exponent=non_negative,
    importance_exponent_start=probability,
)
def shrink_replay_learner_for_dev(learner, run):
    """Learning, target syncs and exploration's decay within a few hundred steps, a small replay;
    a model-free dev run is DEV_STEPS steps. (A learner set the run does not train with stays.)"""
    if run.get("base_algo") != learner.family:
        return
    for name, value in (("learning_starts", 100), ("target_update_period", 100), ("epsilon_decay_steps", 200),
                        ("replay_capacity", 10_000), ("exploration_noise_decay_steps", 200)):
        shrink(learner, name, value)
    if run.get("loop") == "model_free":
        run.num_env_steps = min(run.num_env_steps, DEV_STEPS)
        for name, value in (("shard_steps", 50), ("eval_every_steps", 100), ("log_every_steps", 10)):
            shrink(run, name, value)


register_family("dqn", dict(
    REPLAY_LEARNING_RULES,
    rmsprop_decay=probability, optimizer_epsilon=positive, rmsprop_centered=anything, epsilon_start=probability,
    epsilon_final=probability, epsilon_decay_steps=non_negative, eval_epsilon=probability, double=anything,
    dueling=anything,
), dev=shrink_replay_learner_for_dev)
register_family("naf", dict(
    REPLAY_LEARNING_RULES,
    target_update_rate=probability, exploration_noise=one_of("gaussian", "ornstein_uhlenbeck"),
    exploration_noise_start=non_negative, exploration_noise_final=non_negative,
    exploration_noise_decay_steps=non_negative, ou_theta=probability, reward_scale=positive, mean_penalty=non_negative,
    curvature_floor=non_negative,
), dev=shrink_replay_learner_for_dev)


@register_hparams
def dqn_nature_params():
    """Nature DQN (Mnih et al. 2015): the Nature CNN, replay of 1M, 50K random steps first, an
    update of batch 32 every 4 agent steps, the target network synced every 10K agent steps,
    RMSProp at 2.5e-4 (squared-gradient decay 0.95, centred, as Dopamine reads the paper's
    optimizer), epsilon 1 -> 0.1 over 1M agent steps, evaluation at epsilon 0.05, the Huber loss
    (the paper's error clipping), no gradient clipping."""
    return HParams(
        family="dqn",
        policy_network="nature_cnn",      # a registered torso (rlkit.models.policy_networks)
        dropout=0.0,
        mlp_hidden_sizes=[64, 64],         # used by the mlp torso only
        learning_rate=2.5e-4,
        learning_rate_schedule="constant",  # or "linear": decays to 0 over the run
        # RMSProp, unless gin binds another optimizer (dqn/make_optimizer.optimizer = ...).
        rmsprop_decay=0.95,
        optimizer_epsilon=1e-5,
        rmsprop_centered=True,
        gamma=0.99,
        batch_size=32,
        replay_capacity=1_000_000,         # agent steps, counted in whole episodes
        learning_starts=50_000,            # agent steps of epsilon-1 acting before the first update
        update_period=4,                   # agent steps (over all envs) per update
        target_update_period=10_000,       # agent steps between target-network syncs
        epsilon_start=1.0,
        epsilon_final=0.1,
        epsilon_decay_steps=1_000_000,
        eval_epsilon=0.05,                 # the exported policy's epsilon at temperature 1
        double=False,                      # Double DQN's targets (van Hasselt et al. 2016)
        dueling=False,                     # the dueling head (Wang et al. 2016)
        n_step=1,                          # returns over n steps before the bootstrap
        prioritized=False,                 # proportional prioritized replay (Schaul et al. 2016)
        priority_exponent=0.6,             # alpha
        importance_exponent_start=0.4,     # beta, annealed to 1 over the run
    )


@register_hparams
def ddqn_params():
    """Double DQN: Nature DQN's values with Double DQN's targets."""
    hparams = dqn_nature_params()
    hparams.double = True
    return hparams


@register_hparams
def dqn_rainbowish_params():
    """Double + dueling + 3-step returns + prioritized replay (alpha 0.5, beta 0.4 -> 1), with
    Rainbow's schedule (Hessel et al. 2018): 80K steps before learning, target sync every 8K
    agent steps, epsilon to 0.01 over 250K, evaluation at 0.001. Rainbow's Adam (lr 6.25e-5,
    epsilon 1.5e-4) is a gin binding: dqn/make_optimizer.optimizer=@keras.optimizers.Adam."""
    hparams = dqn_nature_params()
    hparams.double = True
    hparams.dueling = True
    hparams.n_step = 3
    hparams.prioritized = True
    hparams.priority_exponent = 0.5
    hparams.learning_rate = 6.25e-5
    hparams.optimizer_epsilon = 1.5e-4
    hparams.learning_starts = 80_000
    hparams.target_update_period = 8_000
    hparams.epsilon_final = 0.01
    hparams.epsilon_decay_steps = 250_000
    hparams.eval_epsilon = 0.001
    return hparams


@register_hparams
def dqn_original_params():
    """The DQN of SimPLe's rlmb_dqn_base (tensor2tensor's dqn_original_params): replay 1M, 20K
    steps before learning, an update every 4, the target every 8,000, RMSProp lr 2.5e-4 decay
    0.95 epsilon 1e-5 centred, epsilon to 0.01 over 250K agent steps, evaluation at 0.001."""
    hparams = dqn_nature_params()
    hparams.learning_starts = 20_000
    hparams.target_update_period = 8_000
    hparams.epsilon_final = 0.01
    hparams.epsilon_decay_steps = 250_000
    hparams.eval_epsilon = 0.001
    return hparams


@register_hparams
def dqn_cartpole_params():
    """DQN for CartPole-v1 with a 128x128 MLP: small replay, early learning, an update every
    agent step, a target sync every 200, epsilon 1 -> 0.05 over 10K steps, the learning rate
    decayed to 0 over the run (DQN's CartPole returns swing once it has learned)."""
    hparams = dqn_nature_params()
    hparams.policy_network = "mlp"
    hparams.mlp_hidden_sizes = [128, 128]
    hparams.learning_rate = 5e-4
    hparams.learning_rate_schedule = "linear"
    hparams.batch_size = 64
    hparams.replay_capacity = 50_000
    hparams.learning_starts = 1_000
    hparams.update_period = 1
    hparams.target_update_period = 200
    hparams.epsilon_final = 0.05
    hparams.epsilon_decay_steps = 10_000
    hparams.eval_epsilon = 0.0
    return hparams


@register_hparams
def dqn_minatar_params():
    """DQN on MinAtar as its paper ran it (Young & Tian 2019): its network, replay 100K, 5K
    random steps, an update of batch 32 every step, the target every 1K, RMSProp at 2.5e-4
    (decay 0.95, epsilon 0.01, centred), epsilon 1 -> 0.1 over 100K steps."""
    hparams = dqn_nature_params()
    hparams.policy_network = "minatar_cnn"
    hparams.replay_capacity = 100_000
    hparams.learning_starts = 5_000
    hparams.update_period = 1
    hparams.target_update_period = 1_000
    hparams.optimizer_epsilon = 0.01
    hparams.epsilon_decay_steps = 100_000
    return hparams


@register_hparams
def naf_pendulum_params():
    """NAF (Gu et al. 2016) for Pendulum-v1: a 200x200 MLP, Adam at 1e-3, a batch of 128 every 2
    agent steps, each followed by a soft target update at rate 0.01, Gaussian exploration noise
    of 0.3 of the half action range falling to 0.1 over 10K steps."""
    return HParams(
        family="naf",
        policy_network="mlp",
        dropout=0.0,
        mlp_hidden_sizes=[200, 200],
        learning_rate=1e-3,
        learning_rate_schedule="constant",
        gamma=0.99,
        batch_size=128,
        replay_capacity=100_000,
        learning_starts=1_000,
        update_period=2,
        target_update_period=2,            # agent steps between target updates
        target_update_rate=0.01,           # tau: target <- tau * online + (1 - tau) * target
        exploration_noise="gaussian",      # or "ornstein_uhlenbeck": temporally correlated (as malmomo's NAF)
        exploration_noise_start=0.3,       # the noise's standard deviation, a share of the half action range
        exploration_noise_final=0.1,
        exploration_noise_decay_steps=10_000,
        ou_theta=0.15,                     # Ornstein-Uhlenbeck's pull to 0 per step (DDPG's 0.15)
        reward_scale=1.0,                  # rewards are multiplied by this before the TD targets
        mean_penalty=0.0,                  # weight of an L2 penalty on mu before its tanh (keeps it off the bounds)
        curvature_floor=0.0,               # P = L L^T + this x I: Q's least curvature in the action
        n_step=1,
        prioritized=False,
        priority_exponent=0.6,
        importance_exponent_start=0.4,
    )
