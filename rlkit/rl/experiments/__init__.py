"""The lab's tooling, under `python -m rlkit.rl.lab`: one run of a set (`runs.py`, which every
mode, search trial and benchmark run starts through), enjoy, searches and benchmarks on Ray
Tune, session graphs and the learning curves they draw, and the player's window (play.py)."""
