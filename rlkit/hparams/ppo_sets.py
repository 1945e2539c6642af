"""PPO hparam sets: the learner's values, held by loop and model-free sets as `hparams.ppo`."""

from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams


@register_hparams
def ppo_original_params():
    """SimPLe's PPO: lr 2.5e-4, gamma .99, lambda .95, clip .1, 3 epochs over 50-step rollouts."""
    return HParams(
        policy_network="simple_policy_cnn",  # a registered model (rlkit.models.policy_networks)
        # SimPLe's set says dropout 0.1, but its policy's dropout layer ran in inference mode: inactive.
        dropout=0.0,
        mlp_hidden_sizes=[64, 64],           # used by the mlp network only
        learning_rate=2.5e-4,
        learning_rate_schedule="constant",   # or "linear": decays to 0 over the run
        gamma=0.99,
        gae_lambda=0.95,
        clip_coef=0.1,
        value_coef=1.0,
        entropy_coef=0.01,
        optimization_epochs=3,
        rollout_length=50,                   # agent steps per env between updates (SimPLe's epoch_length)
        num_minibatches=2,                   # SimPLe used minibatches of 20 of the 50 time steps
        max_gradient_norm=0.5,
    )


@register_hparams
def ppo_atari_nature_params():
    """PPO on 84x84x4 grayscale with the Nature CNN (Schulman et al. 2017 Atari settings)."""
    hparams = ppo_original_params()
    hparams.policy_network = "nature_cnn"
    hparams.clip_coef = 0.1
    hparams.value_coef = 0.25  # 0.5 x (0.5 x MSE) in baselines' terms
    hparams.optimization_epochs = 4
    hparams.rollout_length = 128
    hparams.num_minibatches = 4
    hparams.learning_rate_schedule = "linear"
    return hparams


@register_hparams
def ppo_cartpole_params():
    """PPO for CartPole-v1 with an MLP (rl-baselines3-zoo's tuned values)."""
    hparams = ppo_original_params()
    hparams.policy_network = "mlp"
    hparams.learning_rate = 1e-3
    hparams.learning_rate_schedule = "linear"
    hparams.gamma = 0.98
    hparams.gae_lambda = 0.8
    hparams.clip_coef = 0.2
    hparams.value_coef = 0.25  # rl-baselines3-zoo's vf_coef 0.5 on half the MSE
    hparams.entropy_coef = 0.0
    hparams.optimization_epochs = 20
    hparams.rollout_length = 32
    hparams.num_minibatches = 1
    return hparams


@register_hparams
def ppo_minatar_params():
    """PPO on MinAtar with its paper's network (one 3x3 conv of 16, dense 128); CleanRL's Atari
    values (4 epochs of 4 minibatches over 128-step rollouts, clip 0.1, linear decay)."""
    hparams = ppo_atari_nature_params()
    hparams.policy_network = "minatar_cnn"
    hparams.value_coef = 0.5
    return hparams
