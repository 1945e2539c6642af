"""Policy-gradient learners' sets: REINFORCE's and A2C's values, held by model-free sets as
`hparams.reinforce` or `hparams.a2c` (rlkit.rl.learners.policy_gradient)."""

from rlkit.hparams.checks import (LEARNER_SCHEDULES, POLICY_NETWORK_RULES, anything, discount, non_negative, one_of,
                                  positive, probability, register_family)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.ppo_sets import shrink_on_policy_learner_for_dev
from rlkit.hparams.registry import register_hparams

# A2C's and REINFORCE's values mean the same in both (one learner, rlkit.rl.learners.policy_gradient).
POLICY_GRADIENT_RULES = dict(
    POLICY_NETWORK_RULES,
    learning_rate=positive, learning_rate_schedule=one_of(*LEARNER_SCHEDULES), gamma=discount,
    rmsprop_decay=probability, optimizer_epsilon=positive, rmsprop_centered=anything,
    train_on=one_of("steps", "episodes"), rollout_length=positive, advantage=one_of("returns", "gae"),
    gae_lambda=discount, normalize_advantages=anything, value_coef=non_negative, entropy_coef=non_negative,
    max_gradient_norm=positive,
)
register_family("a2c", POLICY_GRADIENT_RULES, dev=shrink_on_policy_learner_for_dev)
register_family("reinforce", POLICY_GRADIENT_RULES, dev=shrink_on_policy_learner_for_dev)


@register_hparams
def a2c_atari_params():
    """A2C on Atari as OpenAI baselines published it (Mnih et al. 2016's synchronous variant):
    the Nature CNN, 5-step rollouts (with 16 envs in the model-free set), n-step returns, RMSProp
    at 7e-4 decaying linearly to 0 (squared-gradient decay 0.99, epsilon 1e-5), entropy bonus
    0.01, value loss 0.5 x MSE, gradients clipped to norm 0.5."""
    return HParams(
        family="a2c",
        policy_network="nature_cnn",        # a registered model (rlkit.models.policy_networks)
        dropout=0.0,
        mlp_hidden_sizes=[64, 64],           # used by the mlp network only
        learning_rate=7e-4,
        learning_rate_schedule="linear",     # or "constant"
        # RMSProp, unless gin binds another optimizer (a2c/make_optimizer.optimizer = ...).
        rmsprop_decay=0.99,
        optimizer_epsilon=1e-5,
        rmsprop_centered=False,
        gamma=0.99,
        train_on="steps",                    # "steps": rollouts of rollout_length; "episodes": whole episodes
        rollout_length=5,                    # agent steps per env between updates
        advantage="returns",                 # "returns": R - V, R bootstrapped after the rollout; "gae"
        gae_lambda=0.95,                     # used by advantage="gae" only
        normalize_advantages=False,
        value_coef=0.5,
        entropy_coef=0.01,
        max_gradient_norm=0.5,
    )


@register_hparams
def a2c_cartpole_params():
    """A2C on CartPole-v1 with separate policy and value MLPs: rl-baselines3-zoo's values (8
    envs in the model-free set, 5-step rollouts, n-step returns, no entropy bonus) at a constant
    1e-3 rather than 7e-4, so it learns within 100K steps."""
    hparams = a2c_atari_params()
    hparams.policy_network = "two_mlps"      # separate policy and value MLPs, as SB3's
    hparams.learning_rate = 1e-3
    hparams.learning_rate_schedule = "constant"
    hparams.entropy_coef = 0.0
    return hparams


@register_hparams
def a2c_gae_cartpole_params():
    """a2c_cartpole_params with GAE (lambda 0.95) over 16-step rollouts."""
    hparams = a2c_cartpole_params()
    hparams.advantage = "gae"
    hparams.rollout_length = 16
    return hparams


@register_hparams
def reinforce_cartpole_params():
    """REINFORCE with a learned value baseline on CartPole-v1: whole episodes, Monte-Carlo
    returns, Adam at 2e-3 (SLM-Lab's REINFORCE CartPole rate) decaying linearly, advantages
    normalised per batch, a small entropy bonus."""
    return HParams(
        family="reinforce",
        policy_network="two_mlps",           # separate policy and value MLPs
        dropout=0.0,
        mlp_hidden_sizes=[64, 64],
        learning_rate=2e-3,                  # Adam, unless gin binds another optimizer
        learning_rate_schedule="linear",     # decaying to 0: late updates no longer undo the policy
        gamma=0.99,
        train_on="episodes",
        rollout_length=10,                   # agent steps per env between looks for ended episodes
        advantage="returns",                 # Monte-Carlo returns: every episode in a batch ended
        gae_lambda=0.95,
        normalize_advantages=True,
        value_coef=0.5,
        entropy_coef=0.01,
        max_gradient_norm=0.5,
    )
