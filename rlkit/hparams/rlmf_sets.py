"""Model-free sets for `python -m rlkit.rl.trainer_model_free`: an env, a learner set, a budget.

`base_algo` names the learner (rlkit.rl.learners); its values are the nested set of that name
(`hparams.ppo`), overridden with dotted names: `--hparams=ppo.learning_rate=1e-4`.
"""

from rlkit.hparams.env_sets import add_eval_hparams, add_minatar_eval_hparams, env_atari, env_minatar
from rlkit.hparams.ppo_sets import (ppo_atari_nature_params, ppo_cartpole_params, ppo_minatar_params,
                                    ppo_original_params)
from rlkit.hparams.registry import register_hparams


@register_hparams
def rlmf_original():
    """SimPLe's model-free baseline: PPO with its original values on 105x80 RGB Atari."""
    hparams = env_atari()
    hparams.add_hparam("base_algo", "ppo")
    hparams.add_hparam("ppo", ppo_original_params())
    hparams.add_hparam("num_envs", 16)
    hparams.add_hparam("num_env_steps", 10_000_000)
    hparams.add_hparam("checkpoint_every_iterations", 100)
    hparams.add_hparam("keep_checkpoints", 3)
    hparams.add_hparam("eval_every_iterations", 500)
    add_eval_hparams(hparams)  # the evaluation grid of the SimPLe loop, so the numbers compare
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 27000  # 108,000 frames: a whole episode
    return hparams


@register_hparams
def rlmf_base():
    """Long PPO training on Pong with SimPLe's policy network."""
    hparams = rlmf_original()
    hparams.num_env_steps = 20_000_000
    hparams.ppo = ppo_atari_nature_params()
    hparams.ppo.policy_network = "simple_policy_cnn"
    hparams.num_envs = 8
    return hparams


@register_hparams
def rlmf_nature():
    """PPO on 84x84 grayscale Atari with the Nature CNN."""
    hparams = rlmf_base()
    hparams.ppo.policy_network = "nature_cnn"
    hparams.frame_height = 84
    hparams.frame_width = 84
    hparams.grayscale = True
    return hparams


def _shrink_for_tests(hparams):
    """4 PPO iterations of 2 envs x 16 steps, checkpointed each, evaluated on 2 short episodes."""
    hparams.num_envs = 2
    hparams.ppo.rollout_length = 16
    hparams.num_env_steps = 4 * 2 * 16
    hparams.checkpoint_every_iterations = 1
    hparams.eval_every_iterations = 2
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 20
    return hparams


@register_hparams
def rlmf_tiny():
    """A few PPO iterations on Pong: for tests and the demo."""
    return _shrink_for_tests(rlmf_original())


@register_hparams
def rlmf_cartpole():
    """PPO on CartPole-v1: reaches the 500 cap within 100K steps."""
    hparams = rlmf_original()
    hparams.game = "CartPole-v1"
    hparams.frame_stack_size = 1
    hparams.ppo = ppo_cartpole_params()
    hparams.num_envs = 8
    hparams.num_env_steps = 100_000
    hparams.checkpoint_every_iterations = 50
    hparams.eval_every_iterations = 50
    hparams.eval_max_num_noops = 0  # no-ops are an Atari setting
    hparams.eval_step_limit = 500
    return hparams


@register_hparams
def rlmf_minatar():
    """PPO on a MinAtar game at SimPLe's budget, 100K real agent steps: the model-free baseline of
    docs/results.md. `--hparams=game=minatar/freeway`; num_env_steps=1_000_000 for the long run."""
    hparams = env_minatar()
    hparams.add_hparam("base_algo", "ppo")
    hparams.add_hparam("ppo", ppo_minatar_params())
    hparams.add_hparam("num_envs", 16)
    hparams.add_hparam("num_env_steps", 102_400)  # the real steps of rlmb_minatar
    hparams.add_hparam("checkpoint_every_iterations", 10)
    hparams.add_hparam("keep_checkpoints", 3)
    hparams.add_hparam("eval_every_iterations", 10)  # every 20,480 steps, and at the end
    add_minatar_eval_hparams(hparams)
    return hparams


@register_hparams
def rlmf_minatar_tiny():
    """A few PPO iterations on MinAtar Breakout: for tests."""
    return _shrink_for_tests(rlmf_minatar())
