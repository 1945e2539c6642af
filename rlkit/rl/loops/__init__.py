"""What drives the learners: plain functions over envs and learners.

`simple.py` is the SimPLe loop (real collection -> world model -> learner inside it), and
`model_free.py` the model-free one; both build on the on- and off-policy loops, the rollouts,
the world model's env (`simulated_env.py`) and its training, evaluation and Ray workers.
"""
