"""What the Q-learners (DQN, NAF) share: their target networks and their update on a replay batch."""

import tensorflow as tf

from rlkit.rl.learners.returns import n_step_targets


def target_updater(target_network, online_network, rate=1.0):
    """A compiled `update()`: target <- rate * online + (1 - rate) * target, variable by variable.
    Rate 1 copies (DQN's periodic sync), a small rate follows slowly (NAF's soft update, which
    runs every step: done eagerly, op by op, it took a third of NAF's run time)."""
    pairs = list(zip(target_network.variables, online_network.variables))
    # An unbuilt network has no variables yet: its updates would do nothing, silently.
    assert pairs and len(target_network.variables) == len(online_network.variables), "build both networks first"

    @tf.function
    def update():
        for target, online in pairs:
            target.assign(online if rate == 1.0 else rate * online + (1.0 - rate) * target)

    return update


def learn_from_replay(train_step, batch, gamma, action_dtype, loss_keys):
    """One gradient step of `train_step(observations, actions, returns, discounts,
    next_observations, weights) -> (metrics, td_errors)` on a replay batch
    (`ReplayMemory.sample`), its n-step returns computed here. Returns the metrics as floats and,
    as `td_errors`, the batch's TD errors (new priorities for prioritized replay)."""
    returns, discounts = n_step_targets(batch["rewards"], batch["dones"], gamma)
    metrics, td_errors = train_step(
        tf.constant(batch["observations"]), tf.constant(batch["actions"], action_dtype), tf.constant(returns),
        tf.constant(discounts), tf.constant(batch["next_observations"]), tf.constant(batch["weights"], tf.float32))
    metrics = {name: float(value) for name, value in metrics.items()}
    assert set(metrics) == loss_keys, set(metrics)
    return dict(metrics, td_errors=td_errors.numpy())
