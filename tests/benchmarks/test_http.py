"""Talking to a service under measurement: a free port, and keep-alive connections that report 0, not raise, when
the server is gone."""

from __future__ import annotations

import socket

from app.benchmarks.http import Connection, free_port
from app.main import create_app
from tests.conftest import serve_app


def test_a_free_port_can_be_bound():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_connection_reuses_itself_and_reports_a_gone_server_as_status_0(hashing_settings):
    with serve_app(create_app(hashing_settings)) as http:
        connection = Connection(str(http.base_url))
        assert connection.post_json("/embed", {"texts": ["a cat"]}) == 200
        assert connection.request("GET", "/health") == 200 and connection.request("GET", "/nope") == 404
    assert connection.request("GET", "/health") == 0  # the server stopped: no exception in the load generator
    connection.close()
