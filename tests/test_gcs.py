import http.server
import json
import os
import threading

import pytest

from conftest import BUCKET, assert_one_line_error, run_module
from rlkit import gcs
from rlkit.errors import UserError

EVALUATOR = "rlkit.rl.evaluator"


def test_cache_is_keyed_by_object_generation(bucket):
    bucket.blob("cache/a.txt").upload_from_string("one")
    bucket.blob("cache/sub/b.txt").upload_from_string("two")
    local = gcs.local_input(f"gs://{BUCKET}/cache")
    b_path = os.path.join(local, "sub", "b.txt")
    assert open(os.path.join(local, "a.txt")).read() == "one" and open(b_path).read() == "two"
    b_mtime = os.stat(b_path).st_mtime_ns
    bucket.blob("cache/a.txt").upload_from_string("three")  # a new generation
    assert gcs.local_input(f"gs://{BUCKET}/cache") == local
    assert open(os.path.join(local, "a.txt")).read() == "three"
    assert os.stat(b_path).st_mtime_ns == b_mtime  # unchanged: not fetched again
    bucket.blob("cache/sub/b.txt").delete()
    gcs.local_input(f"gs://{BUCKET}/cache")
    assert not os.path.exists(b_path)  # deleted in the bucket, so gone from the cache


def test_outputs_are_uploaded_and_a_run_resumes_from_the_bucket(bucket):
    with gcs.local_output(f"gs://{BUCKET}/out") as local:
        os.makedirs(os.path.join(local, "checkpoints"))
        for name in ("checkpoints/ckpt-1", "checkpoints/ckpt-2", "log.txt"):
            with open(os.path.join(local, name), "w") as f:
                f.write(name)
        os.makedirs(os.path.join(local, "policy.tmp"))
        open(os.path.join(local, "policy.tmp", "saved_model.pb"), "w").close()  # a staged export
    with gcs.local_output(f"gs://{BUCKET}/out") as local:  # a rerun finds what the first run wrote
        assert open(os.path.join(local, "checkpoints", "ckpt-2")).read() == "checkpoints/ckpt-2"
        os.remove(os.path.join(local, "checkpoints", "ckpt-1"))  # as CheckpointManager drops old ones
    names = {b.name for b in bucket.client.list_blobs(BUCKET, prefix="out/")}
    assert names == {"out/checkpoints/ckpt-2", "out/log.txt"}


def test_object_names_that_escape_the_cache_are_refused(tmp_path):
    local = str(tmp_path / "cache")
    assert gcs.local_file_for(local, "runs/p", "runs/p/policy/saved_model.pb") == \
        os.path.join(local, "policy", "saved_model.pb")
    for name in ("runs/p/../../../etc/passwd", "runs/p/a/../../x", "runs/p/./x", "runs/p\\..\\x", "other/x"):
        with pytest.raises(UserError, match="refusing object"):
            gcs.local_file_for(local, "runs/p", name)


def test_missing_bucket_and_object_get_one_line(bucket, tmp_path):
    common = ["--loop_hparams_set=rlmb_tiny", f"--eval_metrics_dir={tmp_path / 'm'}"]
    assert_one_line_error(run_module(EVALUATOR, *common, "--policy_dir=gs://no-such-bucket-rlkit/run/policy"),
                          "bucket 'no-such-bucket-rlkit' does not exist")
    assert_one_line_error(run_module(EVALUATOR, *common, f"--policy_dir=gs://{BUCKET}/no/such/run"),
                          f"no objects under gs://{BUCKET}/no/such/run")
    assert not (tmp_path / "m").exists()


class RefusingStorage(http.server.BaseHTTPRequestHandler):
    """A storage endpoint that refuses every request with one status, as GCS does without access."""
    status = 403

    def do_GET(self):
        body = json.dumps({"error": {"code": self.status, "message": "refused by the test server"}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status, fragment", [(403, "permission denied on gs://private/run/policy"),
                                              (401, "no credentials for gs://private/run/policy")])
def test_refused_access_gets_one_line(status, fragment, tmp_path, monkeypatch):
    handler = type("Handler", (RefusingStorage,), {"status": status})
    server = http.server.HTTPServer(("localhost", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://localhost:{server.server_port}")
    monkeypatch.setenv("RLKIT_CACHE_DIR", str(tmp_path / "cache"))
    try:
        result = run_module(EVALUATOR, "--loop_hparams_set=rlmb_tiny", "--policy_dir=gs://private/run/policy",
                            f"--eval_metrics_dir={tmp_path / 'm'}")
    finally:
        server.shutdown()
    assert_one_line_error(result, fragment)


def test_a_command_writes_its_output_dir_to_a_bucket(bucket):
    result = run_module("rlkit.rl.collect", "--hparams_set=collect_random_tiny",
                        f"--output_dir=gs://{BUCKET}/collect")
    assert result.returncode == 0, result.stderr[-3000:]
    names = {b.name for b in bucket.client.list_blobs(BUCKET, prefix="collect/")}
    assert {"collect/hparams.json", "collect/data/epoch_000/shard_00000.npz"} <= names
    assert sum(name.endswith(".npz") for name in names) == 4
    again = run_module("rlkit.rl.collect", "--hparams_set=collect_random_tiny",
                       f"--output_dir=gs://{BUCKET}/collect")
    assert again.returncode == 0 and "already stored" in again.stderr  # resumed from the bucket
