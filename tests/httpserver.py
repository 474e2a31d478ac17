"""A loopback HTTP server for download tests: serves a folder, and can inject
faults per path (status codes, truncated bodies) a set number of times."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path


class FaultyHandler(http.server.SimpleHTTPRequestHandler):
    faults: dict = {}  # path -> list of actions consumed one per request: int status or "truncate"
    hits: dict = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        actions = self.faults.get(self.path, [])
        action = actions.pop(0) if actions else None
        if isinstance(action, int):
            self.send_error(action)
            return
        if action == "truncate":
            body = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        super().do_GET()


@contextlib.contextmanager
def serve(folder, faults=None):
    """Yield (base URL, handler class) for a server on 127.0.0.1 with an OS-chosen port."""
    handler = type("Handler", (FaultyHandler,), {"faults": dict(faults or {}), "hits": {}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
