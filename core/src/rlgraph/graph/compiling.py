"""Compile time: how a backend that compiles API methods counts it, and tells of a slow compile.

A compiling backend's API method (see :meth:`~rlgraph.plugins.hookspecs.BackendHooks.compile_api_method`)
keeps a :class:`CompileClock`. The backend starts it where a compile begins (its first trace of the
Python function for new constants or input shapes) and stops it once the call that compiled returns;
the clock adds up the seconds (tracing, lowering, compiling or loading from a cache, and that call's
one run). A compile still under way after :data:`NOTICE_SECONDS` is announced at INFO on the
:data:`LOGGER` logger while it runs, and its end with the seconds it took; quicker compiles say
nothing. Between compiles a clock costs its caller one attribute read per call.

``rlgraph train`` shows these notices on its progress display (see
:meth:`~rlgraph.training.progress.ProgressDisplay.showing_notices`); elsewhere they go wherever the
application's logging sends ``rlgraph``'s INFO records (by default nowhere).
"""

from __future__ import annotations

import logging
import threading
import time

LOGGER = "rlgraph.compile"
"""The logger of compile notices."""
NOTICE_SECONDS = 2.0
"""A compile that takes longer than this is announced while it runs."""

_log = logging.getLogger(LOGGER)


class CompileClock:
    """The compile time of one API method.

    ``method`` names it in notices, ``backend`` too; ``cache``: where the backend keeps compiled
    programs between runs (named once a slow compile ends), or None.
    """

    def __init__(self, method: str, backend: str, cache: str | None = None) -> None:
        self.method, self.backend, self.cache = method, backend, cache
        #: Seconds spent compiling, over every compile so far.
        self.seconds = 0.0
        #: How many compiles were timed.
        self.compiles = 0
        #: Whether a compile is under way (read on every call: a plain attribute).
        self.running = False
        self._started = 0.0
        self._timer: threading.Timer | None = None
        self._announced = False
        self._lock = threading.Lock()

    def start(self) -> None:
        """A compile begins (nothing happens while one is under way already)."""
        if self.running:
            return
        self.running, self._announced = True, False
        self._started = time.perf_counter()
        if _log.isEnabledFor(logging.INFO):  # no thread where nobody listens
            self._timer = threading.Timer(NOTICE_SECONDS, self._announce)
            self._timer.daemon = True
            self._timer.start()

    def stop(self) -> float:
        """The compile under way has ended: add its seconds (returned; 0.0 where none was under way)."""
        if not self.running:
            return 0.0
        seconds = time.perf_counter() - self._started
        with self._lock:
            self.running = False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            announced = self._announced
        self.seconds += seconds
        self.compiles += 1
        if announced:
            kept = f"; kept in {self.cache} for later runs" if self.cache else ""
            _log.info("rlgraph: compiled %r in %.1f s%s.", self.method, seconds, kept)
        return seconds

    def _announce(self) -> None:
        """The timer thread's notice of a compile that is taking a while."""
        with self._lock:  # held while logging: the end of the compile is told after this
            if not self.running:
                return
            self._announced = True
            _log.info(
                "rlgraph: compiling %r on %s (its first call with these input shapes; this takes a while "
                "once)...",
                self.method,
                self.backend,
            )
