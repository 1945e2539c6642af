"""PPO hparam sets: the learner's values, held by loop and model-free sets as `hparams.ppo`."""

from rlkit.hparams.checks import (LEARNER_SCHEDULES, POLICY_NETWORK_RULES, discount, fail, non_negative, one_of,
                                  positive, probability, register_family, shrink)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams


def check_rollout_split(ppo, prefix, run):
    """Each rollout of envs x rollout_length steps (the run's real and simulated ones, where PPO
    is the run's learner) splits into minibatches of samples or of time steps."""
    if run.get("base_algo") != "ppo":
        return
    rollouts = [(envs, "rollout_length", run.get(envs) * ppo.rollout_length)
                for envs in ("num_envs", "simulated_num_envs") if envs in run]
    if run.get("collection") == "learner":
        rollouts.append(("real_num_envs", "real_rollout_length", run.real_num_envs * run.real_rollout_length))
    for envs, length, steps in rollouts:
        if ppo.minibatch_time_steps:  # minibatches of time steps (SimPLe's PPO)
            time_steps = steps // run.get(envs) * ppo.optimization_epochs
            if ppo.minibatch_time_steps > time_steps:
                fail(prefix, "minibatch_time_steps", ppo.minibatch_time_steps,
                     f"must be at most {length} x optimization_epochs ({time_steps}), or 0 for num_minibatches")
        elif ppo.num_minibatches > steps:
            fail(prefix, "num_minibatches", ppo.num_minibatches,
                 f"must be at most {envs} x {length} ({steps} steps per rollout)")


def shrink_on_policy_learner_for_dev(learner, run):
    """Short rollouts in one minibatch; a model-free dev run is 8 of them, evaluated every 4.
    (A learner set the run does not train with stays as it is.)"""
    if run.get("base_algo") != learner.family:
        return
    shrink(learner, "rollout_length", 32)
    shrink(learner, "num_minibatches", 1)
    if run.get("loop") == "model_free":
        run.num_env_steps = min(run.num_env_steps, 8 * run.num_envs * learner.rollout_length)
        shrink(run, "checkpoint_every_iterations", 2)
        shrink(run, "eval_every_iterations", 4)


register_family("ppo", dict(
    POLICY_NETWORK_RULES,
    learning_rate=positive, learning_rate_schedule=one_of(*LEARNER_SCHEDULES), gamma=discount, gae_lambda=discount,
    clip_coef=positive, value_coef=non_negative, entropy_coef=non_negative, optimization_epochs=positive,
    rollout_length=positive, minibatch_time_steps=non_negative, num_minibatches=positive,
    advantage_normalization=one_of("rollout", "minibatch"), max_gradient_norm=positive,
    adam_beta1=probability, adam_beta2=probability, adam_epsilon=positive,
), together=check_rollout_split, dev=shrink_on_policy_learner_for_dev)


def with_sample_minibatches(hparams, num_minibatches):
    """PPO as baselines and CleanRL run it, and as every rlkit PPO set but SimPLe's ran before
    issue 63: each epoch shuffles the rollout's samples into `num_minibatches` minibatches, the
    advantages normalised within each, Keras's Adam defaults."""
    hparams.num_minibatches = num_minibatches
    hparams.minibatch_time_steps = 0
    hparams.advantage_normalization = "minibatch"
    # Keras's Adam defaults, which every PPO set but SimPLe's ran with before SimPLe's got its own
    # (issue 63): pinned in those sets, so that their archived runs still reproduce.
    hparams.adam_beta1, hparams.adam_beta2, hparams.adam_epsilon = 0.9, 0.999, 1e-7
    return hparams


@register_hparams
def ppo_original_params():
    """SimPLe's PPO: lr 2.5e-4, gamma .99, lambda .95, clip .1, 3 epochs over 50-step rollouts
    in minibatches of 20 time steps, Adam(.85, .997, 1e-6) (tensor2tensor's ppo_original_params)."""
    return HParams(
        family="ppo",
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
        # Minibatches of 20 time steps with every env's sample at them, 50 x 3 // 20 = 7 per update
        # (SimPLe's optimization_batch_size); 0 shuffles samples into num_minibatches per epoch.
        minibatch_time_steps=20,
        num_minibatches=2,                   # with minibatch_time_steps=0 only
        advantage_normalization="rollout",   # over the whole rollout, as define_ppo_epoch; or "minibatch"
        max_gradient_norm=0.5,               # clip_grad_norm, over all gradients together
        # tensor2tensor's basic_params1 Adam, which its PPO's optimize() used (weight_decay 0 in ppo_base_v1).
        adam_beta1=0.85,
        adam_beta2=0.997,
        adam_epsilon=1e-6,
    )


def _with_atari_ppo_values(hparams):
    """Schulman et al. 2017's Atari settings, as baselines and CleanRL run them: 4 epochs of 4
    minibatches over 128-step rollouts, clip 0.1, the learning rate decaying linearly."""
    hparams.clip_coef = 0.1
    hparams.value_coef = 0.25  # 0.5 x (0.5 x MSE) in baselines' terms
    hparams.optimization_epochs = 4
    hparams.rollout_length = 128
    with_sample_minibatches(hparams, 4)  # Keras's Adam epsilon 1e-7 (baselines: 1e-5)
    hparams.learning_rate_schedule = "linear"
    return hparams


@register_hparams
def ppo_atari_nature_params():
    """PPO on 84x84x4 grayscale with the Nature CNN (Schulman et al. 2017 Atari settings)."""
    hparams = _with_atari_ppo_values(ppo_original_params())
    hparams.policy_network = "nature_cnn"
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
    with_sample_minibatches(hparams, 1)  # Keras's Adam epsilon 1e-7 (SB3: 1e-5)
    return hparams


@register_hparams
def ppo_minatar_params():
    """PPO on MinAtar with its paper's network (one 3x3 conv of 16, dense 128); CleanRL's Atari
    values (4 epochs of 4 minibatches over 128-step rollouts, clip 0.1, linear decay)."""
    hparams = _with_atari_ppo_values(ppo_original_params())
    hparams.policy_network = "minatar_cnn"
    hparams.value_coef = 0.5
    return hparams
