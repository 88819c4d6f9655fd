"""The self-written TensorBoard event files, read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from test_training_support import Recorder, read_progress, run_spec, tabular_agent_registered

from rlgraph.training import EventFileWriter, Trainer, load_run_spec
from rlgraph.training.tensorboard import crc32c, masked_crc32c

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


@pytest.fixture
def tabular(tmp_path, monkeypatch):
    """A temporary current folder, with the tabular agent registered on the NumPy backend."""
    monkeypatch.chdir(tmp_path)
    with tabular_agent_registered():
        yield tmp_path


def accumulate(folder):
    accumulator = event_accumulator.EventAccumulator(str(folder), size_guidance={"scalars": 0})
    accumulator.Reload()
    return accumulator


def test_crc32c_matches_published_check_values():
    # CRC-32C check value (RFC 3720 appendix B.4 lists the same polynomial's test vectors).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeros
    assert crc32c(b"\xff" * 32) == 0x62A8AB43  # RFC 3720 B.4: 32 bytes of 0xff
    assert crc32c(bytes(range(32))) == 0x46DD794E  # RFC 3720 B.4: incrementing bytes
    crc = crc32c(b"123456789")
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_scalars_read_back_with_their_steps_and_tags(tmp_path):
    writer = EventFileWriter(tmp_path)
    writer.add_scalars(0, {"a": 1.5, "b/c": -2.25})
    writer.add_scalars(10, {"a": 3.0, "skipped": None})
    writer.add_scalars(2**40, {"a": 1e-30})
    writer.close()
    events = accumulate(tmp_path)
    assert sorted(events.Tags()["scalars"]) == ["a", "b/c"]
    assert [(e.step, e.value) for e in events.Scalars("a")] == [
        (0, 1.5),
        (10, 3.0),
        (2**40, pytest.approx(1e-30)),
    ]
    assert [(e.step, e.value) for e in events.Scalars("b/c")] == [(0, -2.25)]


def test_a_corrupted_record_fails_the_readers_checksum(tmp_path):
    writer = EventFileWriter(tmp_path)
    writer.add_scalars(1, {"a": 1.0})
    writer.close()
    data = bytearray(writer.path.read_bytes())
    # The second record starts after the first: 8 length + 4 crc + payload + 4 crc.
    (first_length,) = struct.unpack("<Q", data[:8])
    data[8 + 4 + first_length + 4 + 12] ^= 0xFF  # a byte of the second record's payload
    writer.path.write_bytes(bytes(data))
    events = accumulate(tmp_path)
    assert "a" not in events.Tags()["scalars"]


def test_training_run_writes_episode_loss_and_evaluation_scalars(tabular):
    recorder = Recorder()
    Trainer(load_run_spec(run_spec()), tabular / "run", observers=[recorder]).run()
    events = accumulate(tabular / "run")
    rows = read_progress(tabular / "run")

    episode_returns = events.Scalars("episode/return")
    assert [e.step for e in episode_returns] == [t for *_, t in recorder.episodes]
    np.testing.assert_array_equal(
        [e.value for e in episode_returns], np.float32([r for r, *_ in recorder.episodes])
    )
    assert [e.value for e in events.Scalars("episode/length")] == [float(n) for _, n, _ in recorder.episodes]

    evaluations = [(int(r["timesteps"]), float(r["eval_mean_return"])) for r in rows if r["eval_mean_return"]]
    assert [(e.step, e.value) for e in events.Scalars("eval/mean_return")] == evaluations
    assert [e.step for e in events.Scalars("train/loss")] == [t for *_, t in recorder.updates]
    np.testing.assert_allclose(
        [e.value for e in events.Scalars("train/loss")], np.float32([loss for _, loss, _ in recorder.updates])
    )
    assert [e.step for e in events.Scalars("train/steps_per_second")] == [int(r["timesteps"]) for r in rows]
    mean_returns = [(int(r["timesteps"]), float(r["mean_return"])) for r in rows if r["mean_return"]]
    assert [(e.step, e.value) for e in events.Scalars("train/mean_return")] == [
        (t, pytest.approx(v, rel=1e-6)) for t, v in mean_returns
    ]


def test_a_progress_rows_executor_counts_become_executor_scalars(tmp_path):
    from rlgraph.training.tensorboard import TensorBoardWriter

    writer = TensorBoardWriter(tmp_path)
    writer.write_row(
        {"timesteps": 100, "mean_return": 9.0, "executor": {"worker_restarts": 1, "replay_ratio": 0.5}}
    )
    writer.close()
    events = accumulate(tmp_path)
    assert {"executor/worker_restarts", "executor/replay_ratio", "train/mean_return"} <= set(
        events.Tags()["scalars"]
    )
    assert [(e.step, e.value) for e in events.Scalars("executor/replay_ratio")] == [(100, 0.5)]


def test_the_update_metrics_means_are_progress_columns_and_scalars(tabular):
    """The tabular agent reports its largest TD error per update; each progress row holds the mean over its
    updates, as column and scalar ``update/max_td_error``."""
    Trainer(load_run_spec(run_spec()), tabular / "run").run()
    rows = read_progress(tabular / "run")
    logged = [
        (int(r["timesteps"]), float(r["update/max_td_error"])) for r in rows if r["update/max_td_error"]
    ]
    assert logged and all(value >= 0.0 for _, value in logged)
    scalars = accumulate(tabular / "run").Scalars("update/max_td_error")
    assert [(e.step, e.value) for e in scalars] == [(t, pytest.approx(v, rel=1e-6)) for t, v in logged]
