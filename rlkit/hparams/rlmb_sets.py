"""Model-based (SimPLe loop) sets for `python -m rlkit.rl.trainer_model_based`.

A loop set is an env (env_atari's keys), its world model's set (`hparams.world_model`), its
learner's set (`hparams.ppo`, named by `base_algo`) and the loop's own schedule. Override nested
values with dotted names: `--hparams=world_model.hidden_size=64,ppo.learning_rate=3e-4`.
"""

from rlkit.hparams.dqn_sets import dqn_original_params
from rlkit.hparams.env_sets import add_eval_hparams, add_minatar_eval_hparams, env_atari, env_minatar
from rlkit.hparams.ppo_sets import ppo_original_params, with_sample_minibatches
from rlkit.hparams.checks import (expect_family, fail, list_of, non_empty, non_empty_list_of, non_negative, one_of,
                                  positive, register_family, shrink)
from rlkit.hparams.registry import register_hparams
from rlkit.hparams.world_model_sets import (next_frame_basic_stochastic_discrete,
                                            next_frame_basic_stochastic_discrete_long,
                                            next_frame_basic_stochastic_discrete_tiny, next_frame_minatar,
                                            next_frame_pixel_noise, next_frame_pong_cpu)

# The world model's env hands out its reward head's likeliest class (SimPLe's) or its mean
# (rlkit.rl.loops.simulated_env).
SIMULATED_REWARDS = ("likeliest", "expected")


def check_simple_loop_together(run, prefix, _):
    expect_family(run, "world_model", "next_frame", prefix, "next_frame_minatar")
    expect_family(run, run.base_algo, run.base_algo, prefix)
    if run.num_real_env_steps < run.epochs:
        fail(prefix, "num_real_env_steps", run.num_real_env_steps,
             f"must be at least epochs ({run.epochs}): each epoch collects real steps")


def shrink_simple_loop_for_dev(run, _):
    """Two epochs of 100 real steps from one env, short simulated rollouts, no longer training."""
    run.epochs = 2
    run.num_real_env_steps = 2 * 100
    run.real_rollout_length = min(run.real_rollout_length, 10)
    run.longer_training_epochs = []
    for name, value in (("real_num_envs", 1), ("keep_checkpoints", 2), ("simulated_num_envs", 2),
                        ("simulated_ppo_iterations", 4), ("shard_steps", 50), ("simulated_steps_per_epoch", 200),
                        ("simulated_rollout_length", 10), ("checkpoint_every_iterations", 2),
                        ("reward_accuracy_rollouts", 4)):
        shrink(run, name, value)
    run.reward_accuracy_lengths = [min(n, 12) for n in run.reward_accuracy_lengths]


register_family("simple", dict(  # the loop's own values, beside the run's (rlkit.hparams.env_sets)
    base_algo=non_empty, epochs=positive, num_real_env_steps=positive, initial_collection=non_empty,
    collection=one_of("learner", "policy"), real_num_envs=positive, real_rollout_length=positive,
    simulated_num_envs=positive, simulated_ppo_iterations=positive, simulated_rollout_length=positive,
    simulated_steps_per_epoch=positive, simulated_temperature=non_negative,
    simulated_reward=one_of(*SIMULATED_REWARDS), longer_training_epochs=list_of(non_negative),
    longer_training_factor=positive, checkpoint_every_iterations=positive, keep_checkpoints=positive,
    reward_accuracy_lengths=non_empty_list_of(positive), reward_accuracy_rollouts=positive,
), together=check_simple_loop_together, dev=shrink_simple_loop_for_dev)


@register_hparams
def rlmb_base():
    """SimPLe with the deterministic world model: 15 epochs, ~100K real agent steps in all."""
    hparams = env_atari()
    hparams.add_hparam("loop", "simple")  # the set's kind: rlkit.rl.loops.simple runs it
    hparams.add_hparam("epochs", 15)
    # Real agent steps collected by the loop's epochs; the first collection adds one epoch's
    # share (6,400), so the run sees 102,400 real agent steps (409,600 frames): "Atari 100K".
    hparams.add_hparam("num_real_env_steps", 96_000)
    # The first collection: "random" actions, or "ppo" (base_algo): the learner, freshly
    # initialised, trains on the real env as it collects, as in SimPLe.
    hparams.add_hparam("initial_collection", "ppo")
    # The later collections: "learner" (the learner trains on the real env as it collects, as in
    # SimPLe) or "policy" (the policy only samples actions).
    hparams.add_hparam("collection", "learner")
    hparams.add_hparam("real_num_envs", 16)
    hparams.add_hparam("real_rollout_length", 200)  # steps per env between the learner's real-env updates
    hparams.add_hparam("shard_steps", 200)  # agent steps per env in one data shard
    # Each epoch trains the world model to a cumulative step target: world_model.train_steps per
    # epoch, times longer_training_factor in the epochs listed.
    hparams.add_hparam("world_model", next_frame_pixel_noise())
    hparams.add_hparam("longer_training_epochs", [0, 1, 4, 9, 14])
    hparams.add_hparam("longer_training_factor", 3)
    hparams.add_hparam("base_algo", "ppo")  # the learner trained inside the world model
    hparams.add_hparam("ppo", ppo_original_params())
    hparams.ppo.learning_rate = 1e-4
    hparams.add_hparam("simulated_num_envs", 16)
    # Per epoch, each one rollout of ppo.rollout_length steps; x2 in epoch 1 and the epochs 3
    # and 7 before the last, x3 in the last (SimPLe's schedule: 20K iterations over 15 epochs).
    hparams.add_hparam("simulated_ppo_iterations", 1000)
    hparams.add_hparam("simulated_temperature", 1.0)      # the stochastic model's latent sampling
    # The simulated env's reward: the reward head's likeliest class (SimPLe), or "expected", its
    # mean P(1) - P(-1) (not in SimPLe; for rare rewards, simulated_env.py).
    hparams.add_hparam("simulated_reward", "likeliest")
    hparams.add_hparam("checkpoint_every_iterations", 100)
    hparams.add_hparam("keep_checkpoints", 3)
    add_eval_hparams(hparams)  # evaluated after every epoch
    # The world model's reward predictions over rollouts of these lengths from held-out real
    # windows, fed the real actions: SimPLe's reward_accuracy/at_N is the share of rollouts whose
    # predicted cumulative reward at step N is right (16 x 8 rollouts).
    hparams.add_hparam("reward_accuracy_lengths", [12, 50])
    hparams.add_hparam("reward_accuracy_rollouts", 128)
    return hparams


@register_hparams
def rlmb_base_stochastic_discrete():
    """SimPLe's main configuration: the stochastic discrete world model."""
    hparams = rlmb_base()
    hparams.world_model = next_frame_basic_stochastic_discrete()
    return hparams


@register_hparams
def rlmb_long_stochastic_discrete():
    """The stochastic discrete model on 16 target frames at batch 2."""
    hparams = rlmb_base_stochastic_discrete()
    hparams.world_model = next_frame_basic_stochastic_discrete_long()
    return hparams


def _with_real_steps(num_real_env_steps):
    hparams = rlmb_base_stochastic_discrete()
    hparams.num_real_env_steps = num_real_env_steps
    return hparams


@register_hparams
def rlmb_base_stochastic_discrete_20k():
    """SimPLe with 20K real agent steps: 6 epochs, 2,000 PPO iterations per epoch."""
    hparams = _with_real_steps(19_200)
    hparams.epochs = 6
    hparams.simulated_ppo_iterations = 2000
    return hparams


@register_hparams
def rlmb_pong_cpu():
    """SimPLe's loop on real Pong sized for a few hours of a 2-core CPU: the small world model
    next_frame_pong_cpu (~7K training steps in all), 6 epochs of 6,400 real steps after the first
    collection (44,800 in all), 50 PPO iterations inside the model per epoch (400K simulated
    steps in all) instead of 1,000, and so PPO's default learning rate 2.5e-4, not SimPLe's 1e-4.
    docs/results.md has its run."""
    hparams = _with_real_steps(38_400)
    hparams.epochs = 6
    hparams.world_model = next_frame_pong_cpu()
    hparams.simulated_ppo_iterations = 50
    hparams.checkpoint_every_iterations = 25
    hparams.ppo.learning_rate = 2.5e-4
    with_sample_minibatches(hparams.ppo, 2)  # what its archived run ran with (docs/simple.md, fidelity)
    return hparams


@register_hparams
def rlmb_base_stochastic_discrete_50k():
    """SimPLe with 50K real agent steps in the loop's epochs."""
    return _with_real_steps(48_000)


@register_hparams
def rlmb_base_stochastic_discrete_1m():
    """SimPLe with 1M real agent steps in the loop's epochs."""
    return _with_real_steps(960_000)


@register_hparams
def rlmb_base_stochastic_discrete_sticky():
    """SimPLe on Atari with sticky actions (repeat probability 0.25)."""
    hparams = rlmb_base_stochastic_discrete()
    hparams.sticky_actions = True
    return hparams


@register_hparams
def rlmb_tiny():
    """The whole loop on Pong in a few minutes of CPU: for tests and the README demo."""
    hparams = rlmb_base()  # its world model replaced by the tiny stochastic discrete one below
    # A quarter of SimPLe's 105x80 pixels: the world model's 256-way softmax per pixel channel is
    # most of a tiny run's compute (rlmb_tiny's CPU time 72 s -> 45 s).
    hparams.frame_height, hparams.frame_width = 52, 40
    hparams.world_model = next_frame_basic_stochastic_discrete_tiny()
    hparams.world_model.train_steps = 20
    hparams.world_model.batch_size = 2
    hparams.world_model.num_target_frames = 1
    hparams.epochs = 2
    hparams.num_real_env_steps = 2 * 2 * 100
    hparams.initial_collection = "random"
    hparams.collection = "policy"  # the learner's real-env training is tested on its own
    hparams.real_num_envs = 2
    hparams.real_rollout_length = 10
    hparams.shard_steps = 50
    hparams.longer_training_epochs = [0]
    hparams.longer_training_factor = 2
    hparams.simulated_num_envs = 4
    hparams.simulated_ppo_iterations = 4
    hparams.ppo.rollout_length = 10
    hparams.checkpoint_every_iterations = 2
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_batch_size = 2
    hparams.eval_step_limit = 50
    hparams.reward_accuracy_lengths = [4, 12]
    hparams.reward_accuracy_rollouts = 4
    return hparams


@register_hparams
def rlmb_minatar():
    """SimPLe's loop on a MinAtar game at 100K real agent steps (15 epochs of 6,400 and the first
    collection), sized to about an hour per game on 2 CPU cores: the small world model
    next_frame_minatar, MinAtar's policy network, fewer PPO iterations inside the model than
    SimPLe's 1,000 per epoch (and so PPO's default learning rate, not SimPLe's 1e-4).
    `--loop_hparams=game=minatar/freeway`. docs/results.md compares it with PPO (rlmf_minatar)."""
    hparams = rlmb_base()  # its world model replaced by the stochastic discrete next_frame_minatar
    hparams.take_values(env_minatar())
    hparams.world_model = next_frame_minatar()
    hparams.ppo.policy_network = "minatar_cnn"
    hparams.ppo.learning_rate = 2.5e-4
    # PPO as every archived MinAtar SimPLe run ran it, not SimPLe's (docs/simple.md, fidelity):
    # 2 minibatches of samples per epoch, advantages normalised in each, Keras's Adam defaults.
    with_sample_minibatches(hparams.ppo, 2)
    hparams.simulated_ppo_iterations = 250
    hparams.checkpoint_every_iterations = 50
    add_minatar_eval_hparams(hparams)
    return hparams


# The MinAtar loop's variants (none in SimPLe), each a set of changes on rlmb_minatar, so every
# variant is one step from its named parent and lists all it changes.

def _episode_ends(hparams):
    """A world model that also predicts episode ends, so PPO inside it meets the end of a game,
    as MinAtar's games end at the first lost life."""
    hparams.world_model.predict_episode_ends = True
    return hparams


def _object_heads(hparams):
    """A world model that can learn a one-cell player: an action layer at full resolution, and the
    reward and end losses weighted 0.01, since its pixel loss is a mean over mostly empty cells,
    of which one object is a 400th (docs/results_journal.md, "Where the world models go wrong": Asterix's
    and Seaquest's players)."""
    hparams.world_model.full_resolution_action_layers = 1
    hparams.world_model.reward_loss_coef = 0.01
    hparams.world_model.end_loss_coef = 0.01
    return hparams


def _object_frames(hparams):
    """Frames that keep an object the world model is unsure where to put
    (`world_model.frame_decoding=objects`, in its env and scheduled sampling). With the likeliest
    frame, a rollout loses such an object for good (Seaquest's submarine and torpedoes, Space
    Invaders' bullets: docs/results_journal.md, "Where the world models go wrong")."""
    hparams.world_model.frame_decoding = "objects"
    return hparams


def _changed_pixels(hparams):
    """A pixel loss that weighs the cells that changed since the frame before 3 times: a one-cell
    object that moves changes 2 of 400 cells a channel, so with the plain mean a model that fades
    it loses little, and its rollouts lose Space Invaders' and Seaquest's enemy bullets within 8
    steps, which object frames cannot bring back. Weight 3 with object frames kept them closest to
    the real counts of the weights and decodings measured (docs/results_journal.md, "Changed pixels"); 10
    draws objects several times over."""
    hparams.world_model.changed_pixel_weight = 3.0
    return hparams


def _ending_steps(hparams):
    """An end head that predicts whether the step it is given ends the episode
    (`world_model.end_target=ending_step`; otherwise whether the frame it predicts is the last),
    reward and end heads that read the features' maxima over positions beside their means
    (`world_model.head_pooling=mean_and_max`), and an env that hands out the reward head's mean
    (`simulated_reward=expected`). On Asterix two thirds of the ends come from the player stepping
    onto an enemy, which only the action tells, in one cell of a hundred (docs/results_journal.md,
    "Asterix's end head"); where the likeliest reward is always 0 (Asterix's gold, 0.7% of steps),
    an end costs the policy nothing."""
    hparams.world_model.end_target = "ending_step"
    hparams.world_model.head_pooling = "mean_and_max"
    hparams.simulated_reward = "expected"
    return hparams


def _low_entropy(hparams):
    """PPO's entropy bonus at 0.001 instead of SimPLe's 0.01, for games where one random step ends
    the episode. On Asterix the ending-steps loop's greedy policy scored 0.72-0.88 through epochs
    0-4 against 0.34-0.66 sampled at temperature 1 (random: 0.49), and PPO@1M on the real game 2.47
    greedy against 1.28 sampled; with the bonus at 0.001, 2.45 against 2.36 (seed 0 each;
    docs/results_journal.md, "A sharper policy"). On the real game at 100K PPO does not gain from it (0.48
    over 5 seeds against 0.47 over 10): it sharpens what a policy has learned, which SimPLe's has
    inside its model and PPO's at 100K has not."""
    hparams.ppo.entropy_coef = 0.001
    return hparams


def _rewarded_windows(hparams):
    """World-model training windows half of which hold a reward, for games whose rewards are too
    rare for the reward head to learn (Asterix: 0.73% of steps; trained on uniform windows its head
    gives every step the same probability of one)."""
    hparams.world_model.rewarded_window_share = 0.5
    return hparams


@register_hparams
def rlmb_minatar_ends():
    """rlmb_minatar with a world model that also predicts episode ends (`_episode_ends`)."""
    return _episode_ends(rlmb_minatar())


@register_hparams
def rlmb_minatar_objects():
    """rlmb_minatar with episode ends and a world model that can learn a one-cell player
    (`_object_heads`)."""
    return _object_heads(_episode_ends(rlmb_minatar()))


@register_hparams
def rlmb_minatar_object_frames():
    """rlmb_minatar_objects' changes, and frames that keep an object the model is unsure where to
    put (`_object_frames`)."""
    return _object_frames(_object_heads(_episode_ends(rlmb_minatar())))


@register_hparams
def rlmb_minatar_changed_pixels():
    """rlmb_minatar_object_frames' changes, and a pixel loss that weighs changed cells 3 times
    (`_changed_pixels`)."""
    return _changed_pixels(_object_frames(_object_heads(_episode_ends(rlmb_minatar()))))


@register_hparams
def rlmb_minatar_ending_steps():
    """rlmb_minatar_object_frames' changes, and an end head on the ending step, heads that also
    pool maxima, rewards at the reward head's mean (`_ending_steps`)."""
    return _ending_steps(_object_frames(_object_heads(_episode_ends(rlmb_minatar()))))


@register_hparams
def rlmb_minatar_ending_steps_low_entropy():
    """rlmb_minatar_ending_steps' changes, and PPO's entropy bonus at 0.001 (`_low_entropy`)."""
    return _low_entropy(_ending_steps(_object_frames(_object_heads(_episode_ends(rlmb_minatar())))))


@register_hparams
def rlmb_minatar_combined():
    """One SimPLe set for every MinAtar game (issue 68): each change that made some game's set
    the first above random there, together: episode ends, one-cell objects, object frames
    (Seaquest's), changed pixels x3 (Space Invaders'), ending steps with head maxima and expected
    rewards (Asterix's; expected rewards also lifted Freeway's SimPLe seed 0, 1.81 to 19.47). Fixed
    before its reported runs (seeds 0-4 on Breakout and Freeway, 0-2 elsewhere, all from adc03ea);
    any tuning on seeds 100 and above (docs/results.md, "One set for every game")."""
    return _changed_pixels(_ending_steps(_object_frames(_object_heads(_episode_ends(rlmb_minatar())))))


@register_hparams
def rlmb_minatar_rewarded():
    """rlmb_minatar_objects' changes, and world-model windows half of which hold a reward
    (`_rewarded_windows`)."""
    return _rewarded_windows(_object_heads(_episode_ends(rlmb_minatar())))


@register_hparams
def rlmb_minatar_tiny():
    """The MinAtar loop in a minute or two of CPU: for tests."""
    hparams = rlmb_minatar()
    tiny = rlmb_tiny()
    for name in ("epochs", "num_real_env_steps", "initial_collection", "collection", "real_num_envs",
                 "real_rollout_length", "shard_steps", "longer_training_epochs", "longer_training_factor",
                 "simulated_num_envs", "simulated_ppo_iterations", "checkpoint_every_iterations",
                 "eval_sampling_temps", "eval_batch_size", "eval_step_limit", "reward_accuracy_lengths",
                 "reward_accuracy_rollouts"):
        setattr(hparams, name, getattr(tiny, name))
    hparams.ppo.rollout_length = tiny.ppo.rollout_length
    hparams.world_model = next_frame_basic_stochastic_discrete_tiny()
    for name in ("train_steps", "batch_size", "num_target_frames"):
        setattr(hparams.world_model, name, getattr(tiny.world_model, name))
    hparams.final_eval_batch_size = hparams.eval_batch_size
    return hparams


@register_hparams
def rlmb_dqn_base():
    """SimPLe's loop with DQN inside the world model (tensor2tensor's rlmb_dqn_base):
    dqn_original_params, 16 simulated envs restarted from real frames every 10 steps (a time
    limit, not an end the agent learns), 250K simulated agent steps per epoch (the original's 1M
    frames) with SimPLe's longer epochs, the real data collected by a random policy first and then
    by the DQN policy at its evaluation epsilon. `hparams.ppo` is unused here."""
    hparams = rlmb_base_stochastic_discrete()
    hparams.base_algo = "dqn"
    hparams.add_hparam("dqn", dqn_original_params())
    hparams.add_hparam("simulated_rollout_length", 10)
    hparams.add_hparam("simulated_steps_per_epoch", 250_000)
    hparams.initial_collection = "random"
    hparams.collection = "policy"
    return hparams


@register_hparams
def rlmb_dqn_tiny():
    """The DQN loop on Pong in a minute or two of CPU: for tests."""
    hparams = rlmb_tiny()
    hparams.base_algo = "dqn"
    hparams.add_hparam("dqn", dqn_original_params())
    hparams.add_hparam("simulated_rollout_length", 5)
    hparams.add_hparam("simulated_steps_per_epoch", 40)
    hparams.dqn.learning_starts = 20
    hparams.dqn.batch_size = 4
    hparams.dqn.target_update_period = 20
    hparams.dqn.epsilon_decay_steps = 100
    return hparams
