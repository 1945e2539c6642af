"""Lists the registered hparam sets, or prints one set resolved.

    python -m rlkit.hparams --list
    python -m rlkit.hparams --show=rlmb_tiny --hparams=game=breakout
"""

from absl import flags

from rlkit import cli
from rlkit.errors import UserError
from rlkit.hparams import create_hparams, describe_hparams, list_hparams

flags.DEFINE_bool("list", False, "Print the registered hparam sets.")
flags.DEFINE_string("show", None, "Print the resolved values of this set.")
flags.DEFINE_string("hparams", "", "Overrides applied before --show prints, e.g. game=breakout.")
FLAGS = flags.FLAGS


def main(argv):
    if len(argv) > 1:
        raise UserError(f"unexpected arguments {argv[1:]}; use --list or --show=NAME")
    if FLAGS.show:
        print(create_hparams(FLAGS.show, FLAGS.hparams).to_json(indent=2))
    elif FLAGS.list:
        names = list_hparams()
        width = max(len(name) for name in names)
        for name in names:
            print(f"{name:<{width}}  {describe_hparams(name)}")
    else:
        raise UserError("nothing to do: pass --list or --show=NAME")


if __name__ == "__main__":
    cli.run(main)
