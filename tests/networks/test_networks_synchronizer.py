"""The synchronizer keeps a target network in step even when no API method calls the target."""

from __future__ import annotations

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.synchronizer import Synchronizer


class OnlyTheSourceIsCalled(Component):
    """A target network that only the synchronizer refers to (regression: it never got variables, so
    ``sync()`` crashed on PyTorch and did nothing on TensorFlow)."""

    def __init__(self, tau: float):
        super().__init__(scope="root")
        self.online = NeuralNetwork([Dense(4, "relu"), Dense(2)], scope="online")
        self.target = self.online.copy(scope="target")
        self.target.set_trainable(False)
        self.synchronizer = Synchronizer(tau=tau).attach(self.online, self.target)

    @rlgraph.api
    def predict(self, x):
        return self.online.call(x)

    @rlgraph.api
    def sync(self):
        return self.synchronizer.sync()

    @rlgraph.api
    def hard_sync(self):
        return self.synchronizer.hard_sync()


def test_a_target_no_api_method_calls_gets_variables_and_is_synced(rlgraph_backend):
    for tau in (1.0, 0.5):
        test = ComponentTest(
            OnlyTheSourceIsCalled(tau),
            {"x": FloatBox(shape=(3,), add_batch_rank=True)},
            backend=rlgraph_backend,
        )
        weights = test.variable_values()
        names = ("dense/kernel", "dense/bias", "dense-1/kernel", "dense-1/bias")
        for name in names:
            assert weights[f"root/target/{name}"].shape == weights[f"root/online/{name}"].shape
        test.test("sync")
        after = test.variable_values()
        for name in names:
            online, target = weights[f"root/online/{name}"], weights[f"root/target/{name}"]
            np.testing.assert_allclose(
                after[f"root/target/{name}"], tau * online + (1 - tau) * target, rtol=1e-6
            )


def test_a_hard_sync_copies_the_source_whatever_tau_is(rlgraph_backend):
    test = ComponentTest(
        OnlyTheSourceIsCalled(0.01), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend=rlgraph_backend
    )
    before = test.variable_values()
    assert not np.array_equal(before["root/target/dense/kernel"], before["root/online/dense/kernel"])
    test.test("hard_sync")
    after = test.variable_values()
    for name in ("dense/kernel", "dense/bias", "dense-1/kernel", "dense-1/bias"):
        np.testing.assert_array_equal(after[f"root/target/{name}"], before[f"root/online/{name}"])
        np.testing.assert_array_equal(after[f"root/online/{name}"], before[f"root/online/{name}"])
