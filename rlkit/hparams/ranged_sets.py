"""The ranged sets rlkit ships: what `lab --mode=search --ranges=NAME` draws trial values from.

Each fits every set that has its names (`check_ranges` holds them to the set searched over).
"""

from rlkit.hparams.ranges import register_ranged_hparams


@register_ranged_hparams
def ppo_learning(rhp):
    """PPO's learning rate (log-uniform in [1e-5, 1e-3]) and entropy bonus ([0.001, 0.05])."""
    rhp.set_float("ppo.learning_rate", 1e-5, 1e-3, scale=rhp.LOG_SCALE)
    rhp.set_float("ppo.entropy_coef", 0.001, 0.05)


@register_ranged_hparams
def simple_loop(rhp):
    """A SimPLe loop's PPO learning rate and entropy bonus, and its world model's width (32, 64, 96)."""
    ppo_learning(rhp)
    rhp.set_discrete("world_model.hidden_size", [32, 64, 96])


@register_ranged_hparams
def a2c_learning(rhp):
    """A2C's learning rate (log-uniform in [1e-4, 3e-3]), entropy bonus and rollout length."""
    rhp.set_float("a2c.learning_rate", 1e-4, 3e-3, scale=rhp.LOG_SCALE)
    rhp.set_float("a2c.entropy_coef", 0.0, 0.02)
    rhp.set_discrete("a2c.rollout_length", [5, 16, 32])


@register_ranged_hparams
def dqn_learning(rhp):
    """DQN's learning rate (log-uniform in [1e-5, 1e-3]) and target-network period (in agent steps)."""
    rhp.set_float("dqn.learning_rate", 1e-5, 1e-3, scale=rhp.LOG_SCALE)
    rhp.set_discrete("dqn.target_update_period", [200, 1_000, 8_000])


@register_ranged_hparams
def dreamer_learning(rhp):
    """A Dreamer set's world-model and actor learning rates (log-uniform in [1e-4, 1e-3] and
    [1e-5, 3e-4]), the actor's entropy bonus (log-uniform in [3e-4, 3e-2]) and imagination
    horizon (10, 15)."""
    rhp.set_float("world_model.learning_rate", 1e-4, 1e-3, scale=rhp.LOG_SCALE)
    rhp.set_float("actor_critic.actor_learning_rate", 1e-5, 3e-4, scale=rhp.LOG_SCALE)
    rhp.set_float("actor_critic.entropy_coef", 3e-4, 3e-2, scale=rhp.LOG_SCALE)
    rhp.set_discrete("actor_critic.horizon", [10, 15])
