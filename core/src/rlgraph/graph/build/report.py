"""The timings and sizes of one build."""

from __future__ import annotations


class BuildReport:
    """Timings and sizes of one build. ``overhead_seconds`` excludes backend work."""

    def __init__(self) -> None:
        self.assembly_seconds = 0.0
        self.build_seconds = 0.0
        self.backend_seconds = 0.0
        self.num_components = 0
        self.num_variables = 0
        self.num_api_methods = 0

    @property
    def total_seconds(self) -> float:
        return self.assembly_seconds + self.build_seconds

    @property
    def overhead_seconds(self) -> float:
        """Time spent outside backend op and variable creation (RLgraph's build overhead)."""
        return max(self.total_seconds - self.backend_seconds, 0.0)

    def as_dict(self) -> dict[str, float | int]:
        keys = ("assembly_seconds", "build_seconds", "backend_seconds", "overhead_seconds", "total_seconds")
        sizes = ("num_components", "num_variables", "num_api_methods")
        return {key: getattr(self, key) for key in (*keys, *sizes)}

    def __repr__(self) -> str:
        return (
            f"BuildReport({self.num_components} components, {self.num_variables} variables, "
            f"overhead {self.overhead_seconds * 1e3:.1f} ms of {self.total_seconds * 1e3:.1f} ms)"
        )
