"""Evaluation shared by the model-based loop and the evaluator.

* `evaluate_policy`: a policy on the real env over SimPLe's grid of sampling temperatures x
  {eval_max_num_noops, 0} random no-ops at reset, one episode in each of eval_batch_size envs.
* `reward_accuracy`: how often the world model, fed real frames and actions, predicts the
  cumulative reward of an n-step rollout right (SimPLe's definition), and every reward of it.
"""

import contextlib
import os

import numpy as np
from absl import logging

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import is_image_game, make_batch_env
from rlkit.errors import UserError
from rlkit.models.world_model import imagine
from rlkit.rl.loops.rollout import run_episodes
from rlkit.video import episode_frames, write_mp4


def eval_grid(hparams):
    """(sampling temperature, max no-ops) pairs, in the order they are evaluated."""
    noops = [hparams.eval_max_num_noops] + ([0] if hparams.eval_max_num_noops else [])
    return [(float(t), n) for t in hparams.eval_sampling_temps for n in noops]


def config_name(temperature, max_noops):
    return f"sampling_temp_{temperature}_max_noops_{max_noops}"


def summarize_returns(stats):
    """Mean, median and std of unclipped and clipped returns, and the mean episode length."""
    summary = {}
    for kind, values in (("unclipped", stats.returns), ("clipped", stats.clipped_returns)):
        summary[f"mean_{kind}"] = float(np.mean(values))
        summary[f"median_{kind}"] = float(np.median(values))
        summary[f"std_{kind}"] = float(np.std(values))
    summary["mean_length"] = float(np.mean(stats.lengths))
    summary["episodes"] = len(stats.returns)
    return summary


def run_eval_cell(hparams, env, act, name, temperature, seed, record_envs):
    """One episode per env of `env` at `temperature`: (summary, recordings of the first envs).
    A recurrent policy (an `act` with `reset`) starts every env afresh."""
    if hasattr(act, "reset"):
        act.reset()
    stats = run_episodes(FrameStack(env, hparams.frame_stack_size), lambda observation: act(observation, temperature),
                         hparams.eval_step_limit, seed, record_envs)
    return log_cell(name, summarize_returns(stats)), stats.recordings


def log_cell(name, summary):
    logging.info("Eval %s: mean return %.2f (clipped %.2f), mean length %.1f", name, summary["mean_unclipped"],
                 summary["mean_clipped"], summary["mean_length"])
    return summary


def evaluation_episodes(hparams, final):
    """Episodes per cell: eval_batch_size, or for a run's final evaluation (and the evaluator's)
    final_eval_batch_size where the set has one (MinAtar's results: enough episodes that the
    evaluation's standard error is small next to the spread over seeds)."""
    return hparams.get("final_eval_batch_size", hparams.eval_batch_size) if final else hparams.eval_batch_size


def evaluate_policy(hparams, act, seed, record_envs=0, workers=None, final=False):
    """{config_name: summary} of `act(stacked_observations, temperature) -> actions` on the real env,
    and {config_name: [(frames, rewards)] of the first `record_envs` episodes}. One episode per
    env of `evaluation_episodes(hparams, final)` envs.

    workers (rlkit.rl.loops.workers): the episodes run on Ray actors, with the weights of the learner
    they were started with (whose `act` `act` is), the same envs and seeds; nothing recorded."""
    results, recordings = {}, {}
    episodes = evaluation_episodes(hparams, final)
    # A gymnasium env's observations are no pictures: recorded episodes show its own drawing.
    render = bool(record_envs) and not is_image_game(hparams.game)
    with contextlib.ExitStack() as open_envs:
        envs = {}  # one per no-op setting, shared by the temperatures: each cell resets it with `seed`
        for temperature, max_noops in eval_grid(hparams):
            env_hparams = hparams.copy()
            env_hparams.max_num_noops = max_noops
            if "episodic_life" in env_hparams:
                env_hparams.episodic_life = False  # evaluation plays whole games
            name = config_name(temperature, max_noops)
            if workers is not None:
                stats = workers.run_episodes(env_hparams, episodes, temperature, hparams.eval_step_limit, seed)
                results[name], recordings[name] = log_cell(name, summarize_returns(stats)), []
                continue
            if max_noops not in envs:  # making an Atari batch env costs ~0.3 s per env
                envs[max_noops] = open_envs.enter_context(make_batch_env(env_hparams, episodes, render=render))
            results[name], recordings[name] = run_eval_cell(hparams, envs[max_noops], act, name, temperature, seed,
                                                            record_envs)
    return results, recordings


def evaluate_in_world_model(hparams, act, simulated_env, seed, record_envs=0):
    """Like evaluate_policy, inside a world model (a SimulatedBatchEnv of eval_batch_size envs):
    each temperature over eval_step_limit steps from real starting frames (no no-ops there)."""
    results, recordings = {}, {}
    for temperature in hparams.eval_sampling_temps:
        name = config_name(float(temperature), 0)
        results[name], recordings[name] = run_eval_cell(hparams, simulated_env, act, name, temperature, seed,
                                                        record_envs)
    return results, recordings


def main_return(results):
    """The return a run is judged by (its best policy chosen, a search's trials compared): the
    mean unclipped return at temperature 1 (the policy's own sampling: PPO's softmax, DQN's
    evaluation epsilon), else the first cell's."""
    cells = [name for name in results if name.startswith("sampling_temp_1.0_")] or list(results)
    return results[cells[0]]["mean_unclipped"]


def report(on_evaluation, env_steps, results):
    """Tells a loop's `on_evaluation(real env steps, main return)` (a search reporting to Ray
    Tune; None in a plain run) of an evaluation's `results`."""
    if on_evaluation is not None:
        on_evaluation(env_steps, main_return(results))


def policy_scalars(results):
    """TensorBoard tags of evaluate_policy's results, as SimPLe named them, and the spread of the
    episodes' returns (the standard error of an evaluation is std / sqrt(episodes))."""
    scalars = {f"mean_reward/eval/{name}_{kind}": summary[f"mean_{kind}"]
               for name, summary in results.items() for kind in ("unclipped", "clipped")}
    for name, summary in results.items():
        scalars[f"episodes/eval/{name}_std_unclipped"] = summary["std_unclipped"]
        scalars[f"episodes/eval/{name}_episodes"] = summary["episodes"]
    return scalars


def reward_accuracy(model, store, lengths, num_rollouts, temperature, seed, epochs=None):
    """SimPLe's world-model metric from `num_rollouts` rollouts fed the real actions, each from
    a random real context window of a FrameStore's `epochs` (held out from training):

        reward_accuracy/at_N: the share whose predicted cumulative reward after N steps equals
            the real one (SimPLe's definition);
        reward_accuracy_every_step/at_N: the stricter share whose N predicted rewards are all right.

    All rollouts run as one batch. Returns {} (with a warning) if no episode is long enough.
    """
    context, horizon = model.hparams.num_context_frames, max(lengths)
    windows = store.windows(np.random.default_rng(seed), num_rollouts, context + horizon, epochs)
    if windows is None:
        logging.warning("No held-out episode has %d steps: reward accuracy skipped", context + horizon)
        return {}
    # actions[t] was taken on frames[t] and rewards[t] followed it: the first predicted frame
    # is frames[context], after actions[context - 1].
    actions = windows["actions"][:, context - 1:context - 1 + horizon]
    real_rewards = windows["rewards"][:, context - 1:context - 1 + horizon]
    _, predicted, _, _, _ = imagine(model, windows["frames"][:, :context], actions, temperature=temperature,
                                 history_actions=windows["actions"][:, :context - 1])
    return reward_accuracies(predicted, real_rewards, lengths)


def reward_accuracies(predicted, real, lengths):
    """reward_accuracy's two shares from predicted and real rewards [rollouts, steps]."""
    same_sum = np.cumsum(predicted, axis=1) == np.cumsum(real, axis=1)
    correct = predicted == real
    results = {}
    for n in lengths:
        results[f"reward_accuracy/at_{n}"] = float(np.mean(same_sum[:, n - 1]))
        results[f"reward_accuracy_every_step/at_{n}"] = float(np.mean(correct[:, :n].all(axis=1)))
    return results


def write_videos(video_dir, label, recordings, zoom=2):
    """One MP4 per recorded episode: DEBUG_VIDEO_PATH/{label}_{config}_{i}.mp4."""
    paths = []
    for config, episodes in recordings.items():
        for i, (frames, rewards) in enumerate(episodes):
            path = os.path.join(video_dir, f"{label}_{config}_{i}.mp4")
            write_mp4(path, episode_frames(frames, rewards, zoom))
            paths.append(path)
    return paths


def evaluate(hparams, mode, agent, policy_dir, wm_dir, data_dir, all_epochs, num_debug_videos, video_dir,
             seed, data_epochs=None):
    """The evaluator's work (`python -m rlkit.rl.evaluator`): {label: results} for every saved
    policy evaluated (one label for the random agent) on the real env or inside the world model
    in `wm_dir` (`mode`), or the world model's reward accuracy; videos into `video_dir`."""
    import tensorflow as tf

    from rlkit.data_generators.experience import random_policy
    from rlkit.data_generators.frame_store import FrameStore
    from rlkit.data_generators.make_env import frame_shape, pixel_values, spaces_of
    from rlkit.rl.learners.policy_export import find_policies, load_policy
    from rlkit.rl.loops.simulated_env import SimulatedBatchEnv
    from rlkit.rl.loops.world_model_training import load_world_model

    observation_space, action_space, _ = spaces_of(hparams)  # image frames, or a gymnasium env's vectors
    observation_shape = (hparams.frame_stack_size,) + observation_space.shape
    if mode == "model":
        agents = [("world_model", None)]  # the world model's accuracy does not depend on an agent
    elif agent == "random":
        agents = [("random", random_policy(action_space, seed))]
    else:
        agents = [(label, load_policy(path, observation_shape, action_space, tf.as_dtype(observation_space.dtype)))
                  for label, path in find_policies(policy_dir, all_epochs)]
    model = store = None
    if mode in ("agent_simulated", "model"):
        model = load_world_model(hparams.world_model, wm_dir, frame_shape(hparams), int(action_space.n),
                                 pixel_values(hparams))
        store = FrameStore(data_dir)
        if not store.episodes:
            raise UserError(f"no readable episodes in --data_dir={data_dir!r}")
    summary = {}
    for label, act in agents:
        if mode == "agent_real":
            results, recordings = evaluate_policy(hparams, act, seed, num_debug_videos, final=True)
        elif mode == "agent_simulated":
            simulated_env = SimulatedBatchEnv(model, store, hparams.eval_batch_size, action_space,
                                              reward=hparams.simulated_reward)
            results, recordings = evaluate_in_world_model(hparams, act, simulated_env, seed,
                                                                     num_debug_videos)
        else:
            epochs = sorted({e.epoch for e in store.episodes if data_epochs is None or e.epoch in data_epochs})
            # Only data the model was not trained on measures it as SimPLe did: in a loop run,
            # data/epoch_{K+1} for the world model of epoch K.
            logging.info("Reward accuracy of %s on %s, data epochs %s", wm_dir, data_dir, epochs)
            results = reward_accuracy(model, store, hparams.reward_accuracy_lengths,
                                                 hparams.reward_accuracy_rollouts, 1.0, seed, epochs=epochs)
            recordings = {}
        summary[label] = results
        if video_dir and recordings:
            paths = write_videos(video_dir, f"{mode}_{label}", recordings)
            logging.info("Wrote %d videos for %s", len(paths), label)
    return summary
