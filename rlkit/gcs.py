"""`gs://bucket/prefix` paths for every rlkit command, through google-cloud-storage.

Commands work on local directories; this module maps remote paths onto them:

* `local_input(path)`: a remote prefix is downloaded into a local cache and its local copy
  returned. The cache is keyed by object generation, so an unchanged object is not fetched
  twice and a replaced one is fetched again.
* `local_output(path)`: a context giving a local directory for a remote output; what is
  already there is downloaded first (so rerunning a command resumes it), and new and changed
  files are uploaded every few seconds while the command runs (a killed run loses at most the
  last seconds' files) and at the end.
* `publish(local_dir, remote)`: uploads a finished run's directory.

Credentials: Application Default Credentials; without them, anonymous access (public buckets).
With STORAGE_EMULATOR_HOST set, the client talks to that emulator. Object names that would
land outside the cache directory are refused; nothing downloaded is unpickled.
"""

import contextlib
import fnmatch
import json
import os
import threading

from absl import logging

from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text, is_temporary

SCHEME = "gs://"
MANIFEST = ".rlkit_gcs_manifest.json"  # object name -> generation of each cached file
LOCK_FILE = ".rlkit.lock"  # a run's lock (rlkit.run_lock): held on each side, never synced
SYNC_SECONDS = 5.0
# How long one storage call retries transient failures (no route, 5xx, 429) before rlkit
# reports it: short, so a machine without a network hears so within seconds, not after the
# client's default two minutes. A run's periodic uploads also try again every SYNC_SECONDS.
RETRY_SECONDS = float(os.environ.get("RLKIT_GCS_RETRY_SECONDS", "10"))
TIMEOUT = (5.0, 120.0)  # seconds to connect, and to wait for each read


def call_settings():
    """retry= and timeout= for every storage call."""
    from google.cloud.storage.retry import DEFAULT_RETRY

    return dict(retry=DEFAULT_RETRY.with_timeout(RETRY_SECONDS), timeout=TIMEOUT)


def is_remote(path):
    return bool(path) and path.startswith(SCHEME)


def split(path):
    """('bucket', 'prefix') of gs://bucket/prefix; the prefix has no leading or trailing slash."""
    bucket, _, prefix = path[len(SCHEME):].partition("/")
    if not bucket:
        raise UserError(f"{path!r} names no bucket: use gs://BUCKET/PREFIX")
    return bucket, prefix.strip("/")


def cache_root():
    return os.environ.get("RLKIT_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "rlkit", "gcs"))


def local_file_for(local_dir, prefix, object_name):
    """Where object `object_name` under `prefix` lands in `local_dir`; refuses names that escape it."""
    relative = object_name[len(prefix):].lstrip("/") if prefix else object_name
    if (not object_name.startswith(prefix) or not relative or os.path.isabs(relative)
            or any(part in ("..", ".") for part in relative.split("/")) or "\\" in relative):
        raise UserError(f"refusing object {object_name!r}: its name would land outside the local "
                        f"directory {local_dir!r}")
    path = os.path.normpath(os.path.join(local_dir, relative))
    if os.path.commonpath([path, os.path.abspath(local_dir)]) != os.path.abspath(local_dir):
        raise UserError(f"refusing object {object_name!r}: it would land outside {local_dir!r}")
    return path


def client():
    # The storage client loads only when a gs:// path is used, so local runs start no slower.
    from google.cloud import storage

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        from google.auth.credentials import AnonymousCredentials
        return storage.Client(project="rlkit-emulator", credentials=AnonymousCredentials())
    import google.auth.exceptions
    try:
        return storage.Client()
    except (google.auth.exceptions.DefaultCredentialsError, OSError):
        return storage.Client.create_anonymous_client()  # public buckets need no credentials


@contextlib.contextmanager
def clear_errors(path):
    """Turns the storage client's exceptions into one-line UserErrors about `path`."""
    from google.api_core import exceptions
    import google.auth.exceptions
    import requests

    bucket = split(path)[0]
    try:
        yield
    except exceptions.NotFound:
        raise UserError(f"bucket {bucket!r} does not exist ({path}): check the name, or create it "
                        f"with `gcloud storage buckets create gs://{bucket}`") from None
    except (exceptions.Unauthorized, google.auth.exceptions.GoogleAuthError):
        raise UserError(f"no credentials for {path}: run `gcloud auth application-default login` "
                        "or set GOOGLE_APPLICATION_CREDENTIALS") from None
    except exceptions.Forbidden as e:
        raise UserError(f"permission denied on {path}: {e.message}; ask for access to "
                        f"gs://{bucket} or use another bucket") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout, exceptions.RetryError):
        raise UserError(f"cannot reach Google Cloud Storage for {path} (retried {RETRY_SECONDS:.0f} s): check the "
                        "network, or STORAGE_EMULATOR_HOST if you use an emulator") from None
    except (exceptions.ServerError, exceptions.TooManyRequests) as e:
        raise UserError(f"Google Cloud Storage kept failing for {path} ({e.code}, retried {RETRY_SECONDS:.0f} s): "
                        "try again later") from None


def _list(storage_client, path):
    bucket, prefix = split(path)
    # A prefix names a "directory": list what is under prefix/ (or the whole bucket).
    return list(storage_client.list_blobs(bucket, prefix=prefix + "/" if prefix else None, **call_settings()))


def expand(pattern):
    """The gs:// "directories" that a pattern with shell wildcards (`gs://b/runs/pong_s*`)
    matches and that hold objects, sorted; a pattern without wildcards is returned as it is."""
    if not any(char in pattern for char in "*?["):
        return [pattern]
    bucket, prefix = split(pattern)
    fixed = prefix[:min(prefix.index(char) for char in "*?[" if char in prefix)].rpartition("/")[0]
    depth = len(prefix.split("/"))
    with clear_errors(pattern):
        names = [blob.name for blob in _list(client(), f"{SCHEME}{bucket}/{fixed}")]
    found = {"/".join(name.split("/")[:depth]) for name in names if len(name.split("/")) > depth}
    return sorted(f"{SCHEME}{bucket}/{name}" for name in found if fnmatch.fnmatchcase(name, prefix))


def download(path, local_dir=None, allow_empty=False, only=None):
    """Copies every object under gs://bucket/prefix (or those whose name below it `only(name)`
    accepts) into `local_dir` (default: the cache); returns the local directory. Unchanged
    objects (same generation) are not fetched again."""
    bucket, prefix = split(path)
    local_dir = local_dir or os.path.join(cache_root(), bucket, prefix)
    manifest_path = os.path.join(local_dir, MANIFEST)
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (FileNotFoundError, ValueError):
        manifest = {}
    with clear_errors(path):
        storage_client = client()
        blobs = _list(storage_client, path)
        if only is not None:
            blobs = [blob for blob in blobs if only(blob.name[len(prefix):].lstrip("/"))]
        if not blobs and not allow_empty:
            if storage_client.lookup_bucket(bucket, **call_settings()) is None:
                raise UserError(f"bucket {bucket!r} does not exist ({path}): check the name")
            raise UserError(f"no objects under {path}: check the path (gcloud storage ls {path})")
        blobs = [blob for blob in blobs if os.path.basename(blob.name) != LOCK_FILE]
        for blob in blobs:
            if blob.name.endswith("/"):
                continue  # a "folder" placeholder object
            target = local_file_for(local_dir, prefix, blob.name)
            if manifest.get(blob.name) == blob.generation and os.path.exists(target):
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            partial = target + ".download"
            blob.download_to_filename(partial, **call_settings())
            os.replace(partial, target)
            manifest[blob.name] = blob.generation
        # Objects deleted from the bucket since the last download leave the cache too.
        for name in set(manifest) - {blob.name for blob in blobs}:
            if only is not None and not only(name[len(prefix):].lstrip("/")):
                continue  # not asked for this time
            stale = local_file_for(local_dir, prefix, name)
            if os.path.exists(stale):
                os.remove(stale)
            del manifest[name]
    os.makedirs(local_dir, exist_ok=True)
    atomic_write_text(manifest_path, json.dumps(manifest))
    return local_dir


def read_text(path):
    """The text of the single object gs://bucket/name, or None if there is no such object."""
    from google.api_core import exceptions

    bucket, name = split(path)
    with clear_errors(path):
        try:
            return client().bucket(bucket).blob(name).download_as_text(**call_settings())
        except exceptions.NotFound:
            return None  # a missing bucket is reported when the run's files are fetched


def local_input(path):
    """A local directory with the contents of `path` (itself when local)."""
    return download(path) if is_remote(path) else path


class Uploader:
    """Uploads the new and changed files of `local_dir` to `remote`, and deletes the objects of
    files it uploaded that have since been removed (old checkpoints)."""

    def __init__(self, local_dir, remote):
        self.local_dir = local_dir
        self.bucket_name, self.prefix = split(remote)
        self.remote = remote
        self._uploaded = {}  # relative path -> (size, mtime_ns)
        self._lock = threading.Lock()
        with clear_errors(remote):
            self._bucket = client().bucket(self.bucket_name)

    def _object_name(self, relative):
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def local_files(self, include=None):
        """{relative path: (size, mtime_ns)} of the finished files (not those being written)."""
        files = {}
        for root, _, names in os.walk(self.local_dir):
            for name in names:
                path = os.path.join(root, name)
                relative = os.path.relpath(path, self.local_dir).replace(os.sep, "/")
                parts = relative.split("/")
                if (is_temporary(path) or name in (MANIFEST, LOCK_FILE) or name.endswith(".download")
                        or any(p.endswith((".tmp", ".old")) for p in parts[:-1])
                        or (include is not None and parts[0] not in include)):
                    continue  # unfinished writes: a temporary file or a staged SavedModel
                try:
                    stat = os.stat(path)
                except FileNotFoundError:
                    continue  # removed while we looked
                files[relative] = (stat.st_size, stat.st_mtime_ns)
        return files

    def mark_synced(self):
        """Counts the files just downloaded from the bucket (its manifest's) as uploaded; files
        only here, left by an earlier run whose uploads failed, go up at the next sync."""
        try:
            with open(os.path.join(self.local_dir, MANIFEST)) as f:
                downloaded = {name[len(self.prefix):].lstrip("/") for name in json.load(f)}
        except (FileNotFoundError, ValueError):
            downloaded = set()
        self._uploaded = {relative: stat for relative, stat in self.local_files().items() if relative in downloaded}

    def sync(self, include=None):
        """Uploads what changed and deletes what was removed; returns the files now in sync."""
        from google.api_core import exceptions

        with self._lock, clear_errors(self.remote):
            present = self.local_files(include)
            for relative, stat in present.items():
                if self._uploaded.get(relative) != stat:
                    path = os.path.join(self.local_dir, relative)
                    self._bucket.blob(self._object_name(relative)).upload_from_filename(path, **call_settings())
                    self._uploaded[relative] = stat
            for relative in set(self._uploaded) - set(present):
                try:
                    self._bucket.blob(self._object_name(relative)).delete(**call_settings())
                except exceptions.NotFound:
                    pass  # already gone: a retried delete whose first try had succeeded
                del self._uploaded[relative]
            return present


@contextlib.contextmanager
def local_output(path):
    """A local directory for output `path`; for gs:// paths, kept in sync with the bucket."""
    if not is_remote(path):
        yield path
        return
    local_dir = download(path, allow_empty=True)  # what an earlier run left, to resume it
    uploader = Uploader(local_dir, path)
    uploader.mark_synced()
    stop = threading.Event()

    def keep_syncing():
        failing = False
        while not stop.wait(SYNC_SECONDS):
            try:
                uploader.sync()
                failing = False
            except UserError as e:  # the run goes on; the next sync, and the final one, try again
                if not failing:
                    logging.warning("Upload to %s failing, will retry; everything stays in %s: %s", path, local_dir, e)
                failing = True

    thread = threading.Thread(target=keep_syncing, daemon=True)
    thread.start()
    try:
        yield local_dir
    finally:
        stop.set()
        thread.join()
        try:
            uploader.sync()
        except UserError as e:
            raise UserError(f"{e}; what was not uploaded is kept in {local_dir}, and rerunning the command "
                            "uploads it") from None


def publish(local_dir, remote, include=None):
    """Uploads the files of `local_dir` (only its entries named in `include`, if given) to
    `remote`; returns the relative paths uploaded."""
    if not os.path.isdir(local_dir):
        raise UserError(f"{local_dir!r} is not a directory")
    return sorted(Uploader(local_dir, remote).sync(include))
