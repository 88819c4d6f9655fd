"""Importing the TensorFlow backend prints nothing (TensorFlow's C++ start-up messages are held back), and
a failed TensorFlow import still shows what TensorFlow wrote, with the install line."""

from __future__ import annotations

import os
import subprocess
import sys

from rlgraph.plugins.providers import install_hint


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
    assert f"rlgraph-tf needs TensorFlow: {install_hint('rlgraph-tf[cpu]')}" in result.stderr
    assert "broken build" in result.stderr


def test_grappler_is_on_unless_the_environment_turns_it_off():
    import tensorflow as tf

    import rlgraph_tf  # noqa: F401 - read the variable at its import

    off = os.environ.get("RLGRAPH_TF_OPTIMIZE_GRAPHS") == "0"  # the nox sessions turn it off
    assert tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False) is off
    result = _import_backend({**os.environ, "RLGRAPH_TF_OPTIMIZE_GRAPHS": "no"})
    assert result.returncode != 0
    assert "RLGRAPH_TF_OPTIMIZE_GRAPHS is 0 (Grappler off) or 1 (on, the default), got 'no'" in result.stderr
