"""Model-free sets for `python -m rlkit.rl.trainer_model_free`: an env, a learner set, a budget.
PPO's and the other on-policy learners' (A2C, REINFORCE) here, DQN's and NAF's in
rlkit.hparams.rlmf_off_policy_sets.

`base_algo` names the learner (rlkit.rl.learners.learner); its values are the nested set of that name
(`hparams.ppo`), overridden with dotted names: `--hparams=ppo.learning_rate=1e-4`.
"""

from rlkit.hparams.pg_sets import a2c_atari_params, a2c_cartpole_params, a2c_gae_cartpole_params, \
    reinforce_cartpole_params
from rlkit.hparams.env_sets import (CARTPOLE_SOLVED, add_eval_hparams, add_minatar_eval_hparams, env_atari, env_cartpole,
                                    env_minatar)
from rlkit.hparams.ppo_sets import (ppo_atari_nature_params, ppo_cartpole_params, ppo_minatar_params,
                                    ppo_original_params)
from rlkit.hparams.checks import anything, expect_family, non_empty, positive, register_family, shrink
from rlkit.hparams.registry import register_hparams


def check_model_free_together(run, prefix, _):
    expect_family(run, run.base_algo, run.base_algo, prefix)  # the learner base_algo names


register_family("model_free", dict(  # the loop's own values, beside the run's (rlkit.hparams.env_sets)
    base_algo=non_empty, num_env_steps=positive, checkpoint_every_iterations=positive,
    eval_every_iterations=positive, eval_every_steps=positive, log_every_steps=positive, keep_checkpoints=positive,
    solved_return=anything,
), together=check_model_free_together, dev=lambda run, _: shrink(run, "keep_checkpoints", 2))

@register_hparams
def rlmf_original():
    """SimPLe's model-free baseline: PPO with its original values on 105x80 RGB Atari."""
    hparams = env_atari()
    hparams.add_hparam("loop", "model_free")  # the set's kind: rlkit.rl.loops.model_free runs it
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
    hparams.add_hparam("solved_return", CARTPOLE_SOLVED)
    return hparams


@register_hparams
def rlmf_minatar():
    """PPO on a MinAtar game at SimPLe's budget, 100K real agent steps: the model-free baseline of
    docs/results.md. `--hparams=game=minatar/freeway`; num_env_steps=1_000_000 for the long run."""
    hparams = env_minatar()
    hparams.add_hparam("loop", "model_free")
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
    hparams = _shrink_for_tests(rlmf_minatar())
    hparams.final_eval_batch_size = hparams.eval_batch_size
    return hparams


def _on_policy(hparams, learner_name, learner, num_envs, num_env_steps, eval_every_iterations):
    """An env set turned into an on-policy model-free set: the learner's set as
    `hparams.<learner_name>`, the budget, checkpoints and evaluations every
    `eval_every_iterations` rollouts."""
    hparams.add_hparam("loop", "model_free")
    hparams.add_hparam("base_algo", learner_name)
    hparams.add_hparam(learner_name, learner)
    hparams.add_hparam("num_envs", num_envs)
    hparams.add_hparam("num_env_steps", num_env_steps)
    hparams.add_hparam("checkpoint_every_iterations", eval_every_iterations)
    hparams.add_hparam("keep_checkpoints", 3)
    hparams.add_hparam("eval_every_iterations", eval_every_iterations)
    return hparams


def _cartpole_eval(hparams):
    """Greedy and sampled evaluation over 8 whole CartPole episodes; solved at 475."""
    hparams.add_hparam("solved_return", CARTPOLE_SOLVED)
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_max_num_noops = 0  # no-ops are an Atari setting
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 500
    return hparams


@register_hparams
def rlmf_reinforce_cartpole():
    """REINFORCE with a value baseline on CartPole-v1: 8 envs, 100K agent steps, evaluated every
    4,800."""
    hparams = _on_policy(env_cartpole(), "reinforce", reinforce_cartpole_params(), num_envs=8,
                         num_env_steps=100_000, eval_every_iterations=60)
    return _cartpole_eval(hparams)


@register_hparams
def rlmf_a2c_cartpole():
    """A2C with n-step returns on CartPole-v1: 8 envs of 5-step rollouts, 100K agent steps,
    evaluated every 5,000."""
    hparams = _on_policy(env_cartpole(), "a2c", a2c_cartpole_params(), num_envs=8, num_env_steps=100_000,
                         eval_every_iterations=125)
    return _cartpole_eval(hparams)


@register_hparams
def rlmf_a2c_gae_cartpole():
    """A2C with GAE (lambda 0.95) on CartPole-v1: 8 envs of 16-step rollouts, 100K agent steps,
    evaluated every 5,120."""
    hparams = _on_policy(env_cartpole(), "a2c", a2c_gae_cartpole_params(), num_envs=8, num_env_steps=100_000,
                         eval_every_iterations=40)
    return _cartpole_eval(hparams)


@register_hparams
def rlmf_a2c_atari():
    """A2C on Atari with OpenAI baselines' published values (a2c_atari_params): 84x84 grayscale,
    4 frames, up to 30 no-ops, 16 envs of 5-step rollouts, 10M agent steps (40M frames), evaluated every 500K."""
    hparams = env_atari()
    hparams.frame_height = hparams.frame_width = 84
    hparams.grayscale = True
    hparams.max_num_noops = 30  # baselines' NoopResetEnv
    hparams.episodic_life = True
    _on_policy(hparams, "a2c", a2c_atari_params(), num_envs=16, num_env_steps=10_000_000,
               eval_every_iterations=6_250)
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 27000  # 108,000 frames: a whole episode
    return hparams


@register_hparams
def rlmf_a2c_minatar():
    """A2C on a MinAtar game with MinAtar's network, at docs/results.md's budget and evaluation
    (102,400 agent steps): `--hparams=game=minatar/breakout`."""
    learner = a2c_atari_params()
    learner.policy_network = "minatar_cnn"
    hparams = _on_policy(env_minatar(), "a2c", learner, num_envs=16, num_env_steps=102_400,
                         eval_every_iterations=256)
    add_minatar_eval_hparams(hparams)
    return hparams


@register_hparams
def rlmf_reinforce_tiny():
    """A few REINFORCE rollouts on CartPole-v1: for tests."""
    hparams = rlmf_reinforce_cartpole()
    hparams.num_envs = 2
    hparams.reinforce.rollout_length = 20
    hparams.num_env_steps = 6 * 2 * 20
    hparams.checkpoint_every_iterations = 2
    hparams.eval_every_iterations = 3
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 20
    return hparams


@register_hparams
def rlmf_a2c_tiny():
    """A few A2C rollouts on Pong with A2C's Atari values: for tests."""
    hparams = rlmf_a2c_atari()
    hparams.num_envs = 2
    hparams.num_env_steps = 8 * 2 * 5
    hparams.checkpoint_every_iterations = 2
    hparams.eval_every_iterations = 4
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 20
    return hparams
