"""Certification: every property of a plugin's components on every installed backend, as one report.

A distribution lists its components' cases (:class:`~rlgraph.testing.parity.ParityCase`) under the
entry-point group ``rlgraph.test_cases``: ``name = "package.module:CASES"``, a list of cases or a function
returning one. :func:`certify` runs :func:`~rlgraph.testing.properties.check_properties` on each case of
a distribution (or of one component) and returns a :class:`Certificate`; ``rlgraph certify NAME`` prints
it.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rlgraph import plugins
from rlgraph.errors import PluginError
from rlgraph.plugins.providers import normalize_distribution
from rlgraph.testing import numpy_backend
from rlgraph.testing.parity import ParityCase
from rlgraph.testing.properties import (
    PROPERTIES,
    Profile,
    PropertyFailure,
    Report,
    check_properties,
    get_profile,
)
from rlgraph.utils.naming import normalize_name, suggestion_text

CASES_GROUP = "rlgraph.test_cases"


@attrs.define
class Certificate:
    """What :func:`certify` found: per case its report, or its failure; and components without a case."""

    subject: str
    components: list[str]
    backends: list[str]
    profile: Profile
    reports: list[Report] = attrs.field(factory=list)
    failures: dict[str, str] = attrs.field(factory=dict)
    uncovered: list[str] = attrs.field(factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures and not self.uncovered and bool(self.reports)

    def format(self) -> str:
        """The certificate as text: the properties by backend, exemptions, failures and the verdict."""
        examples = sum(report.examples for report in self.reports)
        alone = numpy_backend.NAME in self.backends  # the reference is one of the backends
        columns = [*self.backends, *([] if alone else [numpy_backend.NAME])]
        reference = "" if alone else " (and the NumPy reference where it builds a case)"
        sizes = (
            f"batch sizes {_sizes(self.profile.batch_sizes)}, time sizes {_sizes(self.profile.time_sizes)}; "
            f"spaces drawn: {self.profile.space_examples} per case that draws them"
        )
        cases = len(self.reports) + len(self.failures)
        lines = [
            f"RLgraph certificate: {self.subject}",
            f"  components: {', '.join(self.components) or '-'}",
            f"  backends:   {', '.join(_versioned(self.backends))}{reference}",
            f"  profile:    {self.profile.name}: {cases} cases, {examples} examples ({sizes})",
            "",
            "  " + "property".ljust(20) + "".join(column.rjust(10) for column in columns),
        ]
        for prop in PROPERTIES:
            cells = [self._cell(prop, backend) for backend in columns]
            lines.append("  " + prop.ljust(20) + "".join(cell.rjust(10) for cell in cells))
        lines.append("  (checks that held; '-': not run on that backend)")
        exempt: dict[tuple[str, str], list[str]] = {}
        for report in self.reports:
            for key, reason in report.exempt.items():
                exempt.setdefault((key, reason), []).append(report.case)
        if exempt:
            lines += ["", "  Not applicable (declared):"]
            for (key, reason), case_ids in sorted(exempt.items()):
                lines.append(f"    {key} in {len(case_ids)} case(s) ({', '.join(case_ids)}): {reason}")
        unavailable = [report.case for report in self.reports if "numpy_reference" in report.unavailable]
        if unavailable:
            lines += [
                "",
                f"  The NumPy reference cannot build {len(unavailable)} of the cases (gradients, ...).",
            ]
        if self.uncovered:
            lines += [
                "",
                f"  Components without a case (add one to {CASES_GROUP}): {', '.join(self.uncovered)}",
            ]
        if self.failures:
            lines += ["", "  Failures:"]
            for case, text in self.failures.items():
                lines.append(f"    {case}: " + text.replace("\n", "\n      "))
        verdict = "CERTIFIED" if self.passed else "NOT CERTIFIED"
        lines += ["", f"{verdict}: {self.subject} on {', '.join(self.backends)}"]
        return "\n".join(lines)

    def _cell(self, prop: str, backend: str) -> str:
        if any(failure.startswith(f"[{prop} on {backend}]") for failure in self.failures.values()):
            return "FAILED"
        count = sum(report.passed.get((prop, backend), 0) for report in self.reports)
        return str(count) if count else "-"


def certify(name: str, backends: Sequence[str] | None = None, profile: str | None = None) -> Certificate:
    """Check every property of the cases of distribution or component ``name`` on ``backends`` (default:
    every installed backend, else the core's NumPy reference; the first is the reference)."""
    from rlgraph.config import installed_backends

    backends = list(backends or installed_backends() or [numpy_backend.NAME])
    subject, components, cases = _cases_for(name)
    chosen = get_profile(profile)
    certificate = Certificate(subject, components, backends, chosen)
    certificate.uncovered = _uncovered(components, cases)
    with numpy_backend.registered(numpy_backend.NAME in backends):
        _check_cases(certificate, cases)
    return certificate


def _check_cases(certificate: Certificate, cases: list[ParityCase]) -> None:
    backends, chosen = certificate.backends, certificate.profile
    for case in cases:
        try:
            certificate.reports.append(check_properties(case, backends, profile=chosen))
        except PropertyFailure as failure:
            certificate.failures[case.id] = _failure_text(failure)
        except BaseExceptionGroup as group:  # Hypothesis found several distinct failures
            certificate.failures[case.id] = "\n".join(_failure_text(error) for error in group.exceptions)
        except Exception as error:  # noqa: BLE001 - a broken case fails its own line, not the run
            certificate.failures[case.id] = f"{type(error).__name__}: {error}"


def load_cases(entry_name: str) -> list[ParityCase]:
    """The cases one ``rlgraph.test_cases`` entry point names (a list, or a function returning one)."""
    found = plugins.load(CASES_GROUP, entry_name)
    cases = found() if callable(found) else found
    return list(cases)


# -- internals -------------------------------------------------------------------------------------
def _cases_for(name: str) -> tuple[str, list[str], list[ParityCase]]:
    """``(subject, component names, cases)`` of distribution ``name``, else of component ``name``."""
    wanted = normalize_distribution(name)
    entries = [
        info
        for info in plugins.list_plugins(CASES_GROUP)
        if normalize_distribution(info.distribution) == wanted
    ]
    registered = [
        info
        for info in plugins.list_plugins("rlgraph.components")
        if normalize_distribution(info.distribution) == wanted
    ]
    if entries or registered:
        first = (entries or registered)[0]
        cases = [case for info in entries for case in load_cases(info.name)]
        return f"{first.distribution} {first.version}", sorted(info.name for info in registered), cases
    known = plugins.names("rlgraph.components")
    if normalize_name(name) not in {normalize_name(k) for k in known}:
        distributions = sorted({info.distribution for info in plugins.list_plugins("rlgraph.components")})
        raise PluginError(
            f"{name!r} is neither an installed distribution with components nor a component; "
            f"distributions: {', '.join(distributions)}" + suggestion_text(name, [*known, *distributions])
        )
    cls = plugins.load("rlgraph.components", name)
    all_cases = [case for entry in plugins.names(CASES_GROUP) for case in load_cases(entry)]
    cases = [case for case in all_cases if cls in (type(case.make()), *case.covers)]
    return f"component {name} ({cls.__module__}.{cls.__qualname__})", [name], cases


def _uncovered(components: list[str], cases: list[ParityCase]) -> list[str]:
    covered = {cls for case in cases for cls in (type(case.make()), *case.covers)}
    return [name for name in components if plugins.load("rlgraph.components", name) not in covered]


def _failure_text(error: BaseException) -> str:
    notes = [note for note in getattr(error, "__notes__", ()) if note.strip()]
    if isinstance(error, PropertyFailure):
        head = f"[{error.property} on {error.backend}] {error}"
    else:
        head = f"{type(error).__name__}: {error}"
    return "\n".join([head, *notes])


def _versioned(backends: list[str]) -> list[str]:
    providers = {
        info.name: f"{info.distribution} {info.version}" for info in plugins.list_plugins("rlgraph.backends")
    }
    return [f"{name} ({providers[name]})" if name in providers else name for name in backends]


def _sizes(sizes: tuple[int, ...]) -> str:
    contiguous = len(sizes) > 2 and sizes == tuple(range(sizes[0], sizes[-1] + 1))
    return f"{sizes[0]}-{sizes[-1]}" if contiguous else ", ".join(map(str, sizes))
