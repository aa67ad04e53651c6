"""Real idforge nodes for the tests: the binary built from this checkout
(IDFORGE_BINARY, which clients/test.sh sets), run as ``idforge serve
--config CONFIG --data DIR --http 127.0.0.1:0 --store sqlite:///TMP/ids.db
--worker i+1``, so the nodes share one SQLite file. The configuration is
clients/conformance/server.toml unless a test gives its own."""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.request
from pathlib import Path

SERVING = re.compile(r'msg="idforge serving" http=(\S+)')


def conformance_dir() -> Path:
    d = os.environ.get("IDFORGE_CONFORMANCE") or Path(__file__).resolve().parent.parent.parent / "conformance"
    return Path(d).resolve()


class Node:
    def __init__(self, bin_path, config, data, store, worker):
        env = {k: v for k, v in os.environ.items() if not k.startswith("IDFORGE_")}
        self.proc = subprocess.Popen(
            [bin_path, "serve", "--config", str(config), "--data", str(data), "--http", "127.0.0.1:0",
             "--store", store, "--worker", str(worker)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        self.log = []
        found = threading.Event()
        self.url = None

        def read():
            with self.proc.stderr:
                for line in self.proc.stderr:
                    self.log.append(line)
                    m = SERVING.search(line)
                    if m and not found.is_set():
                        self.url = "http://" + m.group(1)
                        found.set()
            found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not found.wait(60) or self.url is None:
            self.kill()
            raise RuntimeError("idforge did not start:\n" + "".join(self.log))

    def kill(self):
        """SIGKILL, and wait for the process to die."""
        self.proc.kill()
        self.proc.wait(30)
        self.reader.join(30)


class Servers:
    def __init__(self, n, config=None):
        bin_path = os.environ.get("IDFORGE_BINARY")
        if not bin_path:
            raise RuntimeError("IDFORGE_BINARY is not set: build the server first "
                               "(go build -o /tmp/idforge ./cmd/idforge) or run clients/test.sh")
        self.dir = Path(tempfile.mkdtemp(prefix="idforge-python-"))
        config = config or conformance_dir() / "server.toml"
        store = "sqlite://" + str(self.dir / "ids.db")
        self.nodes = []
        try:
            for i in range(n):
                self.nodes.append(Node(bin_path, config, self.dir / f"node{i}", store, i + 1))
        except Exception:
            self.close()
            raise

    def urls(self):
        return [n.url for n in self.nodes]

    def send(self, method, path, token, body=None):
        """An admin request to the first node; raises unless it answers 2xx."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.nodes[0].url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()

    def close(self):
        for n in self.nodes:
            n.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def dead_url():
    """An http:// URL where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "http://127.0.0.1:%d" % s.getsockname()[1]
