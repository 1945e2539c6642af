"""Bad input, given as users give it.

Each case runs a command the way a user does and must end within seconds, non-zero, with one
`error:` line naming the cause, no traceback, and every file already in its output directory as
it was. Cases of the same kind for single commands live beside them (test_trainer_*.py,
test_evaluator.py, test_gcs.py, test_player.py with the world-model cases, test_collect_inspect.py);
this file holds the hparam checks, the env checks, damaged data, GCS without a network, the
signals and quiet output.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

import rlkit
from conftest import assert_one_line_error, collect_random_pong, run_module
from rlkit.errors import Stopped, UserError, signals_held
from rlkit.hparams import create_hparams, registry
from rlkit.hparams.checks import check_hparams, rules_of
from rlkit.hparams.hparam import HParams

LOOP = "rlkit.rl.trainer_model_based"
MODEL_FREE = "rlkit.rl.trainer_model_free"
WORLD_MODEL = "rlkit.rl.trainer_world_model"
COLLECT = "rlkit.rl.collect"
EVALUATOR = "rlkit.rl.evaluator"
PLAYER = "rlkit.rl.player"
RLMB_TINY = "--loop_hparams_set=rlmb_tiny"
RLMF_TINY = "--hparams_set=rlmf_tiny"
UNREACHABLE = {"STORAGE_EMULATOR_HOST": "http://127.0.0.1:9", "RLKIT_GCS_RETRY_SECONDS": "2"}


def files_of(directory):
    """Every file under `directory` with its size and modification time."""
    found = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            stat = os.stat(path)
            found[os.path.relpath(path, directory)] = (stat.st_size, stat.st_mtime_ns)
    return found


def run_with_env(module, *args, env=None):
    """`run_module` with more environment variables, and TensorFlow's log level left as a user's."""
    user_env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120,
                          env={**user_env, **(env or {})})


# Values each hparam check refuses, through each command, before an output dir exists.
@pytest.mark.parametrize("module, args, fragments", [
    # Found by hand: a ZeroDivisionError, a segmentation fault and a hang before the checks.
    (LOOP, [RLMB_TINY, "--loop_hparams=epochs=0"], ["hparam 'epochs' = 0", "an integer > 0"]),
    (LOOP, [RLMB_TINY, "--loop_hparams=eval_batch_size=0"], ["hparam 'eval_batch_size' = 0"]),
    (MODEL_FREE, [RLMF_TINY, "--hparams=frame_height=0"], ["hparam 'frame_height' = 0"]),
    # Values that only fit together, and values checked against the network.
    (LOOP, [RLMB_TINY, "--loop_hparams=world_model.filter_double_steps=9"], ["at most num_compress_steps"]),
    (MODEL_FREE, [RLMF_TINY, "--hparams=ppo.minibatch_time_steps=0,ppo.num_minibatches=100000"],
     ["'ppo.num_minibatches' = 100000", "num_envs x rollout_length"]),
    (MODEL_FREE, [RLMF_TINY, "--hparams=ppo.minibatch_time_steps=100"],
     ["'ppo.minibatch_time_steps' = 100", "at most rollout_length x optimization_epochs (48)"]),
    (MODEL_FREE, ["--hparams_set=rlmf_nature", "--hparams=frame_height=20"],
     ["frames of 20x84 are too small for policy_network='nature_cnn'"]),
    (WORLD_MODEL, [RLMB_TINY, "--data_dir=/nonexistent"], ["not a world-model set"]),
    (COLLECT, ["--hparams_set=collect_random_tiny", "--hparams=max_num_noops=-1"], ["'max_num_noops' = -1"]),
    (LOOP, ["--loop_hparams_set=rssm_tiny"], ["not a SimPLe loop set"]),
    (MODEL_FREE, ["--hparams_set=next_frame_basic_deterministic"], ["not a model-free training set"]),
    (MODEL_FREE, [RLMF_TINY, "--hparams=game=CartPole-v1"], ["cannot take CartPole-v1's observations", "mlp"]),
    (LOOP, ["--hparams_set=dreamer_v2_tiny", "--hparams=frame_stack_size=4"], ["frame_stack_size=4"]),
    (LOOP, ["--hparams_set=dreamer_v2_tiny", "--offline_data_dir=/nonexistent"], ["does not exist"]),
    # Found by hand: the Dreamer loop ran in float32 while its hparams.json said mixed precision.
    (LOOP, ["--hparams_set=dreamer_v2_tiny", "--hparams=world_model.mixed_precision=true"],
     ["'world_model.mixed_precision' = True", "float32 only"]),
])
def test_bad_hparams_get_one_line_and_write_nothing(module, args, fragments, tmp_path):
    out = tmp_path / "run"
    assert_one_line_error(run_module(module, *args, f"--output_dir={out}"), *fragments)
    assert not out.exists()


# Found by hand: each analysis command met a directory without a run, or epochs that are not numbers,
# with a traceback.
@pytest.mark.parametrize("module, args, fragments", [
    ("rlkit.rl.analysis.check_rewards", ["--run={empty}"], ["no rlkit run in --run=", "trainer_model_based output dir"]),
    ("rlkit.rl.analysis.check_model_drift", ["--run={empty}/missing"], ["no rlkit run in --run="]),
    ("rlkit.rl.analysis.check_simulated_reward", ["--run={empty}"], ["no rlkit run in --run="]),
    ("rlkit.rl.analysis.check_episode_ends", ["--wm_dir={empty}", "--data_dir={empty}"],
     ["no world model in --wm_dir=", "trainer_world_model output dir"]),
    ("rlkit.rl.analysis.check_model_drift", ["--run={empty}", "--data_epochs=last"], ["--data_epochs=last", "numbers"]),
    ("rlkit.rl.analysis.minatar_results", ["--docs={empty}"], ["has no results.md", "repository's root"]),
    ("rlkit.rl.analysis.minatar_results", ["--runs={empty}/runs", "--docs={empty}"], ["does not exist", "minatar_experiment.sh"]),
])
def test_an_analysis_command_pointed_at_no_run_gets_one_line(module, args, fragments, tmp_path):
    assert_one_line_error(run_module(module, *(arg.format(empty=tmp_path) for arg in args)), *fragments)
    assert not os.listdir(tmp_path)


# The same checks in process (every command applies overrides through them, as above).
@pytest.mark.parametrize("set_name, overrides, message", [
    ("rlmb_tiny", "ppo.gamma=1.5", r"^hparam 'ppo\.gamma' = 1\.5: must be a discount in \[0, 1\]$"),
    ("rlmb_tiny", "ppo.clip_coef=0.0", r"^hparam 'ppo\.clip_coef' = 0\.0: must be > 0$"),
    ("rlmb_tiny", "simulated_temperature=-1.0", r"'simulated_temperature' = -1\.0: must be >= 0"),
    ("rlmb_tiny", "world_model.bit_flip_probability=2.0", r"'world_model\.bit_flip_probability' = 2\.0: .*\[0, 1\]"),
    ("rlmb_tiny", "world_model.num_context_frames=0", r"'world_model\.num_context_frames' = 0: must be an integer > 0"),
    ("rlmb_tiny", "eval_sampling_temps=[]", r"'eval_sampling_temps' = \[\]: must be a non-empty list"),
    ("rlmb_tiny", "eval_sampling_temps=[1.0,-0.5]", r"must be a list of values >= 0"),
    ("rlmb_tiny", "reward_accuracy_lengths=[4,0]", r"'reward_accuracy_lengths' = \[4, 0\]: must be a list of values"),
    ("rlmb_tiny", "world_model.learning_rate_schedule=cosine", r"'cosine': must be one of .*'linear_warmup'"),
    ("rlmf_tiny", "ppo.learning_rate_schedule=linear_warmup", r"must be one of 'constant', 'linear'$"),
    ("rlmf_tiny", "ppo.dropout=1.5", r"'ppo\.dropout' = 1\.5: must be in \[0, 1\]"),
    ("rlmf_tiny", "num_envs=-2", r"'num_envs' = -2: must be an integer > 0"),
    ("rlmb_tiny", "collection=expert", r"'collection' = 'expert': must be one of 'learner', 'policy'"),
    ("rlmb_tiny", "world_model.single_frame=True,world_model.recurrent_state_size=0",
     r"'world_model\.single_frame' = True: needs recurrent_state_size > 0"),
    ("rlmb_tiny", "num_real_env_steps=1", r"'num_real_env_steps' = 1: must be at least epochs"),
    ("rlmb_tiny", "world_model.end_target=first_frame",
     r"'world_model\.end_target' = 'first_frame': must be one of 'last_frame', 'ending_step'"),
    ("rlmb_tiny", "world_model.rewarded_window_share=0.5,world_model.ending_window_share=0.6",
     r"'world_model\.ending_window_share' = 0\.6: with rewarded_window_share \(0\.5\) must add up to at most 1"),
    # A nested set of another family, or a family rlkit does not have (issue 65).
    ("rlmb_tiny", "world_model=rssm_tiny", r"^hparam 'world_model' = '<a rssm set>': must be a next_frame set here"),
    ("rlmf_tiny", "ppo=dqn_nature_params", r"^hparam 'ppo' = '<a dqn set>': must be a ppo set here"),
    ("dreamer_v2_tiny", "actor_critic=ppo_original_params", r"'actor_critic' = '<a ppo set>': must be a dreamer_actor"),
    ("rlmf_tiny", "ppo.family=sac", r"^hparam 'ppo\.family' = 'sac': must be one of "),
])
def test_rule_messages_name_the_hparam_its_value_and_what_is_allowed(set_name, overrides, message):
    with pytest.raises(UserError, match=message):
        create_hparams(set_name, overrides)


def test_a_name_two_families_share_follows_each_familys_rule():
    """learning_rate_schedule means a PPO schedule in ppo's set and a world model's in world_model's."""
    create_hparams("rlmb_tiny", "world_model.learning_rate_schedule=linear_warmup,ppo.learning_rate_schedule=linear")
    with pytest.raises(UserError, match=r"'ppo\.learning_rate_schedule' = 'linear_warmup'"):
        create_hparams("rlmb_tiny", "ppo.learning_rate_schedule=linear_warmup")
    with pytest.raises(UserError, match=r"'world_model\.learning_rate_schedule' = 'linear'"):
        create_hparams("rlmb_tiny", "world_model.learning_rate_schedule=linear")


@pytest.fixture
def model_free_run(rlmf_tiny_run):
    """A tiny Pong run of the model-free trainer: a run dir with a policy."""
    return rlmf_tiny_run[0]


def test_a_policy_for_another_game_gets_one_line(model_free_run, tmp_path):
    """Evaluating a Pong policy (6 actions) on Breakout (4 actions) used to hang. The policy is
    copied away from its run, so nothing but the policy itself says which game it plays."""
    shutil.copytree(os.path.join(model_free_run, "policy"), tmp_path / "policy")
    metrics = tmp_path / "metrics"
    result = run_module(EVALUATOR, RLMF_TINY, "--hparams=game=breakout", f"--policy_dir={tmp_path / 'policy'}",
                        f"--eval_metrics_dir={metrics}")
    assert_one_line_error(result, "was trained for 6 actions, but this env has 4")
    assert not metrics.exists()


def test_a_run_dir_keeps_its_files_after_a_bad_override(model_free_run):
    before = files_of(model_free_run)
    result = run_module(MODEL_FREE, RLMF_TINY, "--hparams=num_envs=0", f"--output_dir={model_free_run}")
    assert_one_line_error(result, "hparam 'num_envs' = 0")
    assert files_of(model_free_run) == before


def test_damaged_shards_are_not_training_data(tmp_path):
    data_dir = tmp_path / "data"
    collect_random_pong(str(data_dir), num_steps=20)
    shard = data_dir / "epoch_000" / "shard_00000.npz"
    shard.write_bytes(shard.read_bytes()[:300])  # truncated, as on a full disk
    out = tmp_path / "model"
    result = run_module(WORLD_MODEL, f"--data_dir={data_dir}", f"--output_dir={out}")
    assert_one_line_error(result, "no readable shards")
    assert not out.exists()
    assert os.listdir(data_dir / "epoch_000") == ["shard_00000.npz.damaged"]  # set aside once, for every reader


@pytest.mark.parametrize("module, args", [
    (EVALUATOR, [RLMF_TINY, "--policy_dir=gs://rlkit-test/run/policy", "--eval_metrics_dir={tmp}/metrics"]),
    (MODEL_FREE, [RLMF_TINY, "--output_dir=gs://rlkit-test/run"]),
    (WORLD_MODEL, ["--data_dir=gs://rlkit-test/run/data", "--output_dir={tmp}/model"]),
])
def test_an_unreachable_storage_gets_one_line_within_seconds(module, args, tmp_path):
    """No network: one line after a short retry budget, not minutes of silent retries."""
    started = time.monotonic()
    result = run_with_env(module, *[arg.format(tmp=tmp_path) for arg in args], env=UNREACHABLE)
    assert_one_line_error(result, "cannot reach Google Cloud Storage", "check the network")
    assert time.monotonic() - started < 30
    assert os.listdir(tmp_path) == []


def test_every_hparam_of_every_registered_set_has_a_rule_and_keeps_it():
    def unruled(hparams, prefix="", top_level=True):
        rules = rules_of(hparams, top_level)
        for name, value in hparams.values().items():
            if isinstance(hparams.get(name), HParams):
                yield from unruled(hparams.get(name), f"{prefix}{name}.", top_level=False)
            elif name not in rules:
                yield prefix + name
    rlkit_sets = [name for name in registry.list_hparams()
                  if registry._SETS.get(name).__module__.startswith("rlkit.")]  # not the tests' own
    assert len(rlkit_sets) > 20
    for set_name in rlkit_sets:
        hparams = create_hparams(set_name)
        check_hparams(hparams)
        names = list(unruled(hparams))
        assert not names, f"{set_name}: no rule in its family (rlkit.hparams.checks.register_family) for {names}"


def start_and_signal_when(args, marker, signum):
    """Starts a command as a user's shell does, sends it `signum` once a stderr line holds
    `marker`; returns the exit status, all of stderr and the seconds from the signal to the exit."""
    user_env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    # As from a terminal: pytest-xdist's workers ignore SIGINT, and children inherit that.
    process = subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=user_env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    watchdog = threading.Timer(180, process.kill)
    watchdog.start()
    lines = []
    for line in process.stderr:
        lines.append(line)
        if marker in line:
            break
    signaled = time.monotonic()
    process.send_signal(signum)
    lines.append(process.stderr.read())
    process.wait()
    watchdog.cancel()
    return process.returncode, "".join(lines), time.monotonic() - signaled


def crash_report(stderr):
    """What to show when a stopped command did not exit as it should: a crash's thread dump
    (faulthandler's, without its long list of extension modules), else the end of stderr."""
    if "Fatal Python error" in stderr:
        return stderr[stderr.index("Fatal Python error"):].split("Extension modules:")[0][:8000]
    return stderr[-3000:]


def not_rlkit_lines(stderr):
    """The lines of a command's stderr that are not rlkit's own: absl's format, from rlkit's files."""
    package = os.path.dirname(rlkit.__file__)
    rlkit_files = {os.path.basename(path) for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True)}
    return [line for line in stderr.splitlines()
            if not (match := re.match(r"^[IWE]\d{4} [\d:.]+ +\d+ (\w+\.py):\d+\] ", line))
            or match.group(1) not in rlkit_files]


def test_ctrl_c_and_sigterm_stop_with_one_line_and_the_run_resumes_and_it_is_quiet(tmp_path):
    out = str(tmp_path / "run")
    args = [MODEL_FREE, RLMF_TINY, "--hparams=num_env_steps=1000000", f"--output_dir={out}"]
    status, stderr, seconds = start_and_signal_when(args, "iteration 3/", signal.SIGINT)
    assert status == 130 and seconds < 20, crash_report(stderr)
    stop_line = f"stopped by Ctrl-C: rerun the same command to resume the run in {out}"
    # Nothing but rlkit's progress lines and the stop line: no TensorFlow start-up lines, no traceback.
    assert not_rlkit_lines(stderr) == [stop_line], stderr[-3000:]
    saved = files_of(out)
    assert "hparams.json" in saved and any(name.startswith("checkpoints") for name in saved)

    status, stderr, seconds = start_and_signal_when(args, "steps (", signal.SIGTERM)
    assert status == 143 and seconds < 20, crash_report(stderr)
    assert re.search(r"at iteration [1-9]\d*, \d+ env steps", stderr)  # resumed, not restarted
    stop_line = f"stopped by SIGTERM: rerun the same command to resume the run in {out}"
    assert not_rlkit_lines(stderr) == [stop_line], stderr[-3000:]
    assert not [name for name in files_of(out) if os.path.basename(name).startswith(".tmp")]


STOPPED_INSIDE_TENSORFLOW = """
import os, signal, sys, time
from rlkit.errors import run_command

def main(argv):
    try:
        os.kill(os.getpid(), signal.{name})
        time.sleep(30)
    except KeyboardInterrupt:  # as TensorFlow's tracing turns an interrupt in its own Python into its error
        raise RuntimeError("MISMATCH of original and normalized active exception types")

run_command(main)
"""


@pytest.mark.parametrize("name, status, said", [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")])
def test_a_signal_that_tensorflow_turns_into_its_own_error_still_stops_with_one_line(name, status, said):
    process = subprocess.run([sys.executable, "-c", STOPPED_INSIDE_TENSORFLOW.format(name=name)],
                             capture_output=True, text=True, timeout=60,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (process.returncode, process.stderr) == (
        status, f"stopped by {said}: nothing was left half-written\n"), process.stderr[-3000:]


STOPPED_INSIDE_A_FINALIZER = """
import gc, os, signal, sys, time
from rlkit.errors import run_command

class FreedLater:  # as TensorFlow's traced functions, freed by the garbage collector
    def __del__(self):
        os.kill(os.getpid(), signal.{name})
        time.sleep(0.1)  # the handler runs here, inside __del__, where an exception is dropped

def main(argv):
    FreedLater()
    gc.collect()
    time.sleep(30)
    print("went on")

run_command(main)
"""


@pytest.mark.parametrize("name, status, said", [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")])
def test_a_signal_that_lands_in_a_finalizer_still_stops_the_command(name, status, said):
    # The sixty-fourth session's SimPLe run went on after its SIGTERM landed in a traced function's __del__.
    started = time.monotonic()
    process = subprocess.run([sys.executable, "-c", STOPPED_INSIDE_A_FINALIZER.format(name=name)],
                             capture_output=True, text=True, timeout=60,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (process.returncode, process.stderr, process.stdout) == (
        status, f"stopped by {said}: nothing was left half-written\n", ""), process.stderr[-3000:]
    assert time.monotonic() - started < 25  # stopped in the sleep, not after it


@pytest.mark.parametrize("signum, stop", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Stopped)])
def test_a_signal_during_a_checkpoint_save_stops_the_command_once_the_save_is_done(signum, stop):
    # Handlers as a command has them (pytest-xdist's workers ignore SIGINT).
    def raise_stopped(signum, frame):
        raise Stopped()

    handlers = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: raise_stopped}
    previous = {number: signal.signal(number, handler) for number, handler in handlers.items()}
    ran = []
    try:
        with pytest.raises(stop):
            with signals_held():
                os.kill(os.getpid(), signum)
                time.sleep(0.05)  # long enough for the handler to run, as it would at once unheld
                ran.append("the rest of the save")
            ran.append("what follows the save")
        assert ran == ["the rest of the save"]
        assert all(signal.getsignal(number) is handler for number, handler in handlers.items())
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def test_tensorflow_logs_show_when_asked_for(tmp_path):
    # A mistake found once TensorFlow has loaded: the network does not fit the frames.
    loud = run_with_env(MODEL_FREE, "--hparams_set=rlmf_nature", "--hparams=frame_height=20",
                        f"--output_dir={tmp_path / 'run'}", env={"RLKIT_TF_LOGS": "1"})
    assert_one_line_error(loud, "too small")
    assert "oneDNN" in loud.stderr, loud.stderr[-3000:]


def test_tensorflow_and_keras_load_without_pandas_matplotlib_or_scipy():
    """What TensorFlow and Keras import only where installed stays out of every command's start
    (~1.5 s here). Keras is imported inside TensorFlow's import, after TensorFlow has looked it
    up: rlkit's lean Keras import must outlast that lookup (until 2026-11-26 it did not)."""
    for name in ("pandas", "matplotlib", "scipy"):
        pytest.importorskip(name)
    code = ("import sys, rlkit, tensorflow; "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'scipy') if m in sys.modules)); "
            "import pandas, matplotlib.pyplot, scipy.sparse; print('imported when asked')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines() == ["[]", "imported when asked"], result.stderr[-3000:]


@pytest.mark.parametrize("asked", [None, "0"])
def test_a_script_that_imports_tensorflow_first_is_told_when_onednn_is_off(asked):
    """rlkit turns oneDNN on only when imported before TensorFlow; where TensorFlow came first and
    left it off (CPUs without AVX-512), one line says so, unless the user chose either way."""
    env = {key: value for key, value in os.environ.items() if key != "TF_ENABLE_ONEDNN_OPTS"}
    if asked is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = asked
    code = "import tensorflow, rlkit.startup; print(rlkit.startup.onednn_enabled())"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    told = [line for line in result.stderr.splitlines() if line.startswith("rlkit: ")]
    off_unasked = asked is None and result.stdout.strip() == "False"
    assert told == (["rlkit: TensorFlow was imported before rlkit, so its oneDNN kernels are off on this CPU "
                     "(training up to 1.5x slower): import rlkit first, or export TF_ENABLE_ONEDNN_OPTS=1 "
                     "(=0 keeps them off without this line)."] if off_unasked else []), result.stderr[-3000:]
    if asked == "0":
        assert result.stdout.strip() == "False"


def test_minatar_loads_without_its_displays_plotting_libraries():
    """MinAtar imports matplotlib's pyplot and seaborn (scipy, pandas) for a display rlkit never
    opens: ~4 s of every MinAtar command's start. Kept out of its import, quietly; they import
    as usual when asked for afterwards."""
    for name in ("matplotlib", "seaborn", "minatar"):
        pytest.importorskip(name)
    code = ("import sys, rlkit; from rlkit.data_generators.minatar import frame_shape; "
            "print(frame_shape('minatar/breakout')); "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'scipy', 'seaborn') if m in sys.modules)); "
            "import matplotlib.pyplot, seaborn; print('imported when asked')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines() == ["(10, 10, 4)", "[]", "imported when asked"], result.stderr[-3000:]
    assert result.stderr == "", result.stderr[-3000:]


def test_the_collector_is_back_on_after_tensorflow_loads_and_skips_what_it_loaded():
    """TensorFlow and Keras load with the garbage collector off, and their objects are frozen
    (never scanned again): ~1.3 s of every start. The collector must be on again afterwards, also
    when Keras is imported apart, and collect what a run leaves behind."""
    code = ("import gc, rlkit, tensorflow\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 100_000)\n"
            "import keras\n"
            "print(gc.isenabled())\n"
            "class Cycle: pass\n"
            "a = Cycle(); a.self = a; del a; print(gc.collect() > 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines() == ["True True", "True", "True"], result.stderr[-3000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY says whether Linux has a display")
@pytest.mark.parametrize("args, instead", [
    ([PLAYER, "--mode=real", RLMF_TINY], "--dry_run"),
    (["rlkit.rl.lab", "--mode=enjoy", "--output_dir={tmp}"], "--video_dir=DIR"),
])
def test_a_window_without_a_display_gets_one_line_not_an_invisible_window(args, instead, tmp_path):
    """Found by hand: over ssh without X, SDL fell back to an invisible window (printing its own
    'error: XDG_RUNTIME_DIR ...') and the player waited for keys forever."""
    env = {k: v for k, v in os.environ.items() if k not in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY")}
    start = time.time()
    result = subprocess.run([sys.executable, "-m", *[a.format(tmp=tmp_path) for a in args]], capture_output=True,
                            text=True, timeout=120, env=env)
    assert_one_line_error(result, "no display to open a window on", instead)
    assert time.time() - start < 30 and "XDG_RUNTIME_DIR" not in result.stderr


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = sorted(os.path.relpath(path, ROOT)[:-3].replace("/", ".")
                  for path in glob.glob(os.path.join(ROOT, "rlkit", "rl", "**", "*.py"), recursive=True)
                  if '__name__ == "__main__"' in open(path).read()) + ["rlkit.hparams"]


@pytest.mark.parametrize("args, says", [(["--hparams_sett=rlmf_base"], "Unknown command line flag 'hparams_sett'"),
                                        (["--seed=abc"], "flag --seed=abc: invalid literal")])
def test_a_bad_flag_is_absl_s_one_line_and_status_1(args, says):
    """A flag absl cannot parse: absl's own line and status 1 (only help ends with 0), no traceback."""
    result = run_module("rlkit.rl.trainer_model_free", *args, timeout=120)
    assert result.returncode == 1, result.returncode
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.startswith(f"FATAL Flags parsing error: {says}"), result.stderr
    assert result.stdout == "", result.stdout


@pytest.mark.parametrize("module", COMMANDS)
def test_help_lists_every_flag_a_user_types(module):
    """absl's --help lists the main module's key flags: the shared ones from rlkit/cli.py too."""
    path = module.replace(".", "/") + ("/__main__.py" if module == "rlkit.hparams" else ".py")
    source = open(os.path.join(ROOT, path)).read()
    expected = set(re.findall(r"DEFINE_\w+\(\s*\"(\w+)\"", source))
    if "cli.define_flags(" in source:
        expected |= {"hparams_set", "hparams", "loop_hparams_set", "loop_hparams", "gin_files", "gin_bindings", "seed"}
    result = run_module(module, "--help", timeout=120)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 0, result.returncode  # help asked for and shown is a success (absl says 1)
    listed = set(re.findall(r"^  --(?:\[no\])?(\w+)", result.stdout, re.MULTILINE))
    assert expected and expected <= listed, expected - listed
