"""RLgraph TensorFlow backend.

Importing the package imports TensorFlow once, quietly: TensorFlow's C++ start-up messages (absl writes
them to standard error before any log level applies, whatever ``TF_CPP_MIN_LOG_LEVEL`` says) are
held back, and shown only if the import fails.

``RLGRAPH_TF_OPTIMIZE_GRAPHS=0`` turns Grappler, TensorFlow's optimizer of a graph before its first run, off
in the process: each traced method's first call comes sooner (the test sessions set it: an agent's build and
first update take about a fifth less), its runs may be slower.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import IO

from rlgraph.plugins.providers import install_hint


def _import_tensorflow_quietly() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "tensorflow" in sys.modules:
        return
    with tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        stderr = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        except ImportError as error:
            _show_held(held, stderr)
            raise ImportError(
                f"rlgraph-tf needs TensorFlow: {install_hint('rlgraph-tf[cpu]')} (tensorflow-cpu) or "
                f"{install_hint('rlgraph-tf[gpu]')}"
            ) from error
        except BaseException:
            _show_held(held, stderr)
            raise
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)


def _show_held(held: IO[bytes], stderr: int) -> None:
    """What TensorFlow wrote while its import failed, on standard error after all."""
    os.dup2(stderr, 2)
    held.seek(0)
    sys.stderr.write(held.read().decode(errors="replace"))


def _optimize_graphs_as_asked() -> None:
    value = os.environ.get("RLGRAPH_TF_OPTIMIZE_GRAPHS", "1")
    if value not in ("0", "1"):
        raise ValueError(
            f"RLGRAPH_TF_OPTIMIZE_GRAPHS is 0 (Grappler off) or 1 (on, the default), got {value!r}"
        )
    if value == "0":
        import tensorflow as tf

        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


_import_tensorflow_quietly()
_optimize_graphs_as_asked()
