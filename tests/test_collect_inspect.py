import json
import os

from conftest import assert_one_line_error
from rlkit.data_generators import storage

TINY = ["--hparams_set=collect_random_tiny"]


def test_collect_then_inspect_real_pong(cli, tmp_path):
    out = str(tmp_path / "run")
    result = cli("rlkit.rl.collect", *TINY, f"--output_dir={out}")
    assert result.returncode == 0, result.stderr
    assert "400/400 steps (100%)" in result.stderr and "steps/s" in result.stderr
    saved = json.load(open(os.path.join(out, "hparams.json")))
    assert saved["game"] == "pong" and saved["num_envs"] == 2
    assert "make_batch_env.gym_wrappers = ()" in open(os.path.join(out, "operative_config.gin")).read()
    shards = storage.list_shards(os.path.join(out, "data"))
    assert len(shards) == 4
    assert storage.load_shard(shards[0])["frames"].shape == (2, 50, 105, 80, 3)

    png_dir = str(tmp_path / "png")
    report = cli("rlkit.rl.inspect", os.path.join(out, "data"), f"--export_png={png_dir}")
    assert report.returncode == 0, report.stderr
    assert "shards: 4 read, 0 unreadable" in report.stdout
    assert "frames: 400" in report.stdout
    assert "episodes: 2 (0 complete, 2 partial)" in report.stdout
    assert "reward histogram (clipped): " in report.stdout
    assert "wrote 400 PNG frames" in report.stdout
    pngs = [os.path.join(d, f) for d, _, files in os.walk(png_dir) for f in files]
    assert len(pngs) == 400 and all(p.endswith(".png") for p in pngs)
    import cv2
    image = cv2.imread(sorted(pngs)[10])
    assert image.shape == (105, 80, 3)


def test_rerun_resumes_and_other_hparams_are_refused(cli, tmp_path):
    out = str(tmp_path / "run")
    args = [*TINY, "--hparams=num_agent_steps=200", f"--output_dir={out}"]
    assert cli("rlkit.rl.collect", *args).returncode == 0
    first = storage.list_shards(os.path.join(out, "data"))
    # Same command again: the work is done, nothing is rewritten.
    mtimes = [os.path.getmtime(p) for p in first]
    again = cli("rlkit.rl.collect", *args)
    assert again.returncode == 0 and "already stored" in again.stderr
    assert [os.path.getmtime(p) for p in first] == mtimes
    # A killed run lost its last shard: rerunning writes only what is missing.
    os.remove(first[-1])
    assert cli("rlkit.rl.collect", *args).returncode == 0
    assert len(storage.list_shards(os.path.join(out, "data"))) == len(first)
    # Other hparams in the same dir: refused, the saved config untouched.
    before = open(os.path.join(out, "hparams.json")).read()
    refused = cli("rlkit.rl.collect", *TINY, "--hparams=num_agent_steps=300",
                  f"--output_dir={out}")
    assert_one_line_error(refused, "holds a run with other hparams", "num_agent_steps")
    assert open(os.path.join(out, "hparams.json")).read() == before


def test_gin_swaps_in_gymnasium_wrappers(cli, tmp_path):
    out = str(tmp_path / "run")
    result = cli("rlkit.rl.collect", *TINY, "--hparams=num_agent_steps=100",
                 f"--output_dir={out}",
                 "--gin_bindings=make_batch_env.gym_wrappers=[@gym.wrappers.TimeLimit]",
                 "--gin_bindings=TimeLimit.max_episode_steps=20")
    assert result.returncode == 0, result.stderr
    assert "TimeLimit.max_episode_steps = 20" in open(os.path.join(out, "operative_config.gin")).read()
    episodes = storage.read_rollouts(os.path.join(out, "data")).episodes
    lengths = [len(e) for e in episodes if e.complete]
    assert lengths and set(lengths) == {20}


def test_bad_input_gets_one_line(cli, tmp_path):
    out = str(tmp_path / "run")
    collect = "rlkit.rl.collect"
    assert_one_line_error(cli(collect, "--hparams_set=collect_randm", f"--output_dir={out}"),
                          "unknown hparams set 'collect_randm'", "collect_random")
    assert_one_line_error(cli(collect, *TINY, "--hparams=num_envs=two", f"--output_dir={out}"),
                          "hparam 'num_envs' expects an int")
    assert_one_line_error(cli(collect, *TINY, "--hparams=game=pongg", f"--output_dir={out}"),
                          "unknown game 'pongg'; did you mean 'pong'")
    assert not os.path.exists(out)  # refused before anything was written
    assert_one_line_error(cli(collect, *TINY, "--output_dir=/proc/rlkit_cannot_write_here"),
                          "cannot create output dir")
    assert_one_line_error(cli(collect, *TINY, f"--output_dir={out}", "--gin_bindings=make_batch_env.nope=1"),
                          "bad gin config")
    assert_one_line_error(cli(collect, *TINY, f"--output_dir={out}", "--gin_files=missing.gin"),
                          "gin file 'missing.gin' does not exist")
    assert_one_line_error(cli(collect, *TINY), "no output dir given")
    assert_one_line_error(cli("rlkit.rl.inspect", str(tmp_path / "nothing")),
                          "does not exist")
    os.makedirs(tmp_path / "empty")
    assert_one_line_error(cli("rlkit.rl.inspect", str(tmp_path / "empty")), "holds no shards")


def test_helpfull_lists_every_flag(cli):
    result = cli("rlkit.rl.collect", "--helpfull")
    assert result.returncode == 0, result.stderr[-2000:]
    for flag in ("--hparams_set", "--hparams", "--output_dir", "--gin_files", "--gin_bindings", "--seed"):
        assert flag in result.stdout, flag
