"""Run benchmarks on an earlier revision and on the working tree, one after the other, in one run.

A change that should not slow anything down (issue 34's backend contract) is measured by running the same
benchmarks at both revisions back to back on one machine. The earlier revision is checked out into a git
worktree and installed, its packages only (``--no-deps``), into a virtualenv that shares this
interpreter's installed frameworks; each benchmark then runs with that revision's own copy of the script,
and with the working tree's. Every benchmark prints its ratios against a reference run in its own process
(a hand-written PyTorch loop, a compiled TensorFlow function), so the two revisions' ratios compare
despite the machine's drift.

Run: ``python benchmarks/compare_revisions.py 1d36ab9 -- bench_acting.py --quick`` (any benchmark and its
arguments after ``--``; several separated by ``,,``); ``--keep`` keeps the worktree for another run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The distributions a benchmark may import, as the repository lays them out.
PACKAGES = (
    "core",
    "rlgraph_torch",
    "rlgraph_tf",
    "rlgraph_jax",
    "plugins/rlgraph_memories",
    "plugins/rlgraph_networks",
    "rlgraph_algos",
)


def prepare(revision: str) -> tuple[Path, Path]:
    """A worktree of ``revision`` with its packages installed into a virtualenv of its own: (tree, python)."""
    tree = Path("/tmp") / f"rlgraph-{revision}"
    if not tree.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision], check=True
        )
    venv = tree / ".venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # The frameworks and every other dependency: this interpreter's, after the revision's own packages.
        site = Path(
            subprocess.check_output(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
            ).strip()
        )
        (site / "shared_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
        for package in PACKAGES:
            if (tree / package).exists():
                subprocess.run(
                    [
                        str(python),
                        "-m",
                        "pip",
                        "install",
                        "-q",
                        "--no-deps",
                        "-e",
                        str(tree / package),
                    ],
                    check=True,
                )
    return tree, python


def run(python: Path, tree: Path, command: list[str], label: str) -> None:
    print(f"\n=== {label}: {' '.join(command)}", flush=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [str(python), str(tree / "benchmarks" / command[0]), *command[1:]], cwd=tree, env=env, check=False
    )


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="the earlier revision (a commit, a tag, a branch)")
    parser.add_argument("--keep", action="store_true", help="keep the worktree and its virtualenv")
    options = parser.parse_args(argv[:split])
    commands: list[list[str]] = [[]]
    for word in argv[split + 1 :]:
        if word == ",,":
            commands.append([])
        else:
            commands[-1].append(word)
    tree, python = prepare(options.revision)
    try:
        for command in filter(None, commands):
            run(python, tree, command, f"before ({options.revision})")
            run(Path(sys.executable), ROOT, command, "after (working tree)")
    finally:
        if not options.keep:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


if __name__ == "__main__":
    main()
