"""Lists the registered hparam sets, or prints one set resolved.

    python -m rlkit.hparams --list
    python -m rlkit.hparams --show=rlmb_tiny --hparams=game=breakout
    python -m rlkit.hparams --show=rlmb_minatar_ends --explain   # each value and the code that set it
    python -m rlkit.hparams --published                 # the sets that reproduce a paper
    python -m rlkit.hparams --show=rlmf_dqn_nature --published   # its paper's values beside the set's
    python -m rlkit.hparams --list_ranges           # the ranged sets searches draw from
    python -m rlkit.hparams --show_ranges=ppo_learning
"""

import json

from absl import flags

from rlkit.errors import UserError, run_command
from rlkit.hparams import published as published_sets
from rlkit.hparams import (
    create_hparams,
    describe_hparams,
    describe_ranges,
    get_ranges,
    list_hparams,
    list_ranges,
)

flags.DEFINE_bool("list", False, "Print the registered hparam sets.")
flags.DEFINE_string("show", None, "Print the resolved values of this set.")
flags.DEFINE_bool("list_ranges", False, "Print the registered ranged sets (lab --mode=search --ranges=NAME).")
flags.DEFINE_string("show_ranges", None, "Print the ranges of this ranged set.")
flags.DEFINE_string("hparams", "", "Overrides applied before --show prints, e.g. game=breakout.")
flags.DEFINE_bool("explain", False, "With --show: each resolved value beside the set function (file:line) that set "
                  "it, or --hparams for an override.")
flags.DEFINE_bool("published", False, "Alone: the sets that reproduce a paper, with its source. With --show: the "
                  "paper's values beside the set's, and where rlkit differs on purpose.")
FLAGS = flags.FLAGS


def print_listing(names, describe):
    width = max(len(name) for name in names)
    for name in names:
        print(f"{name:<{width}}  {describe(name)}")


def main(argv):
    if len(argv) > 1:
        raise UserError(f"unexpected arguments {argv[1:]}; use --list or --show=NAME")
    if FLAGS.show_ranges:
        for hparam_range in get_ranges(FLAGS.show_ranges):
            print(hparam_range.describe())
    elif FLAGS.list_ranges:
        print_listing(list_ranges(), describe_ranges)
    elif FLAGS.show and FLAGS.published:
        record = published_sets.published(FLAGS.show)
        if record is None:
            raise UserError(f"{FLAGS.show} reproduces no paper; --published lists those that do")
        print(f"# {FLAGS.show}: {record.source}")
        rows = [(name, json.dumps(paper), json.dumps(ours), note)
                for name, paper, ours, note in published_sets.compare(create_hparams(FLAGS.show, FLAGS.hparams), record)]
        widths = [max(len(row[i]) for row in rows + [("name", "published", "set", "")]) for i in (0, 1, 2)]
        print(f"{'name':<{widths[0]}}  {'published':<{widths[1]}}  set")
        for name, paper, ours, note in rows:
            print(f"{name:<{widths[0]}}  {paper:<{widths[1]}}  {ours:<{widths[2]}}  {note}".rstrip())
    elif FLAGS.published:
        print_listing(sorted(published_sets.PUBLISHED), lambda name: published_sets.PUBLISHED[name].source)
    elif FLAGS.show and FLAGS.explain:
        rows = [(name, json.dumps(value), origin) for name, value, origin in
                create_hparams(FLAGS.show, FLAGS.hparams).explained()]
        name_width, value_width = (max(len(row[i]) for row in rows) for i in (0, 1))
        for name, value, origin in rows:
            print(f"{name:<{name_width}} = {value:<{value_width}}  # {origin}")
    elif FLAGS.show:
        print(create_hparams(FLAGS.show, FLAGS.hparams).to_json(indent=2))
    elif FLAGS.list:
        print_listing(list_hparams(), describe_hparams)
    else:
        raise UserError("nothing to do: pass --list, --show=NAME, --published, --list_ranges or --show_ranges=NAME")


if __name__ == "__main__":
    run_command(main)
