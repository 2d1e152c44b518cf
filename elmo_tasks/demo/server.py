"""uvicorn serving the demo app on a socket bound before anything else is loaded.

Binding first means a port already in use is reported in a second, not after every model has
loaded, and that port 0 (any free port, for tests and scripts) gives a URL that is known before
the server runs. The socket listens at once: a client that connects while the models load waits
for its answer instead of being refused. uvicorn runs with its plain-Python HTTP parser (h11) and without its logging
setup, so the process's logging stays as ``allennlp`` configured it.
"""

import socket
import threading
import time
from typing import Optional

import uvicorn
from fastapi import FastAPI


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
        """Serve ``app`` until interrupted (Ctrl-C) or :meth:`stop`."""
        self._make_server(app).run(sockets=[self.socket])

    def _make_server(self, app: FastAPI) -> uvicorn.Server:
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        return self._server

    def start(self, app: FastAPI, timeout: float = 30.0) -> "DemoServer":
        """Serve ``app`` in a background thread; returns once the server accepts connections."""
        server = self._make_server(app)
        self._thread = threading.Thread(target=server.run, args=([self.socket],), name="elmo-demo", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the demo server did not start at {self.url}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop a server started with :meth:`start` and wait for its thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        self.socket.close()
