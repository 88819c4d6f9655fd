"""``rlgraph export RUN_FOLDER --format F``: write a run's greedy policy as a deployable program."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Write the greedy policy of a run folder's checkpoint (the best, else the newest) as a program "
        "that runs without RLgraph: preprocessed states in, greedy actions out, any batch size. "
        "torchscript and onnx need rlgraph-torch (onnx: 'rlgraph-torch[onnx]'), savedmodel rlgraph-tf, "
        "stablehlo rlgraph-jax; "
        "the checkpoint may come from any backend."
    )
    parser.add_argument("run_dir", metavar="RUN_FOLDER", type=Path, help="a run folder of 'rlgraph train'")
    parser.add_argument(
        "--format",
        required=True,
        metavar="FORMAT",
        help="torchscript, onnx, savedmodel or stablehlo (or a plugin's)",
    )
    parser.add_argument(
        "--out", metavar="PATH", type=Path, help="where to write (default: RUN_FOLDER/export/)"
    )
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        type=Path,
        help="checkpoint to export (a path, or a name in checkpoints/)",
    )


def run(args: argparse.Namespace) -> int:
    """Export; print what was written and how to load it; return 0."""
    from rlgraph.training.export import export_run

    result = export_run(args.run_dir, args.format, args.out, args.checkpoint)
    inputs = "; ".join(
        f"{'preprocessed states' if name == 'states' else name}, {dtype} of shape "
        f"({', '.join(['batch', *map(str, shape)])})"
        for name, shape, dtype in result.inputs
    )
    masked = len(result.inputs) > 1
    print(
        f"Wrote {result.path} ({result.format}, built on {result.backend} from {result.checkpoint}).\n"
        f"Input{'s, in this order' if masked else ''}: {inputs}; output: greedy actions"
        f"{' (never a masked one)' if masked else ''}.\n"
        f"Load it with {result.loader}{' (and pass the action mask after the states)' if masked else ''}."
    )
    return 0
