"""The learner interface every algorithm implements, and the registry that builds one by name.

A learner holds a policy, its optimizer and its random state:

    act(observations, temperature) -> actions          # numpy; temperature 0 acts greedily
    update(batch) -> {metric name: float}              # one training step on what it collected
    checkpointables() -> {name: trackable}             # what a checkpoint holds to continue
    set_learning_rate(learning_rate)
    export(path)                                       # its own `act` as a SavedModel
    hparams                                            # its own set (`hparams.ppo` of a run)

    off_policy                                         # which loop trains it

On-policy learners (off_policy False) also give `act_for_rollout(observations) -> (actions,
log_probs, values)`, which `rlkit.rl.loops.on_policy.train_on_policy` stores in the rollouts it trains
on, and `policy`, the `Policy` module behind it, which the world model's env runs inside its
compiled rollouts (`SimulatedBatchEnv.compiled_rollout`); their base class is
`rlkit.rl.learners.actor_critic.ActorCriticLearner`. Off-policy learners give `explore(observations, exploration) -> actions`,
`exploration_at(agent_steps)` (an epsilon, a noise scale) and `sync_target()`, and their `update` takes replay batches and returns the batch's
`td_errors` among the metrics: `rlkit.rl.loops.off_policy.train_off_policy` drives them. Learners are
registered by the name a set's `base_algo` holds, which is also the name of their nested set,
together with the class they build, so a command can ask `learns_from_replay` before building one.
"""

import gymnasium as gym
import numpy as np

from rlkit.data_generators.make_env import frame_shape, is_image_game
from rlkit.errors import UserError
from rlkit.models.registry import get_model
from rlkit.registry import Registry

_LEARNERS = Registry("learner (base_algo)", modules=("rlkit.rl.learners.dqn", "rlkit.rl.learners.naf", "rlkit.rl.learners.policy_gradient",
                                                     "rlkit.rl.learners.ppo"))


_LEARNER_CLASSES = {}  # name -> the class its builder builds


def register_learner(learner_class, name=None):
    """Registers how a learner is built from `(hparams, observation_shape, observation_dtype,
    action_space, seed)`: with `name`, `learner_class` itself; without, as a decorator, a function
    of those arguments that builds a `learner_class`, under the function's name (REINFORCE and
    A2C: one class, two default optimizers)."""
    def register(build):
        _LEARNER_CLASSES[name or build.__name__] = learner_class
        return _LEARNERS.register(build, name)
    return register(learner_class) if name else register


def _check_names(hparams):
    _LEARNERS.get(hparams.base_algo)
    if hparams.base_algo not in hparams:
        raise UserError(f"base_algo={hparams.base_algo!r} needs the learner's values as hparams.{hparams.base_algo}: "
                        "use a set that has them")


def learns_from_replay(hparams):
    """Whether the learner `hparams.base_algo` names is off-policy, asked without building it."""
    _check_names(hparams)
    return _LEARNER_CLASSES[hparams.base_algo].off_policy


def check_learner(hparams):
    """The set's `base_algo` names a registered learner whose set it holds, with a registered
    network that fits the frames: checked by the commands before a run writes anything."""
    _check_names(hparams)
    learner_hparams = hparams.get(hparams.base_algo)
    build_network = get_model(learner_hparams.policy_network)
    if is_image_game(hparams.game):  # frames too small for the network's strides fail here, not mid-run
        observation_shape = (hparams.frame_stack_size,) + frame_shape(hparams)
        try:
            build_network(observation_shape, np.uint8, gym.spaces.Discrete(2), learner_hparams)
        except ValueError:
            height, width, _ = observation_shape[1:]
            raise UserError(f"frames of {height}x{width} are too small for policy_network="
                            f"{learner_hparams.policy_network!r}: use larger frame_height and frame_width, or "
                            "another network (minatar_cnn for MinAtar's 10x10)") from None
    else:  # a gymnasium env's observations: an image network cannot take vectors
        from rlkit.data_generators.make_env import spaces_of

        observation_space, action_space, _ = spaces_of(hparams)
        observation_shape = (hparams.frame_stack_size,) + tuple(observation_space.shape)
        try:
            build_network(observation_shape, observation_space.dtype, action_space, learner_hparams)
        except (ValueError, TypeError):
            raise UserError(f"policy_network={learner_hparams.policy_network!r} cannot take {hparams.game}'s "
                            f"observations of shape {tuple(observation_space.shape)}: use a set for such envs "
                            f"(rlmf_cartpole) or {hparams.base_algo}.policy_network=mlp") from None


def build_learner(hparams, observation_space, action_space, seed):
    """The learner `hparams.base_algo` names, built from its set `hparams.<base_algo>`, acting on
    stacks of `hparams.frame_stack_size` observations of one env's `observation_space`."""
    _check_names(hparams)
    observation_shape = (hparams.frame_stack_size,) + tuple(observation_space.shape)
    return _LEARNERS.get(hparams.base_algo)(hparams.get(hparams.base_algo), observation_shape,
                                             observation_space.dtype, action_space, seed)
