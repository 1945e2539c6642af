"""The results statistics (rlkit.rl.analysis.statistics, on rliable) on hand-made scores, and
the final evaluation's episode count."""

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("rliable")

from rlkit.hparams import create_hparams  # noqa: E402
from rlkit.rl.analysis import statistics  # noqa: E402
from rlkit.rl.loops.evaluation import evaluation_episodes  # noqa: E402


def test_a_mean_with_its_bootstrap_interval_brackets_the_mean_and_narrows_with_agreement():
    mean, low, high = statistics.mean_interval([1.0, 2.0, 3.0, 4.0], reps=2000)
    assert mean == pytest.approx(2.5) and 1.0 <= low < 2.5 < high <= 4.0
    _, tight_low, tight_high = statistics.mean_interval([2.4, 2.5, 2.6, 2.5], reps=2000)
    assert tight_high - tight_low < (high - low) / 5
    assert statistics.mean_interval([7.0]) == (7.0, 7.0, 7.0)


def test_the_same_scores_give_the_same_intervals_whatever_numpys_global_rng_did_before():
    # rliable resamples with numpy's global RNG: the seed must reach it, and its state is the caller's after.
    values = [0.5, 0.7, 0.9, 0.6, 0.8, 0.55, 0.75, 0.65, 0.85, 0.95]
    scores = {"a": np.array([[0.1, 0.9], [0.4, 0.2], [0.8, 0.5], [0.3, 0.7]])}
    results = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        results.append((statistics.mean_interval(values, reps=500), statistics.aggregates(scores, reps=200)))
        assert np.random.get_state()[1][0] == np.random.RandomState(global_seed).get_state()[1][0]
    assert results[0] == results[1]


def test_the_estimates_leave_out_rliables_progress_lines_and_archs_deprecation_warning(caplog):
    # minatar_results printed 146 such lines around its tables; the caller's verbosity comes back after.
    import logging as python_logging

    from absl import logging

    before = logging.get_verbosity()
    logging.set_verbosity(logging.INFO)
    try:
        with warnings.catch_warnings(), caplog.at_level(python_logging.INFO):
            warnings.simplefilter("error")  # a warning the estimates let through fails the test
            statistics.aggregates({"a": np.array([[0.1, 0.9], [0.4, 0.2], [0.8, 0.5]])}, reps=100)
        assert "Calculating estimates" not in caplog.text
        assert logging.get_verbosity() == logging.INFO
    finally:
        logging.set_verbosity(before)


def test_a_methods_intervals_do_not_move_when_another_method_is_estimated_beside_it():
    # A row added to the results table must leave the other rows' CIs as they were.
    rng = np.random.default_rng(0)
    a, b = rng.random((5, 5)), rng.random((3, 5))
    alone = statistics.aggregates({"a": a}, reps=300)["a"]
    assert statistics.aggregates({"b": b, "a": a}, reps=300)["a"] == alone
    baseline = rng.random((10, 5))
    assert (statistics.improvement_probabilities({"b": b, "a": a, "base": baseline}, "base", reps=300)["a"]
            == statistics.improvement_probabilities({"a": a, "base": baseline}, "base", reps=300)["a"])


def test_the_performance_profile_is_drawn_the_same_whatever_numpys_global_rng_did_before(tmp_path):
    # Its CI bands come from rliable's bootstrap too: the same scores give the same PNG.
    rng = np.random.default_rng(0)
    scores = {"a": rng.random((10, 3)), "b": rng.random((10, 3))}
    aggregate = statistics.aggregates(scores, reps=100)
    pictures = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        profile, intervals = tmp_path / f"profile_{global_seed}.png", tmp_path / f"intervals_{global_seed}.png"
        statistics.draw(scores, aggregate, profile, intervals, "reference")
        pictures.append(profile.read_bytes())
    assert pictures[0] == pictures[1]


def test_the_seeds_own_spread_against_evaluation_noise_on_hand_values():
    import math

    from rlkit.rl.analysis.statistics import seed_spread

    # Five seeds up to 0.4 apart, each evaluated on 400 episodes of spread 2: SE 0.1, squared 0.01.
    means = [1.0, 1.2, 1.4, 1.0, 1.2]
    own, p_value, needed = seed_spread(means, [2.0] * 5, [400] * 5)
    variance = np.var(means, ddof=1)  # 0.028
    assert own == pytest.approx(np.sqrt(variance - 0.01))
    statistic = 4 * variance / 0.01  # chi-square with 4 degrees of freedom: P(X > x) = e^(-x/2) (1 + x/2)
    assert p_value == pytest.approx(math.exp(-statistic / 2) * (1 + statistic / 2))
    assert p_value < 0.05 and needed == int(np.ceil((2 * 2.0 / own) ** 2))  # SE 2 / sqrt(n) = own / 2
    # Seeds of one policy, apart by less than their SE: no spread to resolve.
    own, p_value, needed = seed_spread([1.0, 1.05, 0.95], [2.0] * 3, [400] * 3)
    assert own == 0.0 and p_value > 0.05 and needed is None


def test_iqm_optimality_gap_and_improvement_on_normalised_scores():
    random_means, reference_means = np.array([0.0, 10.0]), np.array([2.0, 30.0])
    # 4 runs x 2 games; "good" sits at the reference on both games, "bad" at random.
    good = statistics.normalised(np.array([[2.0, 30.0]] * 4), random_means, reference_means)
    bad = statistics.normalised(np.array([[0.0, 10.0]] * 4), random_means, reference_means)
    np.testing.assert_allclose(good, 1.0)
    np.testing.assert_allclose(bad, 0.0)
    aggregate = statistics.aggregates({"good": good, "bad": bad}, reps=500)
    assert aggregate["good"]["IQM"] == pytest.approx((1.0, 1.0, 1.0))
    assert aggregate["bad"]["optimality gap"][0] == pytest.approx(1.0)
    probabilities = statistics.improvement_probabilities({"good": good, "bad": bad}, "bad", reps=200)
    assert probabilities["good"][0] == pytest.approx(1.0)


def test_the_probability_of_improvement_counted_over_pairs_is_rliables_and_so_are_its_intervals():
    from rliable import metrics

    rng = np.random.default_rng(0)
    for runs_x, runs_y in ((5, 5), (3, 10), (10, 2)):
        x = rng.integers(0, 4, (runs_x, 5)) / 2.0  # few values: ties within and across methods
        y = rng.integers(0, 4, (runs_y, 5)) / 2.0
        assert statistics.probability_of_improvement(x, y) == pytest.approx(metrics.probability_of_improvement(x, y),
                                                                            abs=1e-12)
        assert statistics.probability_of_improvement(x, x) == metrics.probability_of_improvement(x, x) == 0.5
    scores = {"a": rng.normal(0.5, 0.3, (5, 5)), "b": rng.normal(0.3, 0.3, (5, 5)), "c": rng.normal(0.3, 0.3, (5, 5))}
    pairs = {m: (scores[m], scores["b"]) for m in ("a", "c")}
    ours = statistics.improvement_probabilities(scores, "b", reps=300)
    points, intervals = statistics.interval_estimates(pairs, metrics.probability_of_improvement, 0, 300)
    for method in pairs:  # the same resamples, the same statistic: the same interval
        np.testing.assert_allclose(ours[method], [points[method], *np.ravel(intervals[method])[:2]], atol=1e-12)


def test_final_evaluations_of_minatar_results_play_128_episodes_and_the_others_as_many_as_before():
    minatar = create_hparams("rlmf_minatar")
    assert evaluation_episodes(minatar, final=True) == 128 and evaluation_episodes(minatar, final=False) == 32
    assert evaluation_episodes(create_hparams("rlmf_tiny"), final=True) == create_hparams("rlmf_tiny").eval_batch_size


def archived_run(archive, game, run, returns, finished, spread=None, episodes=32):
    """An archived run as minatar_results stores it: evaluation events at 10,000 real steps apart
    (temperature 1 and greedy; with the last one's spread over its episodes where given), its
    hparams.json (as far as read) and its run_info.json."""
    import tensorflow as tf

    from rlkit.rl.analysis.minatar_results import GREEDY_TAG, TAG
    from rlkit.rl.analysis.run_archive import EPISODES_TAG, STD_TAG
    from rlkit.summaries import write_summaries

    path = archive / game / run
    writer = tf.summary.create_file_writer(str(path / "eval_metrics"))
    for i, value in enumerate(returns):
        write_summaries(writer, 10_000 * (i + 1), {TAG: value, GREEDY_TAG: value})
    if spread is not None:
        write_summaries(writer, 10_000 * len(returns), {STD_TAG: spread, EPISODES_TAG: episodes})
    writer.close()
    (path / "hparams.json").write_text(json.dumps(dict(eval_batch_size=32, final_eval_batch_size=episodes)))
    (path / "run_info.json").write_text(json.dumps(dict(finished=finished, evaluations=len(returns),
                                                        wall_seconds=None)))


def test_a_cell_counts_its_finished_runs_and_a_run_still_going_only_where_none_has_finished(tmp_path):
    from rlkit.rl.analysis.minatar_results import final_returns, game_rows

    archive = tmp_path / "runs"
    archived_run(archive, "seaquest", "simple_object_frames_100k_s0", [0.1, 0.3], finished=True)
    archived_run(archive, "seaquest", "simple_object_frames_100k_s1", [0.2, 0.5], finished=True)
    archived_run(archive, "seaquest", "simple_object_frames_100k_s2", [0.1], finished=False)  # just started
    archived_run(archive, "seaquest", "simple_ends_100k_s0", [0.05], finished=False)  # never finished
    rows = game_rows(str(archive), "seaquest")
    cells = {row[1]: row[2:4] for row in rows.reported}
    assert cells["SimPLe + ends + one-cell objects + object frames @100K"] == ["2 (+1 unfinished, not counted)",
                                                                              "0.40 [0.30, 0.50]"]
    # A set tried on Seaquest's seed 0 before its set was chosen: a row of the other table.
    assert [row[1:3] for row in rows.tried] == [["SimPLe + episode ends @100K", "1 (1 unfinished)"]]
    assert final_returns(str(archive), "seaquest", "simple_object_frames_100k") == pytest.approx([0.3, 0.5])
    assert len(rows.evaluated) == 4  # the curves show every run


def test_a_cell_whose_set_was_chosen_on_its_seeds_is_given_again_without_them(tmp_path):
    from rlkit.rl.analysis.cells import SELECTION_SEEDS
    from rlkit.rl.analysis.minatar_results import final_returns, game_rows

    archive = tmp_path / "runs"
    assert SELECTION_SEEDS[("seaquest", "simple_object_frames_100k")] == (0,)  # the journal's choice
    for seed, final in enumerate([0.3, 0.5, 0.7]):
        archived_run(archive, "seaquest", f"simple_object_frames_100k_s{seed}", [0.1, final], finished=True)
    archived_run(archive, "seaquest", "ppo_100k_s0", [0.2, 0.4], finished=True)  # chosen on no seed of its own
    cells = {row[1]: row[2:4] for row in game_rows(str(archive), "seaquest").reported}
    label = "SimPLe + ends + one-cell objects + object frames @100K"
    assert cells[label] == ["3", "0.50 [0.30, 0.70]"]
    assert cells[label + " without seed 0 (its set's choice saw it)"] == ["2", "0.60 [0.50, 0.70]"]
    assert [name for name in cells if name.startswith("PPO")] == ["PPO @100K"]
    assert final_returns(str(archive), "seaquest", "simple_object_frames_100k", True) == pytest.approx([0.5, 0.7])


def test_the_per_seed_table_gives_each_runs_evaluations_beside_the_same_seed_before_a_fix(tmp_path):
    from rlkit.rl.analysis.minatar_results import seed_table

    archive = tmp_path / "runs"
    assert seed_table(str(archive), "dqn_100k", "dqn_shard_replay_100k") == ""
    archived_run(archive, "breakout", "dqn_100k_s1", [1.0, 2.5], finished=True)
    archived_run(archive, "breakout", "dqn_100k_s0", [0.5, 3.25], finished=True)
    archived_run(archive, "breakout", "dqn_shard_replay_100k_s0", [0.2, 1.75], finished=True)
    archived_run(archive, "seaquest", "dqn_100k_s0", [0.125], finished=False)  # still going
    lines = seed_table(str(archive), "dqn_100k", "dqn_shard_replay_100k").splitlines()
    assert lines[0] == "| game | seed | evaluations at 10K, 20K | `dqn_shard_replay_100k`, last |"
    assert lines[2:] == ["| breakout | 0 | 0.50, **3.25** | 1.75 |", "| breakout | 1 | 1.00, **2.50** | — |",
                         "| seaquest | 0 | **0.12** | — |"]


def long_evaluation_summary(path, mean, spread, episodes, name="summary.json"):
    """The evaluator's summary.json of a long evaluation at temperature 1, as far as it is read
    (archived as long_eval.json)."""
    path.mkdir(parents=True, exist_ok=True)
    cell = dict(mean_unclipped=mean, std_unclipped=spread, episodes=episodes)
    (path / name).write_text(json.dumps({"results": {"policy": {"sampling_temp_1.0_max_noops_0": cell}}}))


def test_long_evaluations_are_archived_beside_their_runs_and_kept_while_the_final_policy_is_the_same(tmp_path):
    import tensorflow as tf

    from rlkit.rl.analysis.run_archive import TAG, archive
    from rlkit.summaries import write_summaries

    runs, archived = tmp_path / "runs" / "breakout", tmp_path / "archive" / "breakout"
    writer = tf.summary.create_file_writer(str(runs / "ppo_100k_s0" / "eval"))  # a live model-free run
    write_summaries(writer, 20_480, {TAG: 1.0})
    writer.flush()
    long_evaluation_summary(runs / "long_eval" / "ppo_100k_s0", 1.6, 1.2, 2048)
    long_evaluation_summary(runs / "long_eval" / "ppo_100k_s1", 1.7, 1.2, 2048)  # its run is not archived
    archive(str(runs), str(archived), ["ppo_100k"])
    assert (archived / "ppo_100k_s0" / "long_eval.json").read_text() == \
        (runs / "long_eval" / "ppo_100k_s0" / "summary.json").read_text()
    assert not (archived / "ppo_100k_s1").exists()

    write_summaries(writer, 40_960, {TAG: 1.5})  # the run evaluated again: its record is archived anew
    writer.flush()
    (runs / "long_eval" / "ppo_100k_s0" / "summary.json").unlink()
    archive(str(runs), str(archived), ["ppo_100k"])
    assert not (archived / "ppo_100k_s0" / "long_eval.json").exists()  # another final policy: not its
    assert json.loads((archived / "ppo_100k_s0" / "run_info.json").read_text())["evaluations"] == 2

    long_evaluation_summary(runs / "long_eval" / "ppo_100k_s0", 1.5, 1.2, 2048)  # the new policy's
    archive(str(runs), str(archived), ["ppo_100k"])
    writer.close()
    (runs / "long_eval" / "ppo_100k_s0" / "summary.json").unlink()
    archive(str(runs), str(archived), ["ppo_100k"])  # the run archived anew, with the same final evaluation
    assert json.loads((archived / "ppo_100k_s0" / "long_eval.json").read_text())["results"]["policy"][
        "sampling_temp_1.0_max_noops_0"]["mean_unclipped"] == 1.5


def test_a_rerun_replaces_its_archived_copy_once_finished_even_with_an_evaluation_fewer(tmp_path):
    import tensorflow as tf

    from rlkit.rl.analysis.run_archive import TAG, archive
    from rlkit.rl.analysis.run_archive import evaluations
    from rlkit.summaries import write_summaries

    archived = tmp_path / "archive" / "seaquest"
    archived_run(tmp_path / "archive", "seaquest", "ppo_1m_s0", [0.5, 1.0, 1.25], finished=True)  # an older commit's
    run = tmp_path / "runs" / "seaquest" / "ppo_1m_s0"  # the rerun, killed in its second evaluation and resumed
    writer = tf.summary.create_file_writer(str(run / "eval"))
    write_summaries(writer, 102_400, {TAG: 0.625})
    writer.close()
    archive(str(tmp_path / "runs" / "seaquest"), str(archived), ["ppo_1m"])
    assert [r for _, r in evaluations(str(archived / "ppo_1m_s0"))] == [0.5, 1.0, 1.25]  # under way: kept
    writer = tf.summary.create_file_writer(str(run / "eval"))
    write_summaries(writer, 307_200, {TAG: 1.5})
    writer.close()
    (run / "policy").mkdir()
    (run / "policy" / "saved_model.pb").write_bytes(b"")  # what `finished` looks for: the exported policy
    archive(str(tmp_path / "runs" / "seaquest"), str(archived), ["ppo_1m"])
    assert [r for _, r in evaluations(str(archived / "ppo_1m_s0"))] == [0.625, 1.5]


def test_reruns_wait_as_pending_records_until_their_cell_can_be_one_commit(tmp_path):
    import tensorflow as tf

    from rlkit.errors import UserError
    from rlkit.rl.analysis.run_archive import TAG, keep_pending, pending_cells, promote
    from rlkit.rl.analysis.run_archive import code_versions, evaluations, long_evaluation
    from rlkit.summaries import write_summaries

    runs, pending, archived = (tmp_path / name / "breakout" for name in ("runs", "pending", "archive"))
    for seed in (0, 1):  # the cell as archived before runs recorded their commit
        archived_run(tmp_path / "archive", "breakout", f"ppo_100k_s{seed}", [0.5, 1.0], finished=True)

    def rerun(seed, final, done):  # a live model-free rerun at one commit
        run = runs / f"ppo_100k_s{seed}"
        writer = tf.summary.create_file_writer(str(run / "eval"))
        write_summaries(writer, 102_400, {TAG: final})
        writer.close()
        (run / "provenance.json").write_text(json.dumps([dict(commit="a" * 40, dirty=False)]))
        if done:
            (run / "policy").mkdir()
            (run / "policy" / "saved_model.pb").write_bytes(b"")

    rerun(0, 2.0, done=True)
    rerun(1, 3.0, done=False)  # still going: not kept yet
    keep_pending(str(runs), str(pending), str(archived), ["ppo_100k"])
    assert sorted(p.name for p in pending.iterdir()) == ["ppo_100k_s0"]
    with pytest.raises(UserError, match="seed 1 not recorded"):  # seed 1 would stay of other code
        promote(str(pending), str(archived), "ppo_100k")
    protocol = {"ppo_100k": [0, 1, 2]}  # the cell's seeds (protocol_seeds, for one game)
    [line] = pending_cells(str(pending), str(archived), "breakout", protocol)  # what --pending says of it
    assert line.startswith("breakout/ppo_100k: seed 0 pending (aaaaaaa; final 2.00), replacing the archived seed 0; "
                           "--promote would refuse: ") and "seed 1 not recorded" in line, line
    assert [v for _, v in evaluations(str(archived / "ppo_100k_s0"))] == [0.5, 1.0]  # nothing moved

    (runs / "ppo_100k_s1" / "policy").mkdir()
    (runs / "ppo_100k_s1" / "policy" / "saved_model.pb").write_bytes(b"")
    long_evaluation_summary(runs / "long_eval" / "ppo_100k_s0", 2.1, 1.0, 2048)  # seed 0's policy again
    keep_pending(str(runs), str(pending), str(archived), ["ppo_100k"])
    assert (pending / "ppo_100k_s0" / "long_eval.json").exists()  # joins its pending run
    line = ("breakout/ppo_100k: seeds 0, 1 pending (aaaaaaa; final 2.00, 3.00), replacing the archived seeds 0, 1; ")
    assert pending_cells(str(pending), str(archived), "breakout", protocol) == [
        line + "the protocol's seed 2 still to come, then --promote=breakout/ppo_100k"]
    assert pending_cells(str(pending), str(archived), "breakout", {"ppo_100k": [0, 1]}) == [
        line + "every seed the protocol asks is in: --promote=breakout/ppo_100k"]
    promote(str(pending), str(archived), "ppo_100k")
    assert not list(pending.iterdir())
    cell = [str(archived / f"ppo_100k_s{seed}") for seed in (0, 1)]
    assert code_versions(cell) == "aaaaaaa" and [evaluations(run)[-1][1] for run in cell] == [2.0, 3.0]
    assert long_evaluation(cell[0])[0] == 2.1 and long_evaluation(cell[1]) is None
    keep_pending(str(runs), str(pending), str(archived), ["ppo_100k"])  # archived already: not again
    assert not list(pending.iterdir()) and pending_cells(str(pending), str(archived), "breakout", protocol) == []


def test_the_protocol_is_the_experiment_scripts_seeds_whatever_this_process_asks_it_to_run(monkeypatch):
    from rlkit.rl.analysis.cells import GAMES, METHODS, REPORTED, best_simple_runs
    from rlkit.rl.analysis.protocol import protocol_seeds

    monkeypatch.setenv("SEEDS_model_free_breakout", "7")  # a run of one seed, not the protocol
    monkeypatch.setenv("ONLY", "dreamer")
    protocol = protocol_seeds()
    assert protocol["breakout", "ppo_100k"] == protocol["breakout", "random"] == list(range(10))
    assert protocol["breakout", "simple_combined_100k"] == list(range(5)) and ("seaquest", "dqn_1m") not in protocol
    assert protocol["breakout", best_simple_runs()["breakout"]] == list(range(5))
    assert ("freeway", "dreamer_1m") not in protocol and protocol["space_invaders", "dreamer_1m"] == [0]
    # Every cell the script runs is one the results command knows, every reported 100K cell is run on every game.
    assert {prefix for _, prefix in protocol} <= {prefix for prefix, _ in METHODS}
    assert all(protocol[game, prefix] for game in GAMES for prefix in REPORTED if prefix.endswith("_100k"))


def test_the_status_counts_each_cells_finished_runs_against_its_protocol(tmp_path):
    from rlkit.rl.analysis.protocol import status_table

    archive, pending = tmp_path / "runs", tmp_path / "pending"
    for seed in (0, 1):
        archived_run(archive, "breakout", f"ppo_100k_s{seed}", [1.0], finished=True, episodes=128)
    archived_run(archive, "breakout", "ppo_100k_s2", [1.0], finished=False)  # still going: not counted
    archived_run(archive, "breakout", "ppo_100k_s9", [1.0], finished=True)  # a seed the protocol does not ask
    archived_run(pending, "breakout", "ppo_100k_s2", [1.0], finished=True, episodes=128)
    archived_run(archive, "freeway", "ppo_100k_s0", [1.0], finished=True, episodes=32)
    long_evaluation_summary(archive / "breakout" / "ppo_100k_s0", 1.0, 1.0, 2048, name="long_eval.json")
    protocol = {("breakout", "ppo_100k"): [0, 1, 2], ("freeway", "ppo_100k"): [0], ("breakout", "dqn_1m"): [0]}
    rows = [("PPO", {"breakout": "ppo_100k", "freeway": "ppo_100k", "asterix": "ppo_100k"}),
            ("DQN", {"breakout": "dqn_1m", "freeway": "dqn_1m", "asterix": "dqn_1m"})]
    table = status_table(str(archive), str(pending), rows, ["breakout", "freeway", "asterix"], protocol)
    ppo, dqn = ([cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:])
    assert ppo == ["PPO", "2 of 3 (+1 pending)", "1 of 1", "—", "0 of 2 (not: breakout, freeway)",
                   "128 (freeway: 32); again on 2,048: breakout (1 of 2 runs)"]
    assert dqn == ["DQN", "0 of 1", "—", "—", "—", "—"]


def test_the_results_command_answers_a_mistyped_method_in_one_line(tmp_path):
    from conftest import assert_one_line_error, run_module

    result = run_module("rlkit.rl.analysis.minatar_results", f"--runs={tmp_path}", "--prefixes=dreamer_1n",
                        f"--docs={tmp_path / 'docs'}")
    assert_one_line_error(result, "dreamer_1n", "did you mean 'dreamer_1m'")
    assert not (tmp_path / "docs").exists()


def test_the_results_command_writes_every_section_even_where_its_reader_stops_at_the_first_line(tmp_path):
    # `minatar_results | head` ended the command at its first print: the noise table after it stayed stale.
    import subprocess
    import sys

    docs = tmp_path / "docs"
    for seed, mean in enumerate([1.0, 1.4]):
        archived_run(docs / "results" / "runs", "breakout", f"ppo_100k_s{seed}", [mean], finished=True, spread=1.28,
                     episodes=128)
    (docs / "results.md").write_text("<!-- results:begin -->\n<!-- results:end -->\n"
                                     "<!-- noise:begin -->\nstale\n<!-- noise:end -->\n")
    readme = tmp_path / "README.md"  # the front page beside the docs dir: its summary table too
    readme.write_text("# front\n<!-- summary:begin -->\nstale\n<!-- summary:end -->\nafter\n")
    command = subprocess.Popen([sys.executable, "-m", "rlkit.rl.analysis.minatar_results", f"--docs={docs}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    command.stdout.close()  # the reader gone before the first line
    stderr = command.stderr.read()
    assert command.wait(timeout=300) == 141, stderr  # SIGPIPE's status, as a Unix tool's
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    text = (docs / "results.md").read_text()
    assert "stale" not in text and "| breakout | PPO @100K | 2 |" in text
    from rlkit.rl.analysis.minatar_results import summary_section
    summary = summary_section(str(docs / "results" / "runs"))
    assert "| **1.20 [1.00, 1.40]** (2) |" in summary.splitlines()[2]  # PPO@100K, the only cell at 100K
    assert readme.read_text() == f"# front\n<!-- summary:begin -->\n{summary}\n<!-- summary:end -->\nafter\n"


def test_the_readme_summary_gives_each_reported_cell_and_bolds_the_best_at_100k(tmp_path):
    from rlkit.rl.analysis.minatar_results import summary_section
    from rlkit.rl.analysis.tables import mean_interval

    archive = tmp_path / "runs"
    for seed, mean in enumerate([2.0, 2.4]):
        archived_run(archive, "breakout", f"simple_ends_100k_s{seed}", [mean], finished=True)  # Breakout's own set
        archived_run(archive, "breakout", f"ppo_100k_s{seed}", [mean / 2], finished=True)
        archived_run(archive, "breakout", f"ppo_1m_s{seed}", [mean * 3], finished=True)  # higher, but not at 100K
    archived_run(archive, "freeway", "random_s0", [0.4], finished=True)
    lines = summary_section(str(archive)).splitlines()
    assert lines[0].split(" | ")[1:3] == ["SimPLe, each game's set @100K", "SimPLe, one set @100K"]
    breakout, freeway = ([cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:4])
    assert breakout == ["breakout (`rlmb_minatar_ends`)", f"**{mean_interval([2.0, 2.4])}** (2)", "—", "—", "—",
                        f"{mean_interval([1.0, 1.2])} (2)", "—", f"{mean_interval([6.0, 7.2])} (2)", "—"]
    assert freeway == ["freeway (`rlmb_minatar`)", *["—"] * 7, "0.40 (1)"]  # nothing at 100K: nothing bold
    assert len(lines) == 2 + 5


def test_the_seeds_own_spread_is_what_evaluation_noise_leaves_of_their_spread(tmp_path):
    from rlkit.rl.analysis.minatar_results import game_rows, noise_section

    archive = tmp_path / "runs"
    for seed, mean in enumerate([1.0, 1.2, 1.4]):  # seeds that differ: 0.2 apart
        archived_run(archive, "breakout", f"ppo_100k_s{seed}", [mean], finished=True, spread=1.28, episodes=128)
        long_evaluation_summary(archive / "breakout" / f"ppo_100k_s{seed}", mean, 1.28, 2048, "long_eval.json")
    for seed in range(3):  # seeds that differ by evaluation noise alone
        archived_run(archive, "breakout", f"random_s{seed}", [0.4], finished=True, spread=0.6, episodes=128)
        long_evaluation_summary(archive / "breakout" / f"random_s{seed}", 0.4 + 0.001 * seed, 0.6, 2048,
                                "long_eval.json")
    archived_run(archive, "breakout", "ppo_1m_s0", [5.0], finished=True)  # older runs: no spread recorded
    archived_run(archive, "breakout", "ppo_1m_s1", [5.2], finished=True)
    dreamer = [0.7, 0.8] * 5  # ten seeds 0.05 apart, evaluated on too few episodes to resolve it
    for seed, mean in enumerate(dreamer):
        archived_run(archive, "breakout", f"dreamer_100k_s{seed}", [mean], finished=True, spread=1.5, episodes=2048)
    rows = {row[1]: row[2:] for row in (line.strip("| ").split(" | ")
                                        for line in noise_section(str(archive)).splitlines()[2:])}
    assert list(rows) == ["DreamerV2 @100K", "PPO @100K", "PPO @1M", "random"]
    error = 1.28 / np.sqrt(2048)
    own = np.sqrt(0.04 - error ** 2)  # variance over seeds 0.2^2, less the squared SE
    assert rows["PPO @100K"] == ["3", "128", f"{1.28 / np.sqrt(128):.3f} / 0.200", "2,048", f"{error:.3f} / 0.200",
                                 f"{own:.3f} (p < 0.01)", f"{int(np.ceil((2 * 1.28 / own) ** 2)):,}", "yes"]
    assert rows["random"][4] == "0.013 / 0.001"
    assert rows["random"][5].startswith("0.000 (within evaluation noise: p ")
    assert rows["random"][6:] == ["—", "— (nothing to resolve; its SE counts against the gaps to other methods)"]
    assert rows["PPO @1M"] == ["2", "32 (spread not recorded)", "— / 0.141", "—", "—", "—", "—", "—"]
    for seed, spread in enumerate([None, 1.0, 1.0]):  # an older run among newer ones
        archived_run(archive, "freeway", f"ppo_1m_s{seed}", [28.0 + seed], finished=True, spread=spread,
                     episodes=128 if spread else 32)
    freeway = noise_section(str(archive)).splitlines()[-1].split(" | ")
    assert freeway[1:4] == ["PPO @1M", "3", "128 (2 of 3 runs; the others 32)"]
    own = np.sqrt(np.var([28.0, 29.0, 30.0], ddof=1) - 1.0 ** 2 / 128)
    assert freeway[-2:] == [f"{int(np.ceil((2 * 1.0 / own) ** 2)):,}", "yes |"]  # 5 episodes asked: 32 will do
    for seed, spread in enumerate([None, None, 1.0, 1.0]):  # seeds 0.25 apart: 128 episodes would do, 32 not
        archived_run(archive, "asterix", f"ppo_1m_s{seed}", [1.0 + 0.25 * seed], finished=True, spread=spread,
                     episodes=128 if spread else 32)
    asterix = [row for row in noise_section(str(archive)).splitlines() if "| asterix |" in row][0].split(" | ")
    assert 32 < int(asterix[-2].replace(",", "")) <= 128 and asterix[-1] == "no (2 of 4 runs short) |"
    own = np.sqrt(np.var(dreamer, ddof=1) - 1.5 ** 2 / 2048)
    needed = int(np.ceil((2 * 1.5 / own) ** 2))
    assert needed > 2048 and rows["DreamerV2 @100K"][5:] == [f"{own:.3f} (p < 0.01)", f"{needed:,}", "no"]

    # The results table takes a method's long evaluations where each of its runs has one.
    cells = {row[1]: row[2:4] for row in game_rows(str(archive), "breakout").reported}
    assert cells["PPO @100K"] == ["3 (2,048 episodes)", "1.20 [1.00, 1.40]"]
    assert cells["PPO @1M"] == ["2", "5.10 [5.00, 5.20]"]


def test_a_cell_names_the_commits_its_runs_came_from_and_marks_a_mix(tmp_path):
    from rlkit.rl.analysis.run_archive import code_versions

    def run(name, *records):
        path = tmp_path / name
        path.mkdir()
        if records:
            (path / "provenance.json").write_text(json.dumps(list(records)))
        return str(path)

    a = {"commit": "a" * 40, "dirty": False}
    b = {"commit": "b" * 40, "dirty": True}
    assert code_versions([run("old")]) == "not recorded"
    assert code_versions([run("s0", a), run("s1", a)]) == "aaaaaaa"
    assert code_versions([run("s2", a), run("s3", b)]) == "mixed: aaaaaaa, bbbbbbb+changes"
    assert code_versions([run("resumed", a, b)]) == "mixed: aaaaaaa, bbbbbbb+changes"  # one run, two commits
    assert code_versions([run("s4", a), run("older")]) == "mixed: aaaaaaa, 1 not recorded"
    # One commit on two machines: the commit, and how many runs ran on each CPU (a run resumed
    # on the other counts on both).
    xeon, epyc = dict(a, cpu="Intel(R) Xeon(R) Processor"), dict(a, cpu="AMD EPYC")
    assert code_versions([run("s5", xeon), run("s6", xeon), run("s7", epyc)]) == \
        "aaaaaaa (1 on AMD EPYC, 2 on Intel(R) Xeon(R) Processor)"
    assert code_versions([run("s8", xeon, epyc), run("s9", xeon)]) == \
        "aaaaaaa (1 on AMD EPYC, 2 on Intel(R) Xeon(R) Processor)"
    # Two machines of one model name, told apart by native bfloat16.
    epyc_bf16 = dict(epyc, native_bfloat16=True)
    assert code_versions([run("s10", epyc), run("s11", epyc_bf16), run("s12", dict(epyc, native_bfloat16=False))]) == \
        "aaaaaaa (2 on AMD EPYC, 1 on AMD EPYC with bfloat16)"


def test_the_across_games_statistics_compare_each_method_with_each_compared_one_with_and_without_selection_seeds(
        tmp_path):
    from rlkit.rl.analysis.cells import BEST_SIMPLE, GAMES, best_simple_runs
    from rlkit.rl.analysis.minatar_results import statistics_section

    archive = tmp_path / "results" / "runs"
    simple = best_simple_runs()
    finals = {"random": [0.0, 0.0], "ppo_1m": [10.0, 10.0], "ppo_100k": [3.0, 3.0], "dreamer_100k": [6.0, 6.0, 6.0],
              "dreamer_ratio48_100k": [8.0, 8.0]}  # an ablation: on every game, in no statistic
    for game in GAMES:
        for prefix, returns in dict(finals, **{simple[game]: [5.0, 7.0, 9.0]}).items():
            for seed, final in enumerate(returns):
                archived_run(archive, game, f"{prefix}_s{seed}", [final], finished=True)
    table = statistics_section(str(archive), str(tmp_path), reps=20).splitlines()
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header[3:] == ["P(improves on PPO @100K)", f"P(improves on {BEST_SIMPLE})", "P(improves on DreamerV2 @100K)"]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table[2:])
            if len(cells) > 1}
    against_ppo, against_itself, against_dreamer = rows[f"{BEST_SIMPLE} (3)"][2:]
    # SimPLe's 5, 7 and 9 against PPO@100K's 3s, and against DreamerV2's 6s: two of three above.
    assert against_ppo == "1.00 [1.00, 1.00]" and against_itself == "—" and against_dreamer.startswith("0.67 [")
    assert rows["DreamerV2 @100K (3)"][0].startswith("0.60 ")  # IQM: every run at 6 of 10
    # Without the seeds the sets were chosen on: SimPLe's seed 0 but on Freeway (5.0 left out), and
    # DreamerV2's Breakout seeds 0 and 1 (one run per game left). SimPLe's IQM of 0.5, 0.7 x 5 and
    # 0.9 x 4 (two runs per game): the middle six's mean, 0.77.
    assert rows[f"{BEST_SIMPLE}, selection seeds left out (2)"][0].startswith("0.77 ")
    assert rows["DreamerV2 @100K, selection seeds left out (1)"][0].startswith("0.60 ")
    assert not [name for name in rows if "ratio 48" in name]
    assert (tmp_path / "results" / "minatar_profile.png").exists()
