"""Settings file and backend choice: explicit > environment variable > settings file > the only one."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

import rlgraph.config
from rlgraph.config import (
    config_path,
    load_config,
    resolve_backend,
    resolve_distributed_backend,
    rlgraph_home,
)
from rlgraph.errors import BackendError, PluginLoadError, PluginNotFoundError, SpecError
from rlgraph.plugins import providers, reset_cache


def install(root, distribution, backends=None):
    """Write an installed distribution (``*.dist-info``) registering ``backends`` into ``root``."""
    info = root / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    lines = "".join(f"{name} = fake_{name}:Backend\n" for name in backends or [])
    (info / "entry_points.txt").write_text(f"[rlgraph.backends]\n{lines}" if lines else "[console_scripts]\n")


def holds_distributions(entry: str) -> bool:
    folder = Path(entry or ".")
    return any(folder.glob("*.dist-info")) or any(folder.glob("*.egg-info"))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """RLGRAPH_HOME in tmp_path, no backend variables, and a sys.path holding only test distributions."""
    monkeypatch.setenv("RLGRAPH_HOME", str(tmp_path / "home"))
    for variable in ("RLGRAPH_BACKEND", "RLGRAPH_DISTRIBUTED_BACKEND", "RLGRAPH_DISABLE_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(providers, "checkout_root", lambda: None)  # as installed from an index
    monkeypatch.setattr(sys, "path", [str(site), *(p for p in sys.path if not holds_distributions(p))])
    reset_cache()
    yield tmp_path / "home"
    reset_cache()


@pytest.fixture
def site(home):
    return home.parent / "site"


def write_config(home: Path, settings) -> None:
    home.mkdir(exist_ok=True)
    text = settings if isinstance(settings, str) else json.dumps(settings)
    (home / "rlgraph.json").write_text(text)


# -- settings file -------------------------------------------------------------------------------


def test_home_defaults_to_dot_rlgraph_in_the_user_home(monkeypatch, tmp_path):
    monkeypatch.delenv("RLGRAPH_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert rlgraph_home() == tmp_path / ".rlgraph"
    monkeypatch.setenv("RLGRAPH_HOME", str(tmp_path / "elsewhere"))
    assert rlgraph_home() == tmp_path / "elsewhere"
    assert config_path() == tmp_path / "elsewhere" / "rlgraph.json"


def test_missing_settings_file_is_empty_and_nothing_is_created(home):
    assert load_config() == {}
    assert resolve_distributed_backend() is None
    assert not home.exists()


def test_settings_file_is_read(home):
    write_config(home, {"BACKEND": "tf", "DISTRIBUTED_BACKEND": None})
    assert load_config() == {"BACKEND": "tf", "DISTRIBUTED_BACKEND": None}


def test_bad_json_names_the_file(home):
    write_config(home, '{"BACKEND": "tf",}')
    with pytest.raises(SpecError, match=r"rlgraph\.json is not valid JSON"):
        load_config()


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"BACKEDN": "tf"}, r"^BACKEDN: unknown key in .*rlgraph\.json.*Did you mean 'BACKEND'\?"),
        ({"backend": "tf"}, r"Did you mean 'BACKEND'\?"),
        ({"BACKEND": 3}, r"^BACKEND: expected a string or null"),
        (["tf"], r"must hold a JSON object, not list"),
    ],
)
def test_bad_settings_are_spec_errors(home, settings, match):
    write_config(home, settings)
    with pytest.raises(SpecError, match=match):
        load_config()


# -- backend choice ------------------------------------------------------------------------------


def test_precedence_explicit_then_variable_then_file_then_the_only_one(home, site, monkeypatch):
    install(site, "rlgraph-torch", ["torch"])
    install(site, "rlgraph-tf", ["tf"])
    install(site, "rlgraph-jax", ["jax"])
    write_config(home, {"BACKEND": "jax"})
    monkeypatch.setenv("RLGRAPH_BACKEND", "TF")
    assert resolve_backend("Torch") == "torch"
    assert resolve_backend() == "tf"
    monkeypatch.setenv("RLGRAPH_BACKEND", "")
    assert resolve_backend() == "jax"
    assert resolve_backend("") == "jax"


def test_the_only_installed_backend_is_chosen(site):
    install(site, "rlgraph-torch", ["torch"])
    assert resolve_backend() == "torch"


def test_several_backends_and_no_choice_take_the_default_order_and_say_so_once(site, monkeypatch, caplog):
    install(site, "rlgraph-torch", ["torch"])
    install(site, "rlgraph-tf", ["tf"])
    monkeypatch.setattr(rlgraph.config, "_announced", set())
    with caplog.at_level(logging.INFO, logger="rlgraph"):
        assert resolve_backend() == "torch" and resolve_backend() == "torch"
    (record,) = caplog.records  # one line per process, not one per agent, and no warning
    assert record.levelno == logging.INFO
    message = record.getMessage()
    assert "several backends are installed (tf, torch); using torch" in message
    assert "--backend tf" in message and '"backend": "tf"' in message and "RLGRAPH_BACKEND=tf" in message


def test_backends_outside_the_default_order_come_after_it_by_name(site, monkeypatch):
    monkeypatch.setattr(rlgraph.config, "_announced", set())
    install(site, "rlgraph-zeta", ["zeta"])
    install(site, "rlgraph-alpha", ["alpha"])
    assert resolve_backend() == "alpha"
    install(site, "rlgraph-tf", ["tf"])
    reset_cache()
    assert resolve_backend() == "tf"


def test_no_backend_installed_says_what_to_install(site):
    with pytest.raises(BackendError, match="pip install rlgraph-torch .* or pip install rlgraph-tf"):
        resolve_backend()


def test_rlgraph_spellings_map_to_the_installed_backend(home, site):
    install(site, "rlgraph-torch", ["torch"])
    write_config(home, {"BACKEND": "pytorch"})
    assert resolve_backend() == "torch"


def test_a_backend_that_is_not_installed_gets_the_pip_line_and_where_it_was_chosen(home, site):
    install(site, "rlgraph-torch", ["torch"])
    write_config(home, {"BACKEND": "tensorflow"})
    with pytest.raises(PluginNotFoundError) as raised:
        resolve_backend()
    message = str(raised.value)
    assert "pip install rlgraph-tf" in message and "BACKEND in" in message and "rlgraph.json" in message
    assert (raised.value.group, raised.value.name) == ("rlgraph.backends", "tensorflow")


def test_a_misspelt_backend_gets_did_you_mean(site, monkeypatch):
    install(site, "rlgraph-torch", ["torch"])
    monkeypatch.setenv("RLGRAPH_BACKEND", "trch")
    with pytest.raises(PluginNotFoundError, match=r"Did you mean 'torch'\?.*\$RLGRAPH_BACKEND"):
        resolve_backend()


def test_a_disabled_backend_is_neither_chosen_nor_the_only_one(site, monkeypatch):
    install(site, "rlgraph-torch", ["torch"])
    install(site, "rlgraph-tf", ["tf"])
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", "rlgraph-tf")
    assert resolve_backend() == "torch"
    with pytest.raises(PluginLoadError, match="disabled"):
        resolve_backend("tf")


# -- distributed backend -------------------------------------------------------------------------


def test_distributed_backend_precedence_and_local(home, site, monkeypatch):
    install(site, "rlgraph-ray")
    assert resolve_distributed_backend() is None
    write_config(home, {"DISTRIBUTED_BACKEND": "ray"})
    assert resolve_distributed_backend() == "ray"
    monkeypatch.setenv("RLGRAPH_DISTRIBUTED_BACKEND", "local")
    assert resolve_distributed_backend() is None
    assert resolve_distributed_backend("Ray") == "ray"


def test_distributed_backend_not_installed_says_what_to_install(site):
    with pytest.raises(BackendError, match="needs rlgraph-ray: pip install rlgraph-ray"):
        resolve_distributed_backend("ray")


def test_unknown_distributed_backend(site):
    with pytest.raises(BackendError, match=r"unknown distributed backend 'horovod'.*ray"):
        resolve_distributed_backend("horovod")
