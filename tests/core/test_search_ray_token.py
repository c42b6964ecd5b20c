"""A Ray cluster's token: where Ray reads it while the search connects, and only then. Apart
from test_search_ray.py, whose Ray instance lives through its module: a running Ray must never
see its token or its authentication mode change under it."""

from __future__ import annotations

import os
import socket

import pytest
import ray

from studio.core.search.on_ray import AUTH_ENVIRONMENT, run_search_on_ray
from studio.core.search.state import SearchError
from tests.core.search_support import LEARNING_RATES, searched, table_project


def test_a_clusters_token_is_where_ray_reads_it_while_connecting_and_only_then(
        tmp_path, monkeypatch):
    before = {name: os.environ.get(name) for name in AUTH_ENVIRONMENT}
    seen = []

    def init(**options):  # Ray as it connects: the environment it reads the token from
        seen.append({name: os.environ.get(name) for name in AUTH_ENVIRONMENT})
        raise (ray.exceptions.AuthenticationError("token mismatch") if len(seen) == 1
               else ConnectionError("not started in this test"))

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    project = searched(table_project(tmp_path), "grid", LEARNING_RATES)
    with socket.create_server(("127.0.0.1", 0)) as head:  # something listens at HOST:PORT
        address = f"127.0.0.1:{head.getsockname()[1]}"
        with pytest.raises(SearchError, match=f"The Ray cluster at {address} refused the "
                                              f"connection: it asks for its token"):
            run_search_on_ray(project, tmp_path / "runs", tmp_path / "search",
                              address=address, token="wrong")
        assert {name: os.environ.get(name) for name in AUTH_ENVIRONMENT} == before
        with pytest.raises(SearchError, match="Cannot connect"):
            run_search_on_ray(project, tmp_path / "runs", tmp_path / "search",
                              address=address)
    assert seen == [{"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "wrong",
                     "RAY_AUTH_TOKEN_PATH": None}, before]
    assert not (tmp_path / "search").exists()  # nothing started
