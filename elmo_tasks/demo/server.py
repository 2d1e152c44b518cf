"""uvicorn serving the demo app on a socket bound before anything else is loaded.

Binding first means a port already in use is reported in a second, not after every model has
loaded, and that port 0 (any free port, for tests and scripts) gives a URL that is known before
the server runs. The socket listens at once: a client that connects while the models load waits
for its answer instead of being refused. uvicorn runs with its plain-Python HTTP parser (h11) and without its logging
setup, so the process's logging stays as ``allennlp`` configured it.

uvicorn closes the socket it is given when it stops, and closing a listening socket resets every
connection still queued on it (made while the models loaded, or while uvicorn finished the requests in
flight): the client sees "connection reset" and cannot tell a stopped demo from a crash. So uvicorn gets
a duplicate, the listening socket stays open until :meth:`DemoServer.close`, and ``close`` first answers
each queued connection with 503 and one JSON line saying the demo stopped.
"""

import json
import socket
import threading
import time
from typing import Optional

import uvicorn
from fastapi import FastAPI

#: How long :meth:`DemoServer.close` spends answering queued connections, all of them together, and one of them.
REFUSING_SECONDS = 5.0
_ONE_REFUSAL_SECONDS = 1.0
_STOPPED_BODY = json.dumps(
    {
        "error": "the demo server is stopping (SIGTERM or Ctrl-C) and answers no more requests; try again once it is "
        "started again"
    }
).encode("utf-8")
STOPPED_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(_STOPPED_BODY)}\r\nConnection: close\r\n\r\n".encode("ascii")
    + _STOPPED_BODY
)


class DemoServer:
    """A socket bound at ``host``:``port`` (0: any free port), and an app served on it (here or in a thread)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8000) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
            self.socket.listen(2048)  # from now on connections queue until the app serves them
        except OSError:
            self.socket.close()
            raise
        self.host = host
        self.port = self.socket.getsockname()[1]
        self._server: Optional[uvicorn.Server] = None
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        """The address to open, e.g. ``http://127.0.0.1:8000/``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def serve(self, app: FastAPI) -> None:
        """Serve ``app`` until interrupted (Ctrl-C) or :meth:`stop`; then :meth:`close` answers what is queued."""
        self._make_server(app).run(sockets=[self.socket.dup()])  # uvicorn closes it; self.socket keeps listening

    def _make_server(self, app: FastAPI) -> uvicorn.Server:
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        return self._server

    def start(self, app: FastAPI, timeout: float = 30.0) -> "DemoServer":
        """Serve ``app`` in a background thread; returns once the server accepts connections."""
        server = self._make_server(app)
        self._thread = threading.Thread(target=server.run, args=([self.socket.dup()],), name="elmo-demo", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the demo server did not start at {self.url}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop a server started with :meth:`start`, wait for its thread, then :meth:`close`."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        self.close()

    def close(self) -> None:
        """Stop listening, after answering each connection still queued with 503 (for at most
        ``REFUSING_SECONDS`` in all); a connection made after that is refused by the system, as for any
        port nothing listens on. Calling it again does nothing."""
        if self.socket.fileno() == -1:
            return
        deadline = time.monotonic() + REFUSING_SECONDS
        try:
            self.socket.setblocking(False)
            while time.monotonic() < deadline:
                try:
                    connection, _ = self.socket.accept()
                except OSError:  # BlockingIOError: none queued any more
                    break
                _answer_stopped(connection, deadline)
        finally:
            self.socket.close()


def _answer_stopped(connection: socket.socket, deadline: float) -> None:
    """Sends the 503 answer and closes ``connection`` without resetting it: what the client sent is read
    until it closes its side (or the time is up), since closing with unread data would send a reset that
    can discard the answer before the client reads it."""
    with connection:
        connection.settimeout(max(0.05, min(_ONE_REFUSAL_SECONDS, deadline - time.monotonic())))
        try:
            connection.sendall(STOPPED_ANSWER)
            connection.shutdown(socket.SHUT_WR)
            while connection.recv(65536):
                pass
        except OSError:  # the client went away or kept silent: nothing more to do for it
            pass
