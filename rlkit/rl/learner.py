"""The learner interface every algorithm implements, and the registry that builds one by name.

A learner holds a policy, its optimizer and its random state:

    act(observations, temperature) -> actions          # numpy; temperature 0 acts greedily
    update(batch) -> {metric name: float}              # one training step on what it collected
    checkpointables() -> {name: trackable}             # what a checkpoint holds to continue
    set_learning_rate(learning_rate)
    export(path)                                       # its own `act` as a SavedModel
    hparams                                            # its own set (`hparams.ppo` of a run)

On-policy learners also give `act_for_rollout(observations) -> (actions, log_probs, values)`,
which `rlkit.rl.on_policy.train_on_policy` stores in the rollouts it trains on. Learners are
registered by the name a set's `base_algo` holds, which is also the name of their nested set.
"""

from rlkit.errors import UserError
from rlkit.models.registry import get_model
from rlkit.registry import Registry

_LEARNERS = Registry("learner (base_algo)")
register_learner = _LEARNERS.register


def check_learner(hparams):
    """The set's `base_algo` names a registered learner whose set it holds, with a registered
    network: checked before a run writes anything."""
    _LEARNERS.get(hparams.base_algo)
    if hparams.base_algo not in hparams:
        raise UserError(f"base_algo={hparams.base_algo!r} needs the learner's values as hparams.{hparams.base_algo}: "
                        "use a set that has them")
    get_model(hparams.get(hparams.base_algo).policy_network)


def build_learner(hparams, observation_space, action_space, seed):
    """The learner `hparams.base_algo` names, built from its set `hparams.<base_algo>`, acting on
    stacks of `hparams.frame_stack_size` observations of one env's `observation_space`."""
    check_learner(hparams)
    observation_shape = (hparams.frame_stack_size,) + tuple(observation_space.shape)
    return _LEARNERS.get(hparams.base_algo)(hparams.get(hparams.base_algo), observation_shape,
                                             observation_space.dtype, action_space, seed)
