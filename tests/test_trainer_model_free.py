import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import assert_one_line_error, run_module_saying_if_tensorflow_loaded
from rlkit import cli as cli_module
from rlkit.errors import UserError
from rlkit.hparams import create_hparams
from rlkit.rl.loops.model_free import train

TRAINER = "rlkit.rl.trainer_model_free"
TINY = ["--hparams_set=rlmf_tiny"]


def saved_env_steps(output_dir):
    reader = tf.train.load_checkpoint(os.path.join(output_dir, "checkpoints"))
    return int(reader.get_tensor("env_steps/.ATTRIBUTES/VARIABLE_VALUE"))


def scalar_tags(event_dir):
    accumulator = EventAccumulator(event_dir)
    accumulator.Reload()
    return accumulator, set(accumulator.Tags()["tensors"]) | set(accumulator.Tags()["scalars"])


def test_rlmf_tiny_on_pong_writes_checkpoints_events_and_policy(rlmf_tiny_run):
    out, stderr = rlmf_tiny_run  # python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_tiny
    assert "128/128 steps (100%) | iteration 4/4" in stderr
    assert "ETA" in stderr and "steps/s" in stderr
    for name in ("hparams.json", "run.json", "operative_config.gin", "command.txt", "policy/saved_model.pb"):
        assert os.path.exists(os.path.join(out, name)), name
    assert "ppo/Adam.amsgrad = False" in open(os.path.join(out, "operative_config.gin")).read()  # the optimizer
    assert json.load(open(os.path.join(out, "hparams.json")))["ppo"]["adam_beta1"] == 0.85  # SimPLe's PPO
    # The code that made the run: this checkout's commit, whether rlkit/ had uncommitted changes,
    # the library versions and the CPU.
    (record,) = json.load(open(os.path.join(out, "provenance.json")))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(cli_module.__file__)))
    git = lambda *args: subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True).stdout  # noqa: E731
    assert record["commit"] == git("rev-parse", "HEAD").strip() and len(record["commit"]) == 40
    assert record["dirty"] == bool(git("status", "--porcelain", "--", "rlkit", "setup.py").strip())
    assert record["tensorflow"] == tf.__version__ and record["numpy"] == np.__version__
    assert record["python"] == sys.version.split()[0] and record["cpu"]
    cpu_flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    assert record["native_bfloat16"] == ("amx_bf16" in cpu_flags or "avx512_bf16" in cpu_flags)
    assert len(glob.glob(os.path.join(out, "checkpoints", "ckpt-*.index"))) == 3  # keep_checkpoints
    assert saved_env_steps(out) == 128

    train_events, tags = scalar_tags(os.path.join(out, "train"))
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
                "losses/clip_fraction", "charts/learning_rate", "charts/steps_per_second"):
        assert tag in tags, tag
    steps = [event.step for event in train_events.Tensors("losses/policy_loss")]
    assert steps == [32, 64, 96, 128]
    eval_events, eval_tags = scalar_tags(os.path.join(out, "eval"))
    # The same evaluation tags as the SimPLe loop's, at env steps.
    assert {f"mean_reward/eval/sampling_temp_{t}_max_noops_{n}_{kind}" for t in (0.0, 1.0) for n in (8, 0)
            for kind in ("clipped", "unclipped")} == {tag for tag in eval_tags if tag.startswith("mean_reward/")}
    # ... and each evaluation's spread beside its mean.
    assert "episodes/eval/sampling_temp_0.0_max_noops_0_std_unclipped" in eval_tags, eval_tags
    assert [e.step for e in eval_events.Tensors("mean_reward/eval/sampling_temp_0.0_max_noops_0_clipped")] == [64, 128]


def test_exported_policy_acts_without_rlkit(rlmf_tiny_run, tmp_path):
    out, _ = rlmf_tiny_run
    script = f"""
import sys
import numpy as np
import tensorflow as tf
policy = tf.saved_model.load({os.path.join(out, "policy")!r})
frames = np.random.default_rng(0).integers(0, 255, (3, 4, 105, 80, 3)).astype(np.uint8)
greedy = policy.act(frames, 0.0)
again = policy.act(frames, 0.0)
sampled = policy.act(frames, 1.0)
assert greedy["action"].shape == (3,) and greedy["value"].shape == (3,) and greedy["log_prob"].shape == (3,)
assert np.array_equal(greedy["action"], again["action"])
assert set(sampled["action"].numpy()) <= set(range(6))
serving = policy.signatures["serving_default"](observation=frames, temperature=tf.constant(0.0))
assert np.array_equal(serving["action"], greedy["action"])
assert not any(name == "rlkit" or name.startswith("rlkit.") for name in sys.modules)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=str(tmp_path), timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_killed_run_resumes_with_the_step_count_continuing(cli, tmp_path):
    args = [*TINY, "--hparams=num_env_steps=384"]  # 12 iterations of 32 steps
    out = str(tmp_path / "killed")
    process = subprocess.Popen([sys.executable, "-m", TRAINER, *args, f"--output_dir={out}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not glob.glob(os.path.join(out, "checkpoints", "ckpt-3.index")):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = saved_env_steps(out)  # the last checkpoint the kill left whole
    assert 32 <= killed_at < 384
    # As if the run had started under another commit: the resume says so and keeps both records.
    provenance = os.path.join(out, "provenance.json")
    (started,) = json.load(open(provenance))
    json.dump([dict(started, commit="0123456789" * 4, dirty=False)], open(provenance, "w"))

    resumed = cli(TRAINER, *args, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    warnings = [line for line in resumed.stderr.splitlines() if "keeps both records" in line]
    assert len(warnings) == 1 and f"not 0123456 as its last part ran" in warnings[0], resumed.stderr[-3000:]
    first, second = json.load(open(provenance))
    assert first["commit"] == "0123456789" * 4 and second["commit"] == started["commit"]
    assert f"at iteration {killed_at // 32}, {killed_at} env steps" in resumed.stderr
    assert f"{killed_at + 32}/384 steps" in resumed.stderr  # the counter continues
    assert saved_env_steps(out) == 384  # as many as a run never killed
    accumulator, _ = scalar_tags(os.path.join(out, "train"))
    assert max(event.step for event in accumulator.Tensors("losses/policy_loss")) == 384

    # A rerun of the finished run trains nothing and writes nothing: no new, empty event files, no
    # record of this code (the run was made by the code its records name), and no TensorFlow loaded.
    assert json.load(open(os.path.join(out, "eval", "final.json")))["env_steps"] == 384
    def run_files():
        paths = glob.glob(os.path.join(out, "**", "*"), recursive=True)
        return {path: open(path, "rb").read() for path in paths if os.path.isfile(path)}
    before = run_files()
    rerun = run_module_saying_if_tensorflow_loaded(TRAINER, *args, f"--output_dir={out}")
    assert rerun.returncode == 0 and "The run is done" in rerun.stderr, rerun.stderr[-3000:]
    assert rerun.stdout.strip() == "tensorflow loaded: False", rerun.stdout
    assert run_files() == before


def test_a_run_killed_in_an_evaluation_makes_it_up_on_resume_and_one_killed_after_it_does_not_repeat_it(
        tmp_path, monkeypatch):
    """The checkpoint of an evaluation point is written before its evaluation (minutes on MinAtar)
    and again once it is recorded: a kill in between leaves no gap in the curve, a kill after it
    no evaluation twice."""
    from rlkit.rl.loops import evaluation

    def eval_steps(out):
        accumulator, tags = scalar_tags(os.path.join(out, "eval"))
        (tag,) = [tag for tag in tags if tag.startswith("mean_reward/eval/sampling_temp_0.0")
                  and tag.endswith("_unclipped")]
        return sorted(event.step for event in accumulator.Tensors(tag))

    hparams = create_hparams("rlmf_cartpole", "num_env_steps=1024,eval_every_iterations=2,"
                             "checkpoint_every_iterations=2,eval_step_limit=50")  # 4 iterations of 8 x 32 steps
    real_evaluate_policy = evaluation.evaluate_policy

    def killed(*args, **kwargs):
        raise KeyboardInterrupt
    killed_in = str(tmp_path / "killed_in_evaluation")
    monkeypatch.setattr(evaluation, "evaluate_policy", killed)
    with pytest.raises(KeyboardInterrupt):
        train(hparams, killed_in, seed=0)
    assert saved_env_steps(killed_in) == 512  # checkpointed, not evaluated
    monkeypatch.setattr(evaluation, "evaluate_policy", real_evaluate_policy)
    assert train(hparams, killed_in, seed=0)["env_steps"] == 1024
    assert eval_steps(killed_in) == [512, 1024]

    def kill_after(env_steps, main_return):
        raise KeyboardInterrupt
    killed_after = str(tmp_path / "killed_after_evaluation")
    with pytest.raises(KeyboardInterrupt):
        train(hparams, killed_after, seed=0, on_evaluation=kill_after)
    assert train(hparams, killed_after, seed=0)["env_steps"] == 1024
    assert eval_steps(killed_after) == [512, 1024]


def test_same_seed_same_returns(tmp_path):
    hparams = create_hparams("rlmf_cartpole", "num_env_steps=1024,eval_every_iterations=2")
    first = train(hparams, str(tmp_path / "a"), seed=3)
    second = train(hparams, str(tmp_path / "b"), seed=3)
    other = train(hparams, str(tmp_path / "c"), seed=4)
    assert first == second
    assert first != other


def test_bad_input_gets_one_line_and_keeps_what_exists(cli, tmp_path):
    out = str(tmp_path / "run")
    # Unknown sets, misspelt or mistyped overrides, unknown games and learners go through the same
    # cli.start_run as the loop's, whose tests (and test_bad_input.py's) run them through a command.
    assert_one_line_error(cli(TRAINER, *TINY, "--hparams=ppo.policy_network=resnet", f"--output_dir={out}"),
                          "unknown model 'resnet'")
    assert_one_line_error(cli(TRAINER, *TINY, "--output_dir=/proc/rlkit/run"), "cannot create output dir")
    assert not os.path.exists(out)  # every mistake above was refused before anything was written

    # A checkpoint written by another network (Breakout has 4 actions, Pong 6) is refused.
    one_iteration = "--hparams=num_env_steps=32"
    assert cli(TRAINER, *TINY, one_iteration, f"--output_dir={out}").returncode == 0
    other = str(tmp_path / "breakout")
    assert cli(TRAINER, *TINY, "--hparams=game=breakout,num_env_steps=32", f"--output_dir={other}").returncode == 0
    shutil.rmtree(os.path.join(out, "checkpoints"))
    shutil.copytree(os.path.join(other, "checkpoints"), os.path.join(out, "checkpoints"))
    os.remove(os.path.join(out, "eval", "final.json"))  # not finished, so its checkpoint is read
    before = {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "**", "*"), recursive=True)}
    assert_one_line_error(cli(TRAINER, *TINY, one_iteration, f"--output_dir={out}"), "cannot restore checkpoint",
                          "ppo learner")
    after = {p: os.path.getmtime(p) for p in glob.glob(os.path.join(out, "**", "*"), recursive=True)
             if not p.endswith("command.txt")}
    assert after == {p: t for p, t in before.items() if not p.endswith("command.txt")}


def test_resume_reads_the_saved_hparams_not_the_registry(cli, tmp_path, monkeypatch):
    """A run keeps resuming after the registered set it came from changed in code."""
    from rlkit.hparams import registry
    from rlkit.rl.loops import model_free

    out = str(tmp_path / "run")
    args = [*TINY, "--hparams=num_env_steps=64,ppo.learning_rate=3e-4", f"--output_dir={out}"]
    assert cli(TRAINER, *args).returncode == 0
    saved = json.load(open(os.path.join(out, "hparams.json")))
    assert saved["ppo"]["learning_rate"] == 3e-4  # nested, as the component receives it

    # The set changes in code (a new key, another default): the run still resumes as it was.
    original = registry._SETS._builders["rlmf_tiny"]

    def changed():
        hparams = original()
        hparams.add_hparam("new_knob", 1)
        hparams.ppo.gamma = 0.5
        return hparams
    monkeypatch.setitem(registry._SETS._builders, "rlmf_tiny", changed)
    assert registry.get_hparams("rlmf_tiny").ppo.gamma == 0.5
    hparams = cli_module.run_hparams(out, "rlmf_tiny", True, "num_env_steps=64,ppo.learning_rate=3e-4")
    assert hparams.values() == saved and "new_knob" not in hparams
    result = model_free.train(hparams, out, seed=0)  # resumes: nothing left to do
    assert result["env_steps"] == 64
    # Asking the saved run for other values is refused, naming the value.
    with pytest.raises(UserError, match="other hparams.*num_env_steps"):
        cli_module.run_hparams(out, "rlmf_tiny", True, "num_env_steps=128")
    with pytest.raises(UserError, match="holds a run of set 'rlmf_tiny', not 'rlmf_cartpole'"):
        cli_module.run_hparams(out, "rlmf_cartpole", True, "")
    # A rerun naming no set resumes the run too.
    assert cli_module.run_hparams(out, "rlmf_base", False, "").values() == saved
    # How the run is spread over machines may change; hparams.json then records the new value.
    hparams = cli_module.run_hparams(out, "rlmf_tiny", True, "num_env_steps=64,ppo.learning_rate=3e-4,real_num_workers=2")
    assert hparams.real_num_workers == 2
    cli_module.save_run(out, hparams, "rlmf_tiny", "num_env_steps=64,ppo.learning_rate=3e-4,real_num_workers=2")
    with open(os.path.join(out, "hparams.json")) as f:
        assert json.load(f) == dict(saved, real_num_workers=2)


def test_learning_rate_schedule_is_applied(tmp_path):
    hparams = create_hparams("rlmf_tiny", "ppo.learning_rate_schedule=linear,ppo.learning_rate=1e-3")
    train(hparams, str(tmp_path), seed=0)
    events, _ = scalar_tags(os.path.join(str(tmp_path), "train"))
    rates = [float(tf.make_ndarray(e.tensor_proto)) for e in events.Tensors("charts/learning_rate")]
    np.testing.assert_allclose(rates, [1e-3, 7.5e-4, 5e-4, 2.5e-4], rtol=1e-5)
