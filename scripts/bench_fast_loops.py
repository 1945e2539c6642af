"""Issue 64's ratios: the training steps of rlkit's loops in this checkout against another
checkout (the commit before the work), measured side by side in one run.

    git worktree add /tmp/rlkit-before f9adcb7
    python scripts/bench_fast_loops.py --baseline=/tmp/rlkit-before [--parts=dreamer,dreamer_float32,simple] [--rounds=3]

Each round runs every part once in each checkout, alternating (before, after, before, ...), each
in a fresh process that imports that checkout's rlkit and times `--steps` calls after a traced
warm-up; the ratio is taken round by round and the median printed. A checkout runs with the
TensorFlow threads its loop would set (this one's: one thread per op, `one_thread_per_op`;
the baseline's: TensorFlow's defaults).

Parts:
  dreamer          dreamer_v2_minatar's gradient step (DreamerAgent.update) on a batch of Breakout-sized
                   sequences, as the set runs it (this checkout: compute_dtype auto, bfloat16 on a CPU with AMX)
  dreamer_float32  the same with compute_dtype=float32 (this checkout; against the baseline's step)
  simple           one epoch of SimPLe's MinAtar loop (rlmb_minatar_ends on Breakout) through the command, at
                   reduced length (SIMPLE_EPOCH below: 300 world-model steps, 60 PPO iterations in the
                   world model, as many per step as a real epoch's): its world-model and policy stages
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# epochs=1 makes epoch 0 both a longer world-model epoch (x3) and the last (x3 PPO iterations).
SIMPLE_EPOCH = ("game=minatar/breakout,epochs=1,num_real_env_steps=3200,world_model.train_steps=100,"
                "simulated_ppo_iterations=20,eval_batch_size=8,final_eval_batch_size=8")


def worker(part, checkout, steps):
    """Runs in the child: times `part` with `checkout`'s rlkit; prints {"seconds": per step}."""
    sys.path.insert(0, checkout)
    sys.path.insert(1, os.path.join(checkout, "scripts"))
    import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)

    if part.startswith("dreamer"):
        import time

        try:  # the loop's TensorFlow threads, in a checkout that sets them (the checkout's own
            from rlkit.rl.loops.threads import one_thread_per_op  # scripts are on the path here)
            one_thread_per_op()
        except ImportError:
            pass
        from bench_dreamer import build

        overrides = "compute_dtype=float32" if part == "dreamer_float32" else ""
        _, env, _, agent, batch = build("dreamer_v2_minatar", overrides)
        env.close()
        float(agent.update(batch)["model_loss"])
        start = time.perf_counter()
        for _ in range(steps):
            metrics = agent.update(batch)
        float(metrics["model_loss"])
        seconds = (time.perf_counter() - start) / steps
    elif part == "simple":
        import tempfile

        out = tempfile.mkdtemp()
        subprocess.run([sys.executable, "-m", "rlkit.rl.trainer_model_based", "--loop_hparams_set=rlmb_minatar_ends",
                        f"--loop_hparams={SIMPLE_EPOCH}", f"--output_dir={out}/run"], cwd=checkout, check=True,
                       capture_output=True)
        with open(os.path.join(out, "run", "eval_metrics", "epoch_0.json")) as f:
            stages = json.load(f)["stage_seconds"]
        seconds = stages["world_model"] + stages["policy"]
        print(json.dumps({"seconds": seconds, "stages": stages}))
        return
    else:
        raise ValueError(part)
    print(json.dumps({"seconds": seconds}))


def timed(part, checkout, steps):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, __file__, f"--worker={part}", f"--checkout={checkout}", f"--steps={steps}"],
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        sys.exit(f"{part} in {checkout} failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if "stages" in result:
        print(f"  {part} in {checkout}: " + ", ".join(f"{k} {v:.1f} s" for k, v in result["stages"].items()), flush=True)
    return result["seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a checkout of the commit to measure against")
    parser.add_argument("--parts", default="dreamer,dreamer_float32,simple")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.checkout, args.steps)
    if not args.baseline or not os.path.isdir(os.path.join(args.baseline, "rlkit")):
        sys.exit("--baseline=DIR: a checkout of the commit to measure against (git worktree add DIR COMMIT)")
    this = os.path.dirname(HERE)
    for part in args.parts.split(","):
        baseline_part = "dreamer" if part.startswith("dreamer") else part
        before, after = [], []
        for _ in range(args.rounds):
            before.append(timed(baseline_part, args.baseline, args.steps))
            after.append(timed(part, this, args.steps))
        ratios = [b / a for b, a in zip(before, after)]
        if part == "simple":
            print(f"{part}: the epoch's world-model and policy stages {statistics.median(after):.1f} s against the "
                  f"baseline's {statistics.median(before):.1f}; ratio per round {', '.join(f'{r:.2f}' for r in ratios)}; "
                  f"median {statistics.median(ratios):.2f}x", flush=True)
            continue
        print(f"{part}: {1 / statistics.median(after):.2f} steps/s against the baseline's "
              f"{1 / statistics.median(before):.2f} ({statistics.median(after) * 1e3:.1f} ms against "
              f"{statistics.median(before) * 1e3:.1f}); ratio per round "
              f"{', '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}x", flush=True)


if __name__ == "__main__":
    main()
