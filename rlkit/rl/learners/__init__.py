"""The learners: one module per algorithm family, its loss a pure function of tensors.

The interface every learner implements and the registry that builds one from a set's
`base_algo` are in `learner.py`; imports run from the loops down to here, never back up.
"""
