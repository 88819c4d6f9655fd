"""Does RLgraph get slower to start as plugins are installed?

Measures, in a temporary virtualenv that sees the running interpreter's packages (rlgraph
included): ``import rlgraph`` and ``rlgraph plugins`` with no plugin installed and with 20 dummy
plugins whose modules each sleep 0.2 s at import. A listing that imported plugin modules would
take 4 s longer; ``rlgraph plugins --check``, which does import them, is the reference.

Run: ``python benchmarks/bench_plugins.py`` (about 30 s).
"""

from __future__ import annotations

import json
import site
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPEATS = 7
CHECK_REPEATS = 5
DUMMIES = 20
IMPORT_SLEEP_S = 0.2
GROUP = "rlgraph.components"


def make_venv(path: Path) -> Path:
    """Create a venv at ``path`` that sees the running interpreter's packages; return its site-packages."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", path], check=True
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_packages = path / "lib" / version / "site-packages"
    # --system-site-packages reaches the base interpreter only; when running from a venv, add its
    # site-packages too (addsitedir also processes their .pth files, editable installs included).
    lines = [f"import site; site.addsitedir({directory!r})" for directory in site.getsitepackages()]
    (site_packages / "_bench_parent_site.pth").write_text("\n".join(lines) + "\n")
    return site_packages


def install_dummy(site_packages: Path, index: int) -> None:
    """Install dummy plugin ``index`` by writing its module and .dist-info folder."""
    module = f"rlgraph_bench_dummy_{index:02d}"
    class_name = f"Dummy{index:02d}"
    (site_packages / f"{module}.py").write_text(
        f"import time\n\ntime.sleep({IMPORT_SLEEP_S})\n\n"
        "from rlgraph.components import Component\n\n\n"
        f"class {class_name}(Component):\n    pass\n"
    )
    dist_info = site_packages / f"{module}-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: rlgraph-bench-dummy-{index:02d}\nVersion: 0.1.0\nRequires-Dist: rlgraph\n"
    )
    (dist_info / "entry_points.txt").write_text(
        f"[{GROUP}]\nbench_dummy_{index:02d} = {module}:{class_name}\n"
    )
    (dist_info / "INSTALLER").write_text("bench_plugins\n")


def wall_ms(command: Sequence[str | Path], repeats: int, check: bool = True) -> float:
    """Median wall time of ``command`` in milliseconds (``check``: it must exit 0)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def importtime_ms(python: Path, repeats: int) -> float:
    """Median cumulative time of ``import rlgraph`` reported by ``-X importtime``, in milliseconds."""
    times = []
    for _ in range(repeats):
        result = subprocess.run(
            [python, "-X", "importtime", "-c", "import rlgraph"], check=True, capture_output=True, text=True
        )
        for line in result.stderr.splitlines():
            fields = line.removeprefix("import time:").split("|")
            if len(fields) == 3 and fields[2].strip() == "rlgraph":
                times.append(int(fields[1]) / 1e3)
    return statistics.median(times)


def listed_dummies(python: Path) -> int:
    """How many dummy plugins ``rlgraph plugins --json`` lists."""
    result = subprocess.run(
        [python, "-m", "rlgraph.cli", "plugins", "--group", GROUP, "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return sum(row["name"].startswith("bench_dummy_") for row in json.loads(result.stdout))


def measure(python: Path, label: str) -> list[tuple[str, float, int]]:
    return [
        (f"python -c 'import rlgraph'{label}", wall_ms([python, "-c", "import rlgraph"], REPEATS), REPEATS),
        (f"rlgraph plugins{label}", wall_ms([python, "-m", "rlgraph.cli", "plugins"], REPEATS), REPEATS),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="rlgraph-bench-") as tmp:
        site_packages = make_venv(Path(tmp) / "venv")
        python = Path(tmp) / "venv" / "bin" / "python"
        rows = [
            ("python -c 'pass' (interpreter start)", wall_ms([python, "-c", "pass"], REPEATS), REPEATS),
            ("import rlgraph (-X importtime, cumulative)", importtime_ms(python, REPEATS), REPEATS),
        ]
        rows += measure(python, ", 0 plugins")
        for index in range(DUMMIES):
            install_dummy(site_packages, index)
        if listed_dummies(python) != DUMMIES:
            sys.exit(f"rlgraph plugins does not list the {DUMMIES} dummy plugins; nothing measured.")
        rows += measure(python, f", {DUMMIES} plugins")
        # --check exits 1 when any installed plugin is broken: its time is what matters here.
        check = wall_ms([python, "-m", "rlgraph.cli", "plugins", "--check"], CHECK_REPEATS, check=False)
        rows.append((f"rlgraph plugins --check, {DUMMIES} plugins (imports them)", check, CHECK_REPEATS))

    width = max(len(name) for name, _, _ in rows)
    print(f"{'measurement':<{width}}  {'median ms':>9}  runs")
    for name, ms, runs in rows:
        print(f"{name:<{width}}  {ms:>9.1f}  {runs:>4}")
    timings = {name: ms for name, ms, _ in rows}
    ratio = timings[f"rlgraph plugins, {DUMMIES} plugins"] / timings["rlgraph plugins, 0 plugins"]
    print(
        f"\nrlgraph plugins, {DUMMIES} plugins / 0 plugins: {ratio:.2f} "
        f"(importing them would add {DUMMIES * IMPORT_SLEEP_S:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
