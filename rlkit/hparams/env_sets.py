"""Environment hparams: the keys every experiment set carries to describe its env.

`env_atari` holds SimPLe's Atari preprocessing; experiment sets start from it and change what
they need (`hparams = env_atari(); hparams.add_hparam("epochs", 15)`).
"""

from rlkit.hparams.checks import (RUN, anything, non_empty, non_empty_list_of, non_negative, one_of, positive,
                                  register_family, shrink)
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import register_hparams



def shrink_run_for_dev(run, _):
    for name in ("num_envs", "eval_batch_size", "final_eval_batch_size"):
        shrink(run, name, 1)
    shrink(run, "eval_step_limit", 100)


# Every top-level set's env, evaluation and collection values (a training set adds its loop's:
# rlkit.hparams.rlmf_sets, rlmb_sets, dreamer_sets).
register_family(RUN, {
    "game": non_empty, "frame_height": positive, "frame_width": positive, "grayscale": anything,
    "frame_skip": positive, "max_num_noops": non_negative, "sticky_actions": anything,
    "max_episode_frames": positive, "episodic_life": anything, "scale_observations": anything,
    "frame_stack_size": positive,
    "real_num_workers": non_negative,
    "eval_sampling_temps": non_empty_list_of(non_negative), "eval_max_num_noops": non_negative,
    "eval_batch_size": positive, "eval_step_limit": positive, "final_eval_batch_size": positive,
    "num_envs": positive, "num_agent_steps": positive, "shard_steps": positive,
    "loop": one_of("model_free", "simple", "dreamer"),
}, dev=shrink_run_for_dev)


@register_hparams
def env_atari():
    """SimPLe's Atari env: frame skip 4 with max-pool, 105x80 RGB, up to 8 no-op steps, no sticky actions."""
    return HParams(
        # An Atari game in snake_case (pong, breakout, ms_pacman) or any gymnasium id (CartPole-v1).
        game="pong",
        frame_height=105,
        frame_width=80,
        grayscale=False,
        frame_skip=4,
        # Random no-ops at reset, in agent steps (each frame_skip frames); 0 disables them.
        max_num_noops=8,
        sticky_actions=False,
        # The standard cap of 108,000 emulator frames (30 minutes of play).
        max_episode_frames=108000,
        # Nature DQN's and A2C's training signal: a lost life ends the training episode (its
        # last step a terminal), though the game goes on until it is over. Evaluation always
        # plays whole games.
        episodic_life=False,
        # A gymnasium env's vector observations mapped linearly from their bounds onto [-1, 1]
        # (MountainCar's velocity spans 0.14, Pendulum's 16), so that every input reaches the
        # networks at one scale. Needs finite bounds; not for Atari's or MinAtar's frames.
        scale_observations=False,
        frame_stack_size=4,
        # Ray actors that run the real envs (collection and evaluation), each with its share of
        # the envs and a copy of the policy; 0 runs them in this process and never imports Ray.
        real_num_workers=0,
    )


def add_eval_hparams(hparams):
    """Adds SimPLe's evaluation settings (those `hparams` lacks): the policy on the real env at
    each sampling temperature, with up to eval_max_num_noops random no-ops at reset and with
    none, one episode in each of eval_batch_size envs, at most eval_step_limit agent steps."""
    defaults = dict(
        eval_sampling_temps=[0.5, 0.0, 1.0],
        eval_max_num_noops=8,
        eval_batch_size=32,
        eval_step_limit=1000,
    )
    for name, value in defaults.items():
        if name not in hparams:
            hparams.add_hparam(name, value)
    return hparams


@register_hparams
def env_atari_sticky():
    """SimPLe's Atari env with sticky actions (repeat probability 0.25, Machado et al. 2018)."""
    hparams = env_atari()
    hparams.sticky_actions = True
    return hparams


@register_hparams
def env_minatar():
    """A MinAtar game (10x10 frames of on/off channels; `pip install -e ".[minatar]"`) with
    MinAtar's own settings: sticky actions with p=0.1, no frame skip, no no-ops, no frame cap.
    frame_height, frame_width and grayscale do not apply: the game sets the frames."""
    hparams = env_atari()
    hparams.game = "minatar/breakout"
    hparams.frame_skip = 1
    hparams.max_num_noops = 0
    hparams.sticky_actions = True
    return hparams


def add_minatar_eval_hparams(hparams):
    """The evaluation every MinAtar result uses: 32 episodes at sampling temperatures 0 and 1
    during a run and 128 in its final evaluation (and the evaluator's; docs/results.md measures
    that its standard error is small next to the spread over seeds), no no-ops, each up to
    2,500 steps (a whole Freeway game; longer episodes of the other games are cut)."""
    add_eval_hparams(hparams)
    hparams.eval_sampling_temps = [0.0, 1.0]
    hparams.eval_max_num_noops = 0
    hparams.eval_batch_size = 32
    hparams.eval_step_limit = 2500
    if "final_eval_batch_size" not in hparams:
        hparams.add_hparam("final_eval_batch_size", 128)
    return hparams


CARTPOLE_SOLVED = 475.0  # gymnasium's reward threshold for CartPole-v1: a run's `solved_return`


@register_hparams
def env_cartpole():
    """CartPole-v1 through the same batched interface, for small experiments and tests."""
    hparams = env_atari()
    hparams.game = "CartPole-v1"
    hparams.frame_stack_size = 1
    return hparams


@register_hparams
def collect_random():
    """Collect real experience with a uniformly random policy into OUTPUT_DIR/data."""
    hparams = env_atari()
    hparams.add_hparam("num_envs", 8)
    hparams.add_hparam("num_agent_steps", 6400)
    # Agent steps per env in one shard; a killed collection loses at most one shard.
    hparams.add_hparam("shard_steps", 200)
    return hparams


@register_hparams
def collect_random_tiny():
    """A few hundred random Pong steps: the README demo and the tests."""
    hparams = collect_random()
    hparams.num_envs = 2
    hparams.num_agent_steps = 400
    hparams.shard_steps = 50
    return hparams
