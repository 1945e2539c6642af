"""The docs: the site builds with `mkdocs build --strict` (no broken link, no page left out of the
nav), the README stays a front page, and every `python -m` module the docs name exists."""

import glob
import importlib.util
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)


def test_the_docs_site_builds_strictly(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "failures" / "index.html").exists()


def test_the_readme_is_a_front_page():
    with open(os.path.join(ROOT, "README.md")) as f:
        assert len(f.read().splitlines()) <= 250


def test_every_module_the_docs_run_exists():
    paths = [os.path.join(ROOT, "README.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md"))
    modules = set()
    for path in paths:
        with open(path) as f:
            modules |= set(re.findall(r"python -m (rlkit[\w.]*)", f.read()))
    assert {"rlkit.rl.trainer_model_based", "rlkit.rl.lab", "rlkit.rl.analysis.check_model_drift"} <= modules
    missing = sorted(m for m in modules if importlib.util.find_spec(m) is None)
    assert not missing, missing
