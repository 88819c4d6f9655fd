"""Importing the TensorFlow backend prints nothing (TensorFlow's C++ start-up messages are held back), and
a failed TensorFlow import still shows what TensorFlow wrote, with the install line."""

from __future__ import annotations

import os
import subprocess
import sys


def _import_backend(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import rlgraph_tf.backend; print('imported')"
    return subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )


def test_the_backend_imports_without_tensorflow_chatter():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = _import_backend(env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "imported\n"
    assert result.stderr == ""


def test_a_failed_tensorflow_import_shows_what_it_wrote(tmp_path):
    broken = tmp_path / "tensorflow"
    broken.mkdir()
    (broken / "__init__.py").write_text(
        "import os\nos.write(2, b'libtensorflow: missing symbol\\n')\nraise ImportError('broken build')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = _import_backend(env)
    assert result.returncode != 0
    assert "libtensorflow: missing symbol" in result.stderr
    assert "rlgraph-tf needs TensorFlow: pip install 'rlgraph-tf[cpu]'" in result.stderr
    assert "broken build" in result.stderr
