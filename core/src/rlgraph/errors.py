"""The exceptions RLgraph raises. Every one derives from :class:`RLGraphError`."""

from __future__ import annotations


class RLGraphError(Exception):
    """Base class of every RLgraph error."""


class SpaceError(RLGraphError, ValueError):
    """A space was misused, or a value does not fit a space."""


class SpecError(RLGraphError, ValueError):
    """A spec is malformed: unknown key, wrong value type, unknown ``type``.

    ``path`` is the dotted key path of the offending entry (``"update_spec.batch_size"``), or ``""``;
    ``problems`` holds one ``(path, message)`` per problem when several were found at once.
    """

    problems: tuple = ()

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class PluginError(RLGraphError):
    """A plugin could not be found, loaded or trusted."""


class PluginNotFoundError(PluginError, SpecError, LookupError):
    """No installed plugin has the requested name in the requested entry-point group."""

    def __init__(self, message: str, group: str = "", name: str = "", path: str = "") -> None:
        self.group = group
        self.name = name
        SpecError.__init__(self, message, path)


class PluginConflictError(PluginError):
    """Two distributions register the same name in one entry-point group."""


class PluginLoadError(PluginError):
    """A plugin was found but failed to import, or targets another plugin-API version."""


class BackendError(RLGraphError):
    """No backend is available, or the chosen one cannot be used."""


class BuildError(RLGraphError):
    """The component graph could not be assembled or built.

    Names the component (``component``), the API method (``api_method``) and, when the
    build stalled, the input spaces that never became known (``missing``).
    """

    def __init__(
        self,
        message: str,
        component: str | None = None,
        api_method: str | None = None,
        missing: list[str] | None = None,
    ) -> None:
        self.component = component
        self.api_method = api_method
        self.missing = list(missing or [])
        super().__init__(message)


class NotApplicableError(RLGraphError, TypeError):
    """An API method does not apply to a component's spaces (Q-values of continuous actions).

    Raised while the build traces a root API method (by the method or any component it calls), it
    leaves that method out of the built graph; calling it afterwards raises this error again.
    """


class APICallError(RLGraphError, ValueError):
    """An API method was called with inputs that do not fit its input spaces."""


class EnvironmentStepError(RLGraphError, ValueError):
    """An environment's step returned what its contract does not allow: a reward that is not a number, or
    ``terminated``/``truncated`` flags that are not booleans (NumPy reads the string ``"False"`` as True)."""


class CheckpointError(RLGraphError):
    """A checkpoint is missing, truncated, corrupt, or does not fit the agent."""


class RunWriteError(RLGraphError):
    """A run's file could not be written (a full disk, a file size limit, a folder without write permission):
    its ``progress.csv``, or a checkpoint (:class:`CheckpointWriteError`). A training run stops at it, keeping
    what it stored. ``folder``: where it was written; ``needed``: about how many bytes it needed there."""

    def __init__(self, message: str, folder: str = "", needed: int = 0) -> None:
        self.folder, self.needed = folder, needed
        super().__init__(message)


class CheckpointWriteError(CheckpointError, RunWriteError):
    """A checkpoint could not be written; the file it was to replace, if any, is as it was."""


class NonFiniteError(RLGraphError, FloatingPointError):
    """A NaN or infinite value: in an observed record or an external batch (refused before anything is
    kept or learned), in the states acted on (unless ``execution_spec.check_numerics`` is false), or a loss
    or its gradients (whose optimizer step changed nothing). The message names the call and the first
    non-finite value found, and where it is. ``stored``: the agent variable holding the value that made a
    loss non-finite, where the agent stored it (a memory's: its checkpoints hold it too), else None."""

    def __init__(self, message: str, stored: str | None = None) -> None:
        self.stored = stored
        super().__init__(message)


class ProgressFileError(RLGraphError):
    """A run's ``progress.csv`` cannot be read (bytes that are not UTF-8, no ``timesteps`` column, a cell that
    is not a number); the message names the file and the line."""


class RunFolderInUseError(RLGraphError):
    """Another process trains in the run folder (it holds the folder's lock)."""


class ExecutorGaveUpError(RLGraphError):
    """An executor gave up (its workers kept failing) with its learner intact: a trainer stores a checkpoint
    that ``rlgraph train --resume`` goes on from before it passes the error on."""


class LearnerGroupError(ExecutorGaveUpError):
    """A learner of a group died or failed: the group cannot step on (the leading agent's state is intact)."""


class LearnerFailedError(LearnerGroupError):
    """A learner raised an error (its own traceback is in the message)."""


REFUSALS: tuple[type[RLGraphError], ...] = (
    SpecError,
    SpaceError,
    APICallError,
    EnvironmentStepError,
    NonFiniteError,
)
"""Errors about what was given (a spec, a state, an environment's values): an executor that restarts failing
workers passes these on at once, as a new worker given the same would meet them again."""
