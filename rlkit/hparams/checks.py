"""What each hparam may hold, checked whenever a set is built and overrides are applied.

One rule per hparam name (the same name means the same thing in every set), plus the few rules
that tie names together. A broken rule is one UserError line naming the hparam, its value and
what is allowed:

    hparam 'epochs' = 0: must be an integer > 0

Names that pick a registered component (`base_algo`, `model`, `policy_network`) and `game` are
checked against their registries and the env by the commands before anything is written
(`rlkit.rl.learners.learner.check_learner`, `rlkit.data_generators.make_env.check_game`). Every name in
rlkit's registered sets has a rule here; tests/test_bad_input.py holds them to it.
"""

from rlkit.errors import UserError
from rlkit.hparams.hparam import HParams


def positive(value):
    return None if value > 0 else "> 0"


def non_negative(value):
    return None if value >= 0 else ">= 0"


def probability(value):
    return None if 0 <= value <= 1 else "in [0, 1]"


def discount(value):
    return None if 0 <= value <= 1 else "a discount in [0, 1]"


def anything(value):
    return None


def one_of(*choices):
    def rule(value):
        return None if value in choices else "one of " + ", ".join(repr(c) for c in choices)
    return rule


def list_of(item_rule):
    def rule(value):
        broken = [item_rule(item) for item in value if item_rule(item)]
        return f"a list of values {broken[0]}" if broken else None
    return rule


def non_empty_list_of(item_rule):
    items_rule = list_of(item_rule)
    return lambda value: items_rule(value) if value else "a non-empty list"


def non_empty(value):
    return None if value.strip() else "a non-empty name"


# The world models' schedules (rlkit.models.optimizers.SCHEDULES) and PPO's (rlkit.rl.learners.schedules).
WORLD_MODEL_SCHEDULES = ("constant", "linear_warmup", "linear_warmup_rsqrt_decay")
PPO_SCHEDULES = ("constant", "linear")

RULES = {
    # Env and data.
    "game": non_empty,
    "frame_height": positive, "frame_width": positive, "frame_skip": positive, "frame_stack_size": positive,
    "grayscale": anything, "sticky_actions": anything, "episodic_life": anything, "max_episode_frames": positive, "max_num_noops": non_negative,
    "num_envs": positive, "real_num_workers": non_negative, "num_agent_steps": positive, "shard_steps": positive,
    # Evaluation.
    "eval_batch_size": positive, "final_eval_batch_size": positive, "eval_step_limit": positive, "eval_max_num_noops": non_negative,
    "eval_sampling_temps": non_empty_list_of(non_negative), "eval_every_iterations": positive,
    "reward_accuracy_lengths": non_empty_list_of(positive), "reward_accuracy_rollouts": positive,
    # Model-free training and PPO.
    "base_algo": non_empty, "policy_network": non_empty, "mlp_hidden_sizes": list_of(positive),
    "num_env_steps": positive, "rollout_length": positive, "checkpoint_every_iterations": positive,
    "learning_rate": positive, "optimization_epochs": positive, "num_minibatches": positive,
    "gamma": discount, "gae_lambda": discount, "clip_coef": positive, "entropy_coef": non_negative,
    "value_coef": non_negative, "max_gradient_norm": positive, "dropout": probability,
    "minibatch_time_steps": non_negative, "advantage_normalization": one_of("rollout", "minibatch"),
    "adam_beta1": probability, "adam_beta2": probability, "adam_epsilon": positive,
    # DQN.
    "rmsprop_decay": probability, "optimizer_epsilon": positive, "rmsprop_centered": anything,
    "replay_capacity": positive, "learning_starts": non_negative, "update_period": positive,
    "target_update_period": positive, "epsilon_start": probability, "epsilon_final": probability,
    "epsilon_decay_steps": non_negative, "eval_epsilon": probability, "double": anything, "dueling": anything,
    "n_step": positive, "prioritized": anything, "priority_exponent": non_negative,
    "importance_exponent_start": probability, "eval_every_steps": positive, "log_every_steps": positive,
    # REINFORCE and A2C.
    "train_on": one_of("steps", "episodes"), "advantage": one_of("returns", "gae"),
    "normalize_advantages": anything, "solved_return": anything,
    # NAF.
    "target_update_rate": probability, "exploration_noise_start": non_negative,
    "exploration_noise_final": non_negative, "exploration_noise_decay_steps": non_negative,
    # The SimPLe loop.
    "epochs": positive, "num_real_env_steps": positive, "real_num_envs": positive, "real_rollout_length": positive,
    "initial_collection": non_empty, "collection": one_of("learner", "policy"),
    "simulated_num_envs": positive, "simulated_ppo_iterations": positive, "simulated_temperature": non_negative,
    "simulated_reward": one_of("likeliest", "expected"),
    "longer_training_epochs": list_of(non_negative), "longer_training_factor": positive,
    "simulated_rollout_length": positive, "simulated_steps_per_epoch": positive,
    # World models.
    "model": non_empty, "num_context_frames": positive, "num_target_frames": positive, "hidden_size": positive,
    "num_compress_steps": positive, "filter_double_steps": non_negative, "num_hidden_layers": positive,
    "residual_dropout": probability, "input_noise": probability, "recurrent_state_size": non_negative,
    "single_frame": anything, "predict_episode_ends": anything, "full_resolution_action_layers": non_negative,
    "pixel_loss_cutoff": non_negative, "changed_pixel_weight": positive, "reward_loss_coef": non_negative,
    "end_loss_coef": non_negative,
    "rewarded_window_share": probability, "ending_window_share": probability,
    "end_target": one_of("last_frame", "ending_step"), "head_pooling": one_of("mean", "mean_and_max"),
    "frame_decoding": one_of("likeliest", "objects"),
    "learning_rate_warmup_steps": non_negative, "clip_grad_norm": positive, "batch_size": positive,
    "mixed_precision": anything, "train_steps": positive, "save_checkpoints_steps": positive,
    "save_summary_steps": positive, "keep_checkpoints": positive, "dream_length": positive,
    "bottleneck_bits": positive, "bottleneck_noise": non_negative, "bit_flip_probability": probability,
    "latent_discriminator_filters": positive, "latent_predictor_state_size": positive,
    "latent_predictor_dropout": probability, "bit_loss_coef": non_negative,
    "discretize_warmup_steps": non_negative, "latent_rnn_warmup_steps": non_negative,
    "latent_rnn_max_sampling": probability, "latent_use_max_probability": probability,
    "scheduled_sampling_steps": non_negative, "scheduled_sampling_max_prob": probability,
    # DreamerV2's world model (rlkit.models.rssm)
    "deter_size": positive, "stoch_groups": positive, "stoch_classes": positive, "encoder_depth": positive,
    "encoder_kernels": non_empty_list_of(positive), "encoder_strides": non_empty_list_of(positive),
    "decoder_kernels": list_of(positive), "head_units": positive, "head_layers": non_negative,
    "kl_scale": non_negative, "kl_balance": probability, "free_nats": non_negative, "continue_scale": non_negative,
    "unimix": probability,
    # and its actor-critic (rlkit.rl.learners.dreamer)
    "actor_critic_units": positive, "actor_critic_layers": non_negative,
    "actor_learning_rate": positive, "critic_learning_rate": positive, "horizon": positive, "return_lambda": discount,
    "imagine_starts": non_negative,  # 0: every posterior state of the batch
    # and its loop (rlkit.rl.loops.dreamer)
    "loop": one_of("model_free", "simple", "dreamer"), "train_ratio": positive, "prefill_steps": non_negative,
    "rewarded_sequence_share": probability, "reward_transform": one_of("env", "tanh"),
    "compute_dtype": one_of("float32", "bfloat16", "auto"),
    "log_every_updates": positive, "offline_data_dir": anything, "offline_updates": positive,
    "offline_checkpoint_updates": positive,
}


def _learning_rate_schedule(value, owner):
    """PPO's schedules or the world models' (a world-model set names its `model`)."""
    return one_of(*(WORLD_MODEL_SCHEDULES if "model" in owner else PPO_SCHEDULES))(value)


def _broken(rule, value):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and rule in (positive, non_negative):
        return None if rule(value) is None else ("an integer " if isinstance(value, int) else "") + rule(value)
    return rule(value)


def check_hparams(hparams, prefix=""):
    """Raises UserError for the first value that breaks its rule; returns `hparams`."""
    for name, value in hparams.values().items():
        if isinstance(hparams.get(name), HParams):
            check_hparams(hparams.get(name), f"{prefix}{name}.")
            continue
        if name == "learning_rate_schedule":
            allowed = _learning_rate_schedule(value, hparams)
        else:
            rule = RULES.get(name)
            allowed = _broken(rule, value) if rule else None
        if allowed:
            raise UserError(f"hparam {prefix + name!r} = {value!r}: must be {allowed}")
    _check_together(hparams, prefix)
    return hparams


def check_frame_decoding(world_model, pixel_values):
    """Object frames read on/off cells (MinAtar's): refused for frames of other values, which the
    env gives (so no rule on the set alone can say)."""
    if world_model.frame_decoding == "objects" and pixel_values != 2:
        raise UserError(f"world_model.frame_decoding=objects is for on/off frames (MinAtar's), not frames of "
                        f"{pixel_values} values: use frame_decoding=likeliest")


def _fail(prefix, name, value, allowed):
    raise UserError(f"hparam {prefix + name!r} = {value!r}: {allowed}")


def _check_together(hparams, prefix):
    """Rules that tie the values of one set together."""
    get = hparams.get
    if "filter_double_steps" in hparams and get("filter_double_steps") > get("num_compress_steps"):
        _fail(prefix, "filter_double_steps", get("filter_double_steps"),
              f"must be at most num_compress_steps ({get('num_compress_steps')})")
    if get("rewarded_window_share", 0.0) + get("ending_window_share", 0.0) > 1.0:
        _fail(prefix, "ending_window_share", get("ending_window_share"),
              f"with rewarded_window_share ({get('rewarded_window_share')}) must add up to at most 1")
    if get("single_frame") and not get("recurrent_state_size"):
        _fail(prefix, "single_frame", True, "needs recurrent_state_size > 0 (the state is the model's only memory)")
    if get("model") == "rssm" and get("mixed_precision"):  # the estimator's float16 is for SimPLe's models
        _fail(prefix, "mixed_precision", True, "DreamerV2's world model (rssm) computes in float32 only "
              "(docs/dreamer.md, 'Differences from the paper'): drop the override")
    if "epochs" in hparams and "num_real_env_steps" in hparams:
        if get("num_real_env_steps") < get("epochs"):
            _fail(prefix, "num_real_env_steps", get("num_real_env_steps"),
                  f"must be at least epochs ({get('epochs')}): each epoch collects real steps")
    if get("loop") == "dreamer" and get("prefill_steps") >= get("num_env_steps") and not get("offline_data_dir"):
        _fail(prefix, "prefill_steps", get("prefill_steps"), f"must be below num_env_steps ({get('num_env_steps')})")
    # PPO splits each rollout of envs x rollout_length steps into num_minibatches.
    algo = get("base_algo")
    learner = get(algo) if isinstance(algo, str) and isinstance(get(algo), HParams) else None
    if learner is not None and "num_minibatches" in learner and "rollout_length" in learner:
        rollouts = [(envs, "rollout_length", get(envs) * learner.rollout_length)
                    for envs in ("num_envs", "simulated_num_envs") if envs in hparams]
        if get("collection") == "learner":
            rollouts.append(("real_num_envs", "real_rollout_length", get("real_num_envs") * get("real_rollout_length")))
        for envs, length, steps in rollouts:
            if learner.get("minibatch_time_steps"):  # minibatches of time steps (SimPLe's PPO)
                time_steps = steps // get(envs) * learner.optimization_epochs
                if learner.minibatch_time_steps > time_steps:
                    _fail(prefix, f"{algo}.minibatch_time_steps", learner.minibatch_time_steps,
                          f"must be at most {length} x optimization_epochs ({time_steps}), or 0 for num_minibatches")
            elif learner.num_minibatches > steps:
                _fail(prefix, f"{algo}.num_minibatches", learner.num_minibatches,
                      f"must be at most {envs} x {length} ({steps} steps per rollout)")
