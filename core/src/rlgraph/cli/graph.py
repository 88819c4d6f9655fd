"""``rlgraph graph SPEC``: the component graph of an agent, as DOT (and SVG where Graphviz is installed)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Build the agent of a run spec (or of an agent spec, with --env) and write its component graph: "
        "components, and the API calls between them. DOT always; SVG through Graphviz's 'dot' where it is "
        "installed; the graph as a text tree on the terminal."
    )
    parser.add_argument("spec", help="a run spec or agent spec file (YAML or JSON)")
    parser.add_argument("--env", metavar="ENV", help="the environment (for an agent spec)")
    parser.add_argument("--backend", metavar="NAME", help="the backend to build on")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a spec key")
    parser.add_argument(
        "--out",
        metavar="FILE",
        type=Path,
        help="the DOT file to write (default: runs/graphs/<agent name>.dot)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the DOT file (and the SVG beside it where possible), print the text tree; 0."""
    from rlgraph.training import load_run_spec
    from rlgraph.training.spec import RUNS_ROOT
    from rlgraph.training.trainer import make_executor

    spec = load_run_spec(args.spec, args.set, {"env": args.env, "backend": args.backend})
    executor = make_executor(spec)
    try:
        agent = executor.agent
        graph = agent.graph.component_graph
        dot_file = args.out or Path(RUNS_ROOT) / "graphs" / f"{agent.name}.dot"
        dot_file.parent.mkdir(parents=True, exist_ok=True)
        dot_file.write_text(graph.to_dot())
        print(graph.to_text(), end="")
        print(f"DOT: {dot_file}")
        svg_file = render_svg(dot_file)
        if svg_file is None:
            print("SVG: Graphviz's 'dot' is not installed (https://graphviz.org/download/)", file=sys.stderr)
        else:
            print(f"SVG: {svg_file}")
    finally:
        executor.terminate()
    return 0


def render_svg(dot_file: Path) -> Path | None:
    """``dot_file`` rendered as SVG beside it by Graphviz's ``dot``; None where it is not installed."""
    dot = shutil.which("dot")
    if dot is None:
        return None
    svg_file = dot_file.with_suffix(".svg")
    subprocess.run([dot, "-Tsvg", str(dot_file), "-o", str(svg_file)], check=True)
    return svg_file
