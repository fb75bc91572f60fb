"""Registers the `gpu` marker of the GPU tests."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA GPU visible to jax; skipped otherwise")
