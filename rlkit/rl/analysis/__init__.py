"""Commands that check a run's world model against real data and make the results tables of
docs/results.md, run as `python -m rlkit.rl.analysis.<name>`."""
