"""Model-free sets for `python -m rlkit.rl.trainer_model_free`: an env, a learner set, a budget.

`base_algo` names the learner (rlkit.rl.learners.learner); its values are the nested set of that name
(`hparams.ppo`), overridden with dotted names: `--hparams=ppo.learning_rate=1e-4`.
"""

from rlkit.hparams.dqn_sets import ddqn_params, dqn_cartpole_params, dqn_minatar_params, dqn_nature_params, \
    dqn_rainbowish_params, naf_pendulum_params
from rlkit.hparams.pg_sets import a2c_atari_params, a2c_cartpole_params, a2c_gae_cartpole_params, \
    reinforce_cartpole_params
from rlkit.hparams.env_sets import add_eval_hparams, add_minatar_eval_hparams, env_atari, env_cartpole, env_minatar
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

CARTPOLE_SOLVED = 475.0  # gymnasium's reward threshold for CartPole-v1: a run's `solved_return`


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


def _off_policy(hparams, learner_name, learner, num_envs, num_env_steps, shard_steps, eval_every_steps):
    """An env set turned into an off-policy model-free set: the learner's set as
    `hparams.<learner_name>`, the budget, the replay's shard length (agent steps per env; a
    killed run loses at most one shard of replay) and evaluation every `eval_every_steps`."""
    hparams.add_hparam("loop", "model_free")
    hparams.add_hparam("base_algo", learner_name)
    hparams.add_hparam(learner_name, learner)
    hparams.add_hparam("num_envs", num_envs)
    hparams.add_hparam("num_env_steps", num_env_steps)
    hparams.add_hparam("shard_steps", shard_steps)
    hparams.add_hparam("keep_checkpoints", 2)
    hparams.add_hparam("eval_every_steps", eval_every_steps)
    hparams.add_hparam("log_every_steps", max(1, eval_every_steps // 10))
    return hparams


@register_hparams
def rlmf_dqn_nature():
    """Nature DQN (Mnih et al. 2015) on Atari: 84x84 grayscale, 4 frames, up to 30 no-ops, one
    env, 50M frames (12.5M agent steps), evaluated at epsilon 0.05 every 250K agent steps."""
    hparams = env_atari()
    hparams.frame_height = hparams.frame_width = 84
    hparams.grayscale = True
    hparams.max_num_noops = 30
    hparams.episodic_life = True
    _off_policy(hparams, "dqn", dqn_nature_params(), num_envs=1, num_env_steps=12_500_000, shard_steps=10_000,
                eval_every_steps=250_000)
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [1.0]  # epsilon 0.05
    hparams.eval_max_num_noops = 30
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 4500  # the paper's 5 minutes of play (18,000 frames)
    return hparams


@register_hparams
def rlmf_ddqn():
    """Double DQN (van Hasselt et al. 2016) on Atari with Nature DQN's other values."""
    hparams = rlmf_dqn_nature()
    hparams.dqn = ddqn_params()
    return hparams


@register_hparams
def rlmf_dqn_rainbowish():
    """Double + dueling + 3-step + prioritized DQN on Atari, Rainbow's schedule (dqn_rainbowish_params)."""
    hparams = rlmf_dqn_nature()
    hparams.dqn = dqn_rainbowish_params()
    return hparams


@register_hparams
def rlmf_dqn_cartpole():
    """DQN on CartPole-v1: 4 envs, 15K agent steps, greedy evaluation every 2,500."""
    hparams = env_cartpole()
    _off_policy(hparams, "dqn", dqn_cartpole_params(), num_envs=4, num_env_steps=15_000, shard_steps=250,
                eval_every_steps=2_500)
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0]
    hparams.eval_max_num_noops = 0
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 500
    hparams.add_hparam("solved_return", CARTPOLE_SOLVED)
    return hparams


@register_hparams
def rlmf_dqn_minatar():
    """DQN on a MinAtar game as MinAtar's paper ran it (dqn_minatar_params), at docs/results.md's
    budget and evaluation: `--hparams=game=minatar/breakout,num_env_steps=5000000` for the paper's run."""
    hparams = env_minatar()
    hparams.frame_stack_size = 1  # the paper's one 10x10xC state: its trail channels carry the motion
    _off_policy(hparams, "dqn", dqn_minatar_params(), num_envs=1, num_env_steps=102_400, shard_steps=5_000,
                eval_every_steps=20_480)
    add_minatar_eval_hparams(hparams)
    return hparams


@register_hparams
def rlmf_dqn_minatar_data_efficient():
    """DQN for MinAtar at 100K steps, the 100K table's value-based column: rlmf_dqn_minatar with
    Double DQN, dueling heads, 3-step returns, epsilon 1 -> 0.01 over 20K steps and learning from
    step 1,600 (data-efficient Rainbow's start, van Hasselt et al. 2019). Chosen over the paper's
    DQN and over this with prioritized replay on tuning seeds 100 and 101 (docs/off_policy.md)."""
    hparams = rlmf_dqn_minatar()
    hparams.frame_stack_size = 4  # as tuned, and as its reported runs ran (rlkit's MinAtar sets' stack)
    dqn = hparams.dqn
    dqn.double, dqn.dueling, dqn.n_step = True, True, 3
    dqn.epsilon_final, dqn.epsilon_decay_steps, dqn.learning_starts = 0.01, 20_000, 1_600
    return hparams


@register_hparams
def rlmf_dqn_tiny():
    """A few hundred DQN steps on Pong with double, dueling, 3-step and prioritized replay: for tests."""
    hparams = rlmf_dqn_rainbowish()
    hparams.num_envs = 2
    hparams.num_env_steps = 120
    hparams.shard_steps = 10
    hparams.eval_every_steps = 60
    hparams.log_every_steps = 20
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 20
    hparams.dqn.learning_starts = 40
    hparams.dqn.batch_size = 4
    hparams.dqn.target_update_period = 40
    hparams.dqn.epsilon_decay_steps = 100
    return hparams


@register_hparams
def rlmf_naf_pendulum():
    """NAF on Pendulum-v1: 4 envs, 40K agent steps, noise-free evaluation every 8K; mu kept off
    its bounds by an L2 penalty before its tanh (0.01), Ornstein-Uhlenbeck exploration noise
    (theta 0.15, DDPG's), a curvature floor of 0.01 (P = L L^T + 0.01 I, MountainCar's) and the
    target network's rate 0.005. Chosen on tuning seeds 100-104 (docs/off_policy.md): the set
    before it (Gaussian noise, no penalty, 20K steps) failed 3 of 5, its mu at a bound in every
    state; the penalty and OU noise held all five (-168 to -189) while the replay lagged, one
    failed once it was fixed (1e6a69f), its P collapsed to about 1e-8, as MountainCar's failing
    seeds' had; the floor mended that seed and left one falling late (-180 at 32K, -554 at 40K);
    with the slower target it held all five at 40K (-160 to -186)."""
    hparams = env_cartpole()
    hparams.game = "Pendulum-v1"
    learner = naf_pendulum_params()
    learner.mean_penalty = 0.01
    learner.exploration_noise, learner.ou_theta = "ornstein_uhlenbeck", 0.15
    learner.curvature_floor = 0.01
    learner.target_update_rate = 0.005
    _off_policy(hparams, "naf", learner, num_envs=4, num_env_steps=40_000, shard_steps=200,
                eval_every_steps=8_000)
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0]
    hparams.eval_max_num_noops = 0
    hparams.eval_batch_size = 8
    hparams.eval_step_limit = 200
    return hparams


@register_hparams
def rlmf_naf_mountaincar():
    """NAF on MountainCarContinuous-v0 with temporally correlated exploration, as malmomo's NAF:
    Ornstein-Uhlenbeck noise of standard deviation 1.0 falling to 0.2 over 50K steps, each step
    keeping 95% of the last (theta 0.05: pushes one way for about 20 steps, which carry the car
    up the hill where independent noise averages out), a mean penalty of 0.001 (Pendulum's 0.01
    held two seeds at no push; without one, mu can sit at a bound where the tanh passes no
    gradient) and a curvature floor of 0.01 (every failing seed's P had shrunk to its clip, where
    no TD gradient reaches mu). Chosen on tuning seeds 100-104 (docs/off_policy.md): theta 0.05
    solved 100 and 101, DDPG's 0.15 one; the penalty 0.001 solved 100-103; the curvature floor with
    it solved 104, 102, 100 and 101; the Gaussian noise this set had first left seed 0 pushing with
    almost no force."""
    hparams = rlmf_naf_pendulum()
    hparams.game = "MountainCarContinuous-v0"
    hparams.num_env_steps = 100_000
    hparams.eval_every_steps = 10_000
    hparams.log_every_steps = 400
    hparams.eval_step_limit = 999
    hparams.naf.mean_penalty = 0.001  # as tuned (docs/off_policy.md); Pendulum's set has 0.01
    hparams.naf.curvature_floor = 0.01
    hparams.naf.target_update_rate = 0.01  # as tuned; Pendulum's set has 0.005 since its replay fix
    hparams.naf.exploration_noise = "ornstein_uhlenbeck"
    hparams.naf.ou_theta = 0.05
    hparams.naf.exploration_noise_start = 1.0
    hparams.naf.exploration_noise_final = 0.2
    hparams.naf.exploration_noise_decay_steps = 50_000
    return hparams


@register_hparams
def rlmf_naf_tiny():
    """A few hundred NAF steps on Pendulum-v1: for tests."""
    hparams = rlmf_naf_pendulum()
    hparams.num_envs = 2
    hparams.num_env_steps = 200
    hparams.shard_steps = 20
    hparams.eval_every_steps = 100
    hparams.log_every_steps = 50
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 20
    hparams.naf.learning_starts = 40
    hparams.naf.batch_size = 8
    hparams.naf.mlp_hidden_sizes = [16, 16]
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
