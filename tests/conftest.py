"""The fixture shared by the tests of the bulk paths: one thread, then two workers."""

import pytest

import bloomedu.core.pipeline as pipeline


@pytest.fixture(params=[1, 2], ids=["one thread", "two workers"])
def workers(request, monkeypatch):
    """Run the test with the bulk methods on the calling thread alone, then with 2 workers."""
    monkeypatch.setattr(pipeline, "WORKERS", request.param)
    return request.param

