"""The hparam-set registry.

A set is a function returning `HParams`, registered under its own name:

    @register_hparams
    def rlmb_tiny():
        hparams = rlmb_base()
        hparams.epochs = 1
        hparams.ppo.learning_rate = 3e-4   # the loop's PPO set, held as a nested set
        return hparams

A set holds the sets of its components as values (`hparams.ppo = ppo_original_params()`), so a
built set is complete: nothing is looked up by name again, and the `hparams.json` a run saves
reproduces it even after the registered sets change. A key added to the sets later is the one
exception: `KEYS_ADDED_LATER` gives it, on reading, to saved runs that lack it.
"""

from rlkit.hparams.checks import check_hparams
from rlkit.hparams.hparam import HParams
from rlkit.registry import Registry

_SETS = Registry("hparams set", "python -m rlkit.hparams --list shows them all")


def register_hparams(fn):
    """Registers an hparam-set function under its name. Duplicate names are an error."""
    return _SETS.register(fn)


def list_hparams():
    return _SETS.names()


def registered_function(name):
    """The function registered as set `name`."""
    return _SETS.get(name)


def describe_hparams(name):
    """The first line of a set's docstring."""
    return _SETS.describe(name)


def get_hparams(name):
    """A fresh copy of the registered set `name`."""
    hparams = _SETS.get(name)()
    if not isinstance(hparams, HParams):
        raise TypeError(f"hparams set {name!r} returned {type(hparams).__name__}, not HParams")
    return hparams


# Keys added to the sets after runs had saved hparams.json without them: (a key that only the
# sets concerned have, the new key, the value that behaves as those older runs did).
KEYS_ADDED_LATER = [
    # A loop set's kind, stated since issue 65 (Dreamer's sets always had it): a set with a
    # world model ran SimPLe's loop, one with a learner and no world model the model-free loop.
    ("world_model", "loop", "simple"),
    ("base_algo", "loop", "model_free"),
    ("num_compress_steps", "family", "next_frame"),          # a world model's run, saved before families
    ("stoch_classes", "family", "rssm"),
    ("num_compress_steps", "predict_episode_ends", False),   # world models
    ("num_compress_steps", "full_resolution_action_layers", 0),
    ("num_compress_steps", "end_loss_coef", 1.0),
    ("num_compress_steps", "rewarded_window_share", 0.0),
    ("num_compress_steps", "frame_decoding", "likeliest"),
    ("num_compress_steps", "changed_pixel_weight", 1.0),
    ("num_compress_steps", "ending_window_share", 0.0),
    ("num_compress_steps", "end_target", "last_frame"),
    ("num_compress_steps", "head_pooling", "mean"),
    ("simulated_num_envs", "simulated_reward", "likeliest"),  # SimPLe loops
    ("max_episode_frames", "episodic_life", False),           # env settings
    ("max_episode_frames", "scale_observations", False),
    ("stoch_classes", "unimix", 0.0),
    ("stoch_classes", "free_nats_per_step", False),
    ("stoch_classes", "reward_head", "gaussian"),
    ("actor_critic_units", "critic_head", "mse"),             # Dreamer's actor-critics (issue 67)
    ("actor_critic_units", "slow_critic_rate", 0.0),
    ("actor_critic_units", "slow_critic_regularizer", 0.0),
    ("actor_critic_units", "return_normalization", "none"),
    ("actor_critic_units", "actor_unimix", 0.0),
    ("actor_critic_units", "returns_critic", "slow"),
    ("actor_critic_units", "imagined_continue", "mean"),
    ("stoch_classes", "rewarded_window_share", 0.0),          # RSSM world models
    ("stoch_classes", "ending_window_share", 0.0),
    ("train_ratio", "rewarded_sequence_share", 0.0),          # Dreamer loops
    ("train_ratio", "reward_transform", "env"),
    ("train_ratio", "compute_dtype", "float32"),
    ("exploration_noise_start", "exploration_noise", "gaussian"),  # NAF (issue 66)
    ("exploration_noise_start", "ou_theta", 0.15),
    ("exploration_noise_start", "reward_scale", 1.0),
    ("exploration_noise_start", "mean_penalty", 0.0),
    ("exploration_noise_start", "curvature_floor", 0.0),
    ("clip_coef", "adam_beta1", 0.9),                         # PPO sets (issue 63: Keras's Adam before)
    ("clip_coef", "adam_beta2", 0.999),
    ("clip_coef", "adam_epsilon", 1e-7),
    ("clip_coef", "minibatch_time_steps", 0),
    ("clip_coef", "advantage_normalization", "minibatch"),
]


def _family_by_role(name, nested):
    """The family of a nested set saved before sets stated it (issue 65), from its place in the run:
    a learner's set is held under the learner's name, a world model's names its model."""
    if name == "world_model":
        return "rssm" if nested.get("model") == "rssm" else "next_frame"
    if name == "actor_critic":
        return "dreamer_actor_critic"
    return name if name in ("ppo", "a2c", "reinforce", "dqn", "naf") else None


def with_keys_added_later(hparams):
    """`hparams` read from a saved run, its nested sets included, given each key of
    KEYS_ADDED_LATER that its kind of set has today and it lacks, and each nested set its
    `family`; so code reads every key plainly."""
    for name in hparams.values():
        nested = hparams.get(name)
        if isinstance(nested, HParams) and "family" not in nested and _family_by_role(name, nested):
            nested.add_hparam("family", _family_by_role(name, nested))
    for marker, name, old_value in KEYS_ADDED_LATER:
        if marker in hparams and name not in hparams:
            hparams.add_hparam(name, old_value)
    for name in hparams.values():
        if isinstance(hparams.get(name), HParams):
            with_keys_added_later(hparams.get(name))
    return hparams


def apply_overrides(hparams, overrides):
    """Applies 'name=value,...' to `hparams`, in order, then checks every value
    (`rlkit.hparams.checks`); dotted names reach into nested sets.

    A nested set may be replaced by a registered one (`world_model=next_frame_basic_deterministic`),
    after which later overrides change its values (`world_model.hidden_size=32`).
    """
    return check_hparams(hparams.parse(overrides, get_set=get_hparams))


def create_hparams(set_name, overrides=""):
    """The registered set `set_name` with `overrides` applied."""
    return apply_overrides(get_hparams(set_name), overrides)
