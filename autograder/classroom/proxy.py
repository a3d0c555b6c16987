"""The classroom's proxy: the pure-Python configurable-http-proxy, able to wait for a class.

It forwards every request through one tornado HTTP client, which by default has 10
requests in flight for everybody and fails the others with 503 "Timeout in request queue"
once they have waited 20 s. A Validate holds its request (and, while nbgrader ran it in
the server's event loop, that learner's JupyterLab polls) for as long as the notebook
runs, so three learners validating at once were enough to make JupyterLab say "server
unavailable" (issue 25). Here the client may hold every connection a class's browsers
open at once (a browser opens at most 6 per host), so nothing waits in its queue; each
request still ends after the proxy's own --proxy-timeout.
"""

from __future__ import annotations

import resource
import sys

from tornado.httpclient import AsyncHTTPClient

BROWSER_CONNECTIONS = 6  # what a browser opens to one host at most (HTTP/1.1)
PEOPLE = 300  # the largest class on one machine this is meant for
MAX_CLIENTS = BROWSER_CONNECTIONS * PEOPLE


def _raise_open_files(needed: int) -> None:
    """Each forwarded request holds two sockets: allow them, up to the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def main() -> None:
    _raise_open_files(2 * MAX_CLIENTS + 256)
    AsyncHTTPClient.configure(None, max_clients=MAX_CLIENTS)
    from configurable_http_proxy.cli import main as proxy

    sys.exit(proxy())


if __name__ == "__main__":
    main()
