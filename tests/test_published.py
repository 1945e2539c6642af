"""Every set that reproduces a paper carries its paper's values (rlkit.hparams.published), and
differs only where the record says why; `python -m rlkit.hparams --published` shows them."""

import subprocess
import sys

import pytest

from conftest import assert_one_line_error
from rlkit.hparams import create_hparams
from rlkit.hparams.published import PUBLISHED, compare


@pytest.mark.parametrize("set_name", sorted(PUBLISHED))
def test_each_published_set_carries_its_papers_values(set_name):
    record = PUBLISHED[set_name]
    rows = compare(create_hparams(set_name), record)
    assert len(rows) == len(record.values) + len(record.differences) >= 10
    wrong = [row for row in rows if row[3] and not row[3].startswith("differs on purpose")]
    assert not wrong, wrong


def test_a_value_changed_from_the_papers_is_named():
    record = PUBLISHED["rlmf_dqn_nature"]
    notes = {name: note for name, _, _, note in
             compare(create_hparams("rlmf_dqn_nature", "dqn.gamma=0.9,dqn.optimizer_epsilon=0.01"), record)}
    assert notes["dqn.gamma"] == "NOT AS PUBLISHED"
    assert notes["dqn.optimizer_epsilon"] == "NOT AS PUBLISHED, nor as stated"  # the paper's, but not rlkit's stated one
    assert notes["dqn.batch_size"] == ""


def test_the_command_prints_the_papers_values_beside_the_sets():
    out = subprocess.run([sys.executable, "-m", "rlkit.hparams", "--show=rlmf_dqn_minatar", "--published",
                          "--hparams=frame_stack_size=4"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("# rlmf_dqn_minatar: MinAtar's DQN")
    assert ["frame_stack_size", "1", "4", "NOT", "AS", "PUBLISHED"] in [line.split() for line in lines]
    assert ["dqn.target_update_period", "1000", "1000"] in [line.split() for line in lines]
    listing = subprocess.run([sys.executable, "-m", "rlkit.hparams", "--published"], capture_output=True, text=True,
                             timeout=120)
    assert sorted(line.split()[0] for line in listing.stdout.splitlines()) == sorted(PUBLISHED)
    assert_one_line_error(subprocess.run([sys.executable, "-m", "rlkit.hparams", "--show=rlmf_minatar", "--published"],
                                         capture_output=True, text=True, timeout=120),
                          "rlmf_minatar reproduces no paper; --published lists those that do")
