"""``rlgraph certify NAME``: every generic property of a plugin's components on every installed backend."""

from __future__ import annotations

import argparse
import importlib.util
import os

from rlgraph.errors import PluginError
from rlgraph.plugins.providers import install_hint


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Run the generic properties (builds, declared spaces, finite outputs, agreement between backends and "
        "with the NumPy reference, batch consistency, input errors) on every case a distribution lists under "
        "the 'rlgraph.test_cases' entry points, on every installed backend; print a certificate. "
        "Exit status 0 when every property held (or is declared not to apply)."
    )
    parser.add_argument("name", help="a distribution (rlgraph-networks, my-plugin) or one component (dense)")
    parser.add_argument(
        "--backends", "-b", help="comma-separated backends, the first the reference (default: all installed)"
    )
    parser.add_argument(
        "--profile",
        choices=("ci", "default", "deep"),
        default=None,
        help="Hypothesis profile: ci (4 derandomized examples per case), default (20), deep (100)",
    )


def run(args: argparse.Namespace) -> int:
    """Certify ``args.name``; print the certificate; return 0 if it passed, else 1."""
    if importlib.util.find_spec("hypothesis") is None:
        raise PluginError(
            f"rlgraph certify draws its inputs with Hypothesis: {install_hint('rlgraph[test]')} (or a plugin "
            'made by rlgraph new-plugin with its test extra: pip install -e "./rlgraph-NAME[test]")'
        )
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from rlgraph.testing.certify import certify

    backends = [name.strip() for name in args.backends.split(",")] if args.backends else None
    certificate = certify(args.name, backends, args.profile)
    print(certificate.format())
    return 0 if certificate.passed else 1
