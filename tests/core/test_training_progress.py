"""The progress display (in place on a terminal, plain lines elsewhere) and the CSV log's cells."""

from __future__ import annotations

import csv
import io
import logging

import pytest

from rlgraph.training import ProgressDisplay, ProgressLog
from rlgraph.training.progress import COLUMNS

ROW = {
    "timesteps": 2500,
    "episodes": 1234,
    "updates": 600,
    "wall_seconds": 1.5,
    "steps_per_second": 7512.4,
    "mean_return": 45.25,
    "loss": 0.012345,
    "eval_mean_return": None,
}


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_redraws_one_line_in_place_and_ends_it_on_close(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    stream = Terminal()
    display = ProgressDisplay(10_000, stream=stream)
    display.REDRAW_SECONDS = 0.0
    display.update(ROW)
    display.update({**ROW, "timesteps": 5000, "eval_mean_return": 120.5})
    display.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.count("\x1b[K") == 2 and text.endswith("\n")
    first, second = (part.removesuffix("\x1b[K") for part in text.strip("\n").split("\r")[1:])
    assert first == (
        "[###.........] 2,500/10,000 | return 45.25 | loss 0.0123 | 7,512 steps/s | 1,234 episodes"
    )
    assert second.startswith("[######......] 5,000/10,000 | return 45.25 | eval 120.5 |")


def test_terminal_lines_are_cut_to_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    stream = Terminal()
    ProgressDisplay(10_000, stream=stream).update(ROW)
    assert stream.getvalue() == "\r" + "[###.........] 2,500/10,000 | return 45"[:39] + "\x1b[K"


def test_elsewhere_plain_lines_at_most_every_line_seconds():
    stream = io.StringIO()
    display = ProgressDisplay(10_000, stream=stream)
    for timesteps in (1000, 2000, 3000):
        display.update({**ROW, "timesteps": timesteps})
    display.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[#...........] 1,000/10,000 |")
    assert "\r" not in stream.getvalue()


def test_disabled_display_shows_nothing():
    stream = Terminal()
    display = ProgressDisplay(10, stream=stream, enabled=False)
    display.update(ROW)
    display.close()
    assert stream.getvalue() == ""


def test_csv_rows_have_every_column_and_empty_cells_for_missing_values(tmp_path):
    log = ProgressLog(tmp_path / "progress.csv")
    log.write_row(ROW)
    log.write_row({**ROW, "loss": None, "eval_mean_return": -4.0, "mean_return": 1e-12})
    log.close()
    with open(tmp_path / "progress.csv", newline="") as file:
        header, *rows = list(csv.reader(file))
    assert tuple(header) == COLUMNS
    assert rows[0] == ["2500", "1234", "600", "1.5", "7512.4", "45.25", "0.012345", ""]
    assert rows[1][5:] == ["1e-12", "", "-4"]
    assert b"\r" not in (tmp_path / "progress.csv").read_bytes()


def test_an_executors_own_counts_follow_the_columns(tmp_path):
    path = tmp_path / "progress.csv"
    log = ProgressLog(path, extra_columns=("worker_restarts", "replay_ratio"))
    log.write_row({"timesteps": 10, "worker_restarts": 1, "replay_ratio": 0.5, "executor": {"ignored": 1}})
    log.close()
    rows = list(csv.reader(path.open()))
    assert rows[0] == [*COLUMNS, "worker_restarts", "replay_ratio"]
    assert rows[1][0] == "10" and rows[1][-2:] == ["1", "0.5"]


def test_a_notice_goes_on_a_line_of_its_own_above_the_in_place_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    stream = Terminal()
    display = ProgressDisplay(10_000, stream=stream)
    display.notice("before any row")
    display.update(ROW)
    display.notice("rlgraph: compiling 'update'...")
    display.close()
    line = display.format(ROW)
    assert stream.getvalue() == (
        f"before any row\n\r{line}\x1b[K\rrlgraph: compiling 'update'...\x1b[K\n{line}\n"
    )
    plain = io.StringIO()
    elsewhere = ProgressDisplay(10_000, stream=plain)
    elsewhere.update(ROW)
    elsewhere.notice("a notice")
    assert plain.getvalue() == f"{line}\na notice\n"
    disabled = Terminal()
    ProgressDisplay(10, stream=disabled, enabled=False).notice("a notice")
    assert disabled.getvalue() == ""


def test_a_loggers_info_records_are_shown_as_notices_within_the_block_only():
    stream = io.StringIO()
    display = ProgressDisplay(10, stream=stream)
    logger = logging.getLogger("rlgraph.test-notices")
    logger.info("before: not shown")
    with display.showing_notices("rlgraph.test-notices"):
        logger.debug("debug: not shown")
        logger.info("shown %s", "once")
        # Taken from a logger that would drop INFO: not passed on to handlers that were not asked.
        assert logger.level == logging.INFO and not logger.propagate
    logger.info("after: not shown")
    assert stream.getvalue() == "shown once\n"
    assert logger.level == logging.NOTSET and logger.propagate and not logger.handlers
    quiet = io.StringIO()
    with ProgressDisplay(10, stream=quiet, enabled=False).showing_notices("rlgraph.test-notices"):
        logger.info("not shown: the display is off")
    assert quiet.getvalue() == "" and not logger.handlers


def test_update_metrics_widen_the_columns_and_a_resumed_run_keeps_them(tmp_path):
    path = tmp_path / "progress.csv"
    log = ProgressLog(path)
    log.write_row({**ROW, "timesteps": 100, "loss": None})  # before the first update: no metrics
    log.write_row({**ROW, "timesteps": 200, "update/critic_loss": 0.5})
    log.write_row({**ROW, "timesteps": 300, "update/critic_loss": 0.25, "update/alpha": 0.1})
    log.close()
    header, *rows = list(csv.reader(path.open()))
    assert header == [*COLUMNS, "update/critic_loss", "update/alpha"]
    assert [row[-2:] for row in rows] == [["", ""], ["0.5", ""], ["0.25", "0.1"]]

    resumed = ProgressLog(path, after=200)  # a checkpoint at 200: the row at 300 is done again
    resumed.write_row({**ROW, "timesteps": 300, "update/critic_loss": 0.2})
    resumed.close()
    header, *rows = list(csv.reader(path.open()))
    assert header == [*COLUMNS, "update/critic_loss", "update/alpha"]
    assert [(row[0], row[-2:]) for row in rows] == [
        ("100", ["", ""]),
        ("200", ["0.5", ""]),
        ("300", ["0.2", ""]),
    ]
    assert b"\r" not in path.read_bytes(), "LF line endings, written anew and appended"


def test_a_resumed_log_reads_a_file_saved_with_a_byte_order_mark_and_keeps_its_rows(tmp_path):
    path = tmp_path / "progress.csv"
    path.write_bytes("\ufefftimesteps,episodes\r\n100,2\r\n200,4\r\n300,6\r\n".encode())
    log = ProgressLog(path, after=200)
    log.close()
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(row["timesteps"], row["episodes"]) for row in rows] == [("100", "2"), ("200", "4")]


def test_reading_a_damaged_progress_file_names_it_and_the_line(tmp_path):
    import pytest

    from rlgraph.errors import ProgressFileError
    from rlgraph.training.progress import read_progress

    path = tmp_path / "progress.csv"
    path.write_bytes(b"timesteps,loss\n100,0.5\n200,0.\x00\x9f\n")
    with pytest.raises(
        ProgressFileError, match=r"is not UTF-8 text: line 3 holds byte 0x9f \(at byte offset 30\)"
    ):
        read_progress(path)
    with pytest.raises(ProgressFileError, match=r"is not UTF-8 text: line 3"):
        ProgressLog(path, after=100)
    path.write_text("timesteps,loss\n100,0.5\n200,nope\n")
    with pytest.raises(ProgressFileError, match=r"line 3 holds 'nope' as loss, which is not a number"):
        read_progress(path)
    assert path.read_text() == "timesteps,loss\n100,0.5\n200,nope\n"  # refused, unchanged


PROGRESS_PAST_A_LIMIT = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
from rlgraph.errors import RunWriteError
from rlgraph.training import ProgressLog
log = ProgressLog(sys.argv[1])
try:
    for step in range(1000):
        log.write_row({"timesteps": step, "mean_return": 1.5})
except RunWriteError as error:
    log.close()  # quietly: the row it could not write is lost
    print(error)
"""


def test_a_progress_row_that_cannot_be_written_is_a_run_write_error_naming_the_file(tmp_path):
    import os
    import subprocess
    import sys

    pytest.importorskip("resource")
    path = tmp_path / "progress.csv"
    done = subprocess.run(
        [sys.executable, "-c", PROGRESS_PAST_A_LIMIT, str(path)],
        env={
            key: value for key, value in os.environ.items() if key != "COVERAGE_PROCESS_CONFIG"
        },  # (its data)
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith(f"could not write progress file {str(path)!r}: File too large (EFBIG)")
    assert "raise the file size limit (ulimit -f: 2 kB now)" in done.stdout
    assert path.stat().st_size <= 2000 and path.read_text().splitlines()[0].startswith("timesteps")
