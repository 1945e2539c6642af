"""Reinforcement learning, by role:

    learners/      the algorithms: one module per family (ppo, dqn, naf, policy_gradient), each
                   with its loss as a pure function, beside the learner interface and registry
                   (learner.py) and the math they share (returns, q_learning, schedules)
    loops/         what drives learners: rollouts, the on- and off-policy loops, the world
                   model's env and training, evaluation, Ray workers, and the two training
                   loops themselves (simple.py: the SimPLe loop; model_free.py)
    experiments/   the lab's tooling: a run of a set (runs.py), enjoy, searches, benchmarks,
                   session graphs, learning curves; the player's window (play.py)
    analysis/      commands that check a run against real data and make the results tables

The modules here are the commands (`python -m rlkit.rl.<name>`): they parse flags and call in.
"""
