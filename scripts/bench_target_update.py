"""NAF's soft target update, run every agent step: one compiled call against op by op.

    python scripts/bench_target_update.py [--updates=500] [--repeats=5]

On rlmf_naf_pendulum's networks (Pendulum-v1), times `--updates` soft updates
(target <- rate * online + (1 - rate) * target) (a) with rlkit's `target_updater`, one compiled
call per update, and (b) eagerly, variable by variable, as rlkit did before (three eager ops per
variable). Alternates a and b `--repeats` times and prints each side's median updates/s and a/b.
"""

import argparse
import statistics
import time

import rlkit  # noqa: F401  (before TensorFlow, as the commands import it)
import gymnasium as gym

from rlkit.hparams import create_hparams
from rlkit.rl.learners.learner import build_learner
from rlkit.rl.learners.q_learning import target_updater


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    hparams = create_hparams("rlmf_naf_pendulum")
    env = gym.make(hparams.game)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
    target, online, rate = learner.target_network, learner.network, learner.hparams.target_update_rate
    compiled = target_updater(target, online, rate)

    def eager():
        for target_variable, online_variable in zip(target.variables, online.variables):
            target_variable.assign(rate * online_variable + (1.0 - rate) * target_variable)

    def rate_of(update):
        start = time.perf_counter()
        for _ in range(args.updates):
            update()
        return args.updates / (time.perf_counter() - start)

    compiled(), eager()  # tracing and first calls out of the timings
    rates = {"a": [], "b": []}
    for _ in range(args.repeats):
        rates["a"].append(rate_of(compiled))
        rates["b"].append(rate_of(eager))
    a, b = statistics.median(rates["a"]), statistics.median(rates["b"])
    print(f"{len(target.variables)} variables, rate {rate}, {args.updates} updates x {args.repeats} repeats")
    print(f"(a) compiled (target_updater): {a:,.0f} updates/s")
    print(f"(b) eager, variable by variable: {b:,.0f} updates/s")
    print(f"a/b: {a / b:.2f}")


if __name__ == "__main__":
    main()
