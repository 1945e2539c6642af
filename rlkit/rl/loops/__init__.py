"""What drives the learners: plain functions over envs and learners.

`simple.py` is the SimPLe loop (real collection -> world model -> learner inside it),
`dreamer.py` the Dreamer loop (env steps interleaved with world-model and actor-critic updates
in imagination) and `model_free.py` the model-free one; they build on the on- and off-policy
loops, the rollouts, the world model's env (`simulated_env.py`) and its training, evaluation
and Ray workers. `loop_for(hparams)` says which of the three a set runs, and
`trains_world_model(hparams)` whether it learns a world model.
"""

import json
import os

from absl import logging

WORLD_MODEL_LOOPS = ("simple", "dreamer")


def trains_world_model(hparams):
    """Whether a set's loop learns a world model (its run holds one the player and the evaluator
    can load, trained on the frames of its own data)."""
    return hparams.get("loop") in WORLD_MODEL_LOOPS


def loop_for(hparams):
    """The loop module (with `check_names(hparams)` and `train(hparams, output_dir, seed,
    on_evaluation)`) that runs a set, as its `loop` value names it; None for a set no loop runs
    (a learner's, a world model's or an env's values alone)."""
    from rlkit.rl.loops import dreamer, model_free, simple

    return {"model_free": model_free, "simple": simple, "dreamer": dreamer}.get(hparams.get("loop"))


def finished(hparams, output_dir, among):
    """Whether the saved run in `output_dir` is done, its loop's final evaluation written; False
    where its set is not one that a loop in `among` runs (the command's checks then refuse it)."""
    loop = loop_for(hparams)
    return loop in among and os.path.exists(loop.final_evaluation(hparams, output_dir))


def finished_summary(path):
    """A finished loop run's last evaluation summary (its JSON at `path`), or None. A rerun of a
    finished run builds, trains and evaluates nothing again (and, through the trainers, whose
    `cli.start_run` skips the set's checks for a finished run, loads no TensorFlow)."""
    if not os.path.exists(path):
        return None
    logging.info("The run is done; its last evaluation is %s", path)
    with open(path) as f:
        return json.load(f)
