"""Progress rows: the CSV log and the one-line display."""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from rlgraph.errors import ProgressFileError
from rlgraph.graph.checkpoint import run_write_error

COLUMNS = (
    "timesteps",
    "episodes",
    "updates",
    "wall_seconds",
    "steps_per_second",
    "mean_return",
    "loss",
    "eval_mean_return",
)
"""The columns of ``progress.csv``: one row per log point. ``steps_per_second`` is the rate since the
previous row (evaluation excluded); ``mean_return`` is the mean over the last
:data:`RECENT_EPISODES` training episodes (with exploration); ``eval_mean_return`` the greedy
evaluation's mean, in rows where one ran."""
RECENT_EPISODES = 100


UPDATE_PREFIX = "update/"
"""The prefix of the columns of the agent's update metrics (``update/critic_loss``, ...): each the mean over
the row's updates. They join the columns as updates first report them."""


class ProgressLog:
    """Writes progress rows to a CSV file, flushed after each row.

    ``after``: go on with the file of a run resumed after that many time steps, keeping its rows (and
    columns) up to there (later ones came from steps the resumed run does again); None starts a new file.
    ``extra_columns`` follow :data:`COLUMNS`: what the run's executor counts (its ``metrics()``). A row's
    ``update/<name>`` values not yet among the columns widen them: the file is written anew with them (the
    earlier rows' cells empty).
    """

    def __init__(
        self, path: str | os.PathLike, after: int | None = None, extra_columns: tuple[str, ...] = ()
    ) -> None:
        self.path = Path(path)
        header, kept = (
            _rows_up_to(self.path, after) if after is not None and self.path.is_file() else ((), [])
        )
        self.columns = tuple(dict.fromkeys((*COLUMNS, *extra_columns, *header)))
        self._file: TextIO
        self._failed = False  # a write failed: closing may fail too
        self._rewrite(kept)

    def write_row(self, row: Mapping[str, Any]) -> None:
        new = [key for key in row if key.startswith(UPDATE_PREFIX) and key not in self.columns]
        if new:
            self.columns = (*self.columns, *new)
            self._file.close()
            self._rewrite(_rows_up_to(self.path, None)[1])
        cells = [_csv_value(row.get(column)) for column in self.columns]
        try:
            self._writer.writerow(cells)
            self._file.flush()
        except OSError as error:
            self._failed = True
            raise run_write_error(
                self.path, sum(len(str(cell)) + 1 for cell in cells), error, "progress file"
            ) from error

    def close(self) -> None:
        """Close the file (quietly where a write failed: the rows it could not write are lost)."""
        try:
            self._file.close()
        except OSError:
            if not self._failed:
                raise

    def _rewrite(self, rows: list[dict[str, str]]) -> None:
        """The file anew: the columns, then ``rows`` (cells by column); opened to append."""
        temporary = self.path.with_name(f".{self.path.name}.tmp")  # the old file stays whole until replaced
        try:
            with open(temporary, "w", newline="", encoding="utf-8") as file:
                writer = csv.writer(file, lineterminator="\n")
                writer.writerow(self.columns)
                writer.writerows([row.get(column, "") for column in self.columns] for row in rows)
            os.replace(temporary, self.path)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            needed = sum(len(column) + 1 for column in self.columns) * (len(rows) + 1)
            raise run_write_error(self.path, needed, error, "progress file") from error
        self._file = open(self.path, "a", newline="", encoding="utf-8")  # noqa: SIM115 - until close()
        self._writer = csv.writer(self._file, lineterminator="\n")


def read_progress(path: str | os.PathLike) -> list[dict[str, float | None]]:
    """The rows a :class:`ProgressLog` wrote: each of its columns a float, or None where the row has no value.
    A file that cannot be read so is a :class:`~rlgraph.errors.ProgressFileError` naming its line."""
    path = Path(path)
    _, rows = _read_rows(path)
    return [
        {column: _number(path, line, column, value) for column, value in row.items() if column is not None}
        for line, row in rows
    ]


def check_progress(path: str | os.PathLike) -> None:
    """Raise :class:`~rlgraph.errors.ProgressFileError` unless the progress file at ``path`` (where there is
    one) can be read and trimmed as a resumed run's :class:`ProgressLog` does it."""
    path = Path(path)
    if path.is_file():
        _rows_up_to(path, None)


def _rows_up_to(path: Path, timesteps: int | None) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """A progress file's columns and its rows (cells as text, by column) up to ``timesteps`` (None: all)."""
    header, rows = _read_rows(path)
    if header and "timesteps" not in header:
        raise ProgressFileError(
            f"progress file {str(path)!r} has no 'timesteps' column (line 1 names {', '.join(map(repr, header))}), "
            f"so the rows to keep cannot be told. {_REPAIR} (its first line names the columns, "
            f"{', '.join(COLUMNS)}, ...)."
        )
    kept = []
    for line, row in rows:
        steps = _number(path, line, "timesteps", row["timesteps"])
        if steps is None:
            raise ProgressFileError(f"progress file {str(path)!r}: line {line} has no timesteps. {_REPAIR}.")
        if timesteps is None or steps <= timesteps:
            kept.append(row)
    return header, kept


_REPAIR = "Repair the file, or move it aside: a resumed run then starts a new one"


def _read_rows(path: Path) -> tuple[tuple[str, ...], list[tuple[int, dict[str, str]]]]:
    """A progress file's columns and its rows, each with the number of the line it ends on."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")  # a file saved with a byte order mark (a spreadsheet's) reads too
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ProgressFileError(
            f"progress file {str(path)!r} is not UTF-8 text: line {line} holds byte 0x{data[error.start]:02x} "
            f"(at byte offset {error.start:,}). {_REPAIR}."
        ) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as error:
        raise ProgressFileError(
            f"progress file {str(path)!r}: line {reader.line_num} is not CSV ({error}). {_REPAIR}."
        ) from None
    return tuple(reader.fieldnames or ()), rows


def _number(path: Path, line: int, column: str, value: str | None) -> float | None:
    """A progress cell as a float (None where empty); ProgressFileError naming the line where it is no number."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise ProgressFileError(
            f"progress file {str(path)!r}: line {line} holds {value!r} as {column}, which is not a number. {_REPAIR}."
        ) from None


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return format(value, ".7g") if isinstance(value, float) else value


class ProgressDisplay:
    """Shows progress rows on ``stream`` (default: standard error).

    On a terminal, one line redrawn in place, at most every :attr:`REDRAW_SECONDS`; elsewhere (a
    log file, CI) a plain line at most every :attr:`LINE_SECONDS`. Both show the latest greedy
    evaluation. Notices (:meth:`notice`: a compile that takes a while) go on lines of their own above
    it. ``enabled=False`` shows nothing.
    """

    REDRAW_SECONDS = 0.1
    LINE_SECONDS = 10.0
    BAR_WIDTH = 12

    def __init__(self, total_timesteps: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total_timesteps
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.in_place = enabled and _is_terminal(self.stream)
        self._last_shown = -math.inf
        self._drawn = False
        self._line = ""
        self._last_eval: float | None = None

    def update(self, row: Mapping[str, Any]) -> None:
        """Show ``row`` (a progress row), unless the last one was shown too recently."""
        evaluated = row.get("eval_mean_return") is not None
        if evaluated:
            self._last_eval = row["eval_mean_return"]
        now = time.monotonic()
        pause = self.REDRAW_SECONDS if self.in_place else self.LINE_SECONDS
        if not self.enabled or now - self._last_shown < pause:
            return
        self._last_shown = now
        line = self.format(row)
        if self.in_place:
            width = shutil.get_terminal_size().columns - 1
            self._line = line[:width]
            self.stream.write("\r" + self._line + "\x1b[K")
            self._drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def format(self, row: Mapping[str, Any]) -> str:
        """The text of one progress line, most important first (a narrow terminal cuts the end)."""
        done = row["timesteps"]
        filled = min(self.BAR_WIDTH, self.BAR_WIDTH * done // max(self.total, 1))
        parts = [f"[{'#' * filled}{'.' * (self.BAR_WIDTH - filled)}] {done:,}/{self.total:,}"]
        if row.get("mean_return") is not None:
            parts.append(f"return {row['mean_return']:.4g}")
        if self._last_eval is not None:
            parts.append(f"eval {self._last_eval:.4g}")
        if row.get("loss") is not None:
            parts.append(f"loss {row['loss']:.3g}")
        parts.append(f"{row['steps_per_second']:,.0f} steps/s")
        parts.append(f"{row['episodes']:,} episodes")
        return " | ".join(parts)

    def notice(self, text: str) -> None:
        """Show ``text`` on a line of its own (above the in-place line, which is drawn again under it)."""
        if not self.enabled:
            return
        if self._drawn:
            self.stream.write("\r" + text + "\x1b[K\n" + self._line)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    @contextlib.contextmanager
    def showing_notices(self, logger: str) -> Iterator[None]:
        """Within the block, show ``logger``'s records of INFO and above as notices. Where that logger
        would drop INFO records, it takes them meanwhile and keeps them from its ancestors' handlers
        (which were not asked to show them); its settings are restored afterwards."""
        if not self.enabled:
            yield
            return
        target = logging.getLogger(logger)
        handler = _NoticeHandler(self)
        level, propagate = target.level, target.propagate
        if not target.isEnabledFor(logging.INFO):
            target.setLevel(logging.INFO)
            target.propagate = False
        target.addHandler(handler)
        try:
            yield
        finally:
            target.removeHandler(handler)
            target.setLevel(level)
            target.propagate = propagate

    def close(self) -> None:
        """End the in-place line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


class _NoticeHandler(logging.Handler):
    """Log records as a display's notices."""

    def __init__(self, display: ProgressDisplay) -> None:
        super().__init__(logging.INFO)
        self.display = display

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.display.notice(record.getMessage())
        except (OSError, ValueError):  # a closed or broken stream: a notice never stops training
            self.handleError(record)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
