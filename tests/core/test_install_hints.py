"""Every "pip install" hint of RLgraph comes from one place, ``rlgraph.plugins.providers.install_hint``: in the
source checkout, the checkout's own line (with its constraints); installed from an index, the published name."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgraph.plugins import providers
from rlgraph.plugins.providers import checkout_root, install_hint, normalize_distribution, source_folders

ROOT = Path(__file__).resolve().parents[2]


def test_in_the_checkout_a_hint_is_the_checkouts_line_with_its_constraints(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert install_hint("rlgraph[offline]") == 'pip install -c constraints.txt -e "core[offline]"'
    assert install_hint("rlgraph-algos") == "pip install -c constraints.txt -e rlgraph_algos"
    assert install_hint("rlgraph_Torch[onnx]") == 'pip install -c constraints.txt -e "rlgraph_torch[onnx]"'
    tracker = 'pip install -c constraints.txt -e "plugins/rlgraph_trackers[mlflow]"'
    assert install_hint("rlgraph-trackers[mlflow]") == tracker
    assert install_hint("rlgraph-algos", upgrade=True) == "pip install -c constraints.txt -e rlgraph_algos"


def test_every_distribution_of_the_checkout_has_its_folder():
    folders = source_folders(ROOT)
    on_disk = {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("*/pyproject.toml")}
    on_disk |= {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("plugins/*/pyproject.toml")}
    assert set(folders.values()) == on_disk
    assert (
        folders["rlgraph"] == "core"
        and folders[normalize_distribution("rlgraph-gymnax")] == "plugins/rlgraph_gymnax"
    )


def test_from_another_folder_the_checkouts_line_names_absolute_paths(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(providers, "checkout_root", lambda: ROOT)
    assert install_hint("rlgraph[plot]") == f'pip install -c {ROOT}/constraints.txt -e "{ROOT}/core[plot]"'


def test_paths_with_spaces_are_quoted_for_the_shell(monkeypatch, tmp_path):
    checkout = tmp_path / "my checkout"
    (checkout / "rlgraph_algos").mkdir(parents=True)
    (checkout / "rlgraph_algos" / "pyproject.toml").write_text('[project]\nname = "rlgraph-algos"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(providers, "checkout_root", lambda: checkout)
    expected = f'pip install -c "{checkout}/constraints.txt" -e "{checkout}/rlgraph_algos"'
    assert install_hint("rlgraph-algos") == expected


@pytest.mark.parametrize(
    ("distribution", "upgrade", "line"),
    [
        ("rlgraph[offline]", False, 'pip install "rlgraph[offline]"'),
        ("rlgraph-algos", False, "pip install rlgraph-algos"),
        ("rlgraph-algos", True, "pip install --upgrade rlgraph-algos"),
        ("ale-py", False, "pip install ale-py"),
    ],
)
def test_installed_from_an_index_a_hint_is_the_published_name(monkeypatch, distribution, upgrade, line):
    monkeypatch.setattr(providers, "checkout_root", lambda: None)
    assert install_hint(distribution, upgrade=upgrade) == line


def test_a_distribution_the_checkout_does_not_build_gets_its_published_name(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert install_hint("ale-py") == "pip install ale-py"


def test_the_checkout_is_found_from_an_editable_install_or_the_working_folder(monkeypatch, tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "core" / "src" / "rlgraph" / "plugins").mkdir(parents=True)
    (checkout / "core" / "pyproject.toml").write_text('[project]\nname = "rlgraph"\n')
    (checkout / "constraints.txt").write_text("")
    editable = checkout / "core" / "src" / "rlgraph" / "plugins" / "providers.py"
    installed = (
        tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "rlgraph" / "plugins" / "providers.py"
    )
    monkeypatch.chdir(tmp_path)
    assert checkout_root(str(editable)) == checkout.resolve()
    assert checkout_root(str(installed)) is None
    monkeypatch.chdir(checkout)
    assert checkout_root(str(installed)) == checkout.resolve()
