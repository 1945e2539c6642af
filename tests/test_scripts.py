import ast
import glob
import os

import pytest

SCRIPTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
SCRIPTS = sorted(glob.glob(os.path.join(SCRIPTS_DIR, "*.py")))
# What starts TensorFlow's runtime when imported: TensorFlow and Keras, and the scripts that
# other scripts import (bench_world_model, bench_dreamer), which import them.
STARTS_TENSORFLOW = {"tensorflow", "keras", "tensorflow_probability"} | {
    os.path.splitext(os.path.basename(path))[0] for path in SCRIPTS}


def top_level_imports(path):
    """(line, top-level package) of each import a module makes as it loads."""
    tree = ast.parse(open(path).read(), path)
    imports = []
    for node in tree.body:
        for statement in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(statement, ast.Import):
                imports += [(statement.lineno, alias.name.split(".")[0]) for alias in statement.names]
            elif isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0:
                imports.append((statement.lineno, statement.module.split(".")[0]))
    return imports


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_a_script_imports_rlkit_before_tensorflow(path):
    """rlkit turns TensorFlow's oneDNN kernels on when it is imported first (TensorFlow leaves them
    off on CPUs without AVX-512, such as AMD's): a benchmark or profile that imports TensorFlow
    first times other kernels than the commands run (SimPLe's world-model step 1.6x slower on
    the AMD machine)."""
    imports = top_level_imports(path)  # ast.walk's order inside an if or try is not the source's: by line
    first_tensorflow = min((line for line, package in imports if package in STARTS_TENSORFLOW), default=None)
    if first_tensorflow is None:
        return
    first_rlkit = min((line for line, package in imports if package == "rlkit"), default=None)
    assert first_rlkit is not None and first_rlkit < first_tensorflow, (
        f"{os.path.basename(path)} imports TensorFlow (line {first_tensorflow}) before rlkit")
