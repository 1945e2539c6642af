"""The base class of the actor-critic learners (PPO, REINFORCE, A2C): what they share around
their own loss and update (`rlkit.rl.learners.learner` describes the interface)."""

import tensorflow as tf

from rlkit.rl.learners.policy_export import export_policy


class ActorCriticLearner:
    """What the actor-critic learners (PPO, REINFORCE, A2C) share: acting through their `Policy`
    (`self.policy`) and exporting it, and their optimizer's learning rate (`self.optimizer`)."""

    off_policy = False  # trained by rlkit.rl.loops.on_policy.train_on_policy

    def set_learning_rate(self, learning_rate):
        self.optimizer.learning_rate.assign(learning_rate)

    def act(self, observation, temperature=1.0):
        """Actions [B] sampled at `temperature` (0: greedy)."""
        return self.policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()

    def act_for_rollout(self, observation):
        """Sampled actions, their log-probabilities and the values: what a rollout stores."""
        out = self.policy.act(tf.convert_to_tensor(observation), tf.constant(1.0))
        return out["action"].numpy(), out["log_prob"].numpy(), out["value"].numpy()

    def export(self, path):
        export_policy(self.policy, path)
