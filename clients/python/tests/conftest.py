"""Real service processes (``aigov serve`` on fresh SQLite files) and a real HTTP fault proxy for the tests.

Run from the repository after ``npm run build``: ``/usr/bin/python3 -m pytest clients/python/tests``.
"""
from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Union, cast

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "dist" / "src" / "cli" / "main.js"
API_KEY = "sk_python_client_test_key_0123456789abcdefghijklmnopqrstu"
TENANT = "python-test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Service:
    base_url: str
    api_key: str
    tenant: str
    process: subprocess.Popen[bytes]
    directory: str

    def log(self) -> str:
        return Path(self.directory, "service.log").read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_services(*envs: Dict[str, str]) -> List[Service]:
    """Starts one service per settings dict, concurrently, and waits until each answers /livez."""
    if not CLI.exists():
        pytest.exit(f"{CLI} is missing: run `npm run build` first", returncode=2)
    started = []
    for env in envs:
        directory = tempfile.mkdtemp(prefix="aigov-python-")
        port = free_port()
        process = subprocess.Popen(
            [os.environ.get("AIGOV_NODE", "node"), str(CLI), "serve"],
            env={
                "PATH": os.environ.get("PATH", ""),
                "SERVICE_HOST": "127.0.0.1",
                "SERVICE_PORT": str(port),
                "LOG_LEVEL": "warn",
                "DATABASE_URL": f"sqlite:{directory}/service.db",
                "SERVICE_JWT_SECRET": "python-client-test-secret-at-least-32-bytes",
                "SERVICE_API_KEY": API_KEY,
                "SERVICE_TENANT": TENANT,
                "SERVICE_STARTER_LIBRARY": "false",
                "RATE_LIMIT_PER_MINUTE": "100000",
                "RATE_LIMIT_TOKEN_PER_MINUTE": "100000",
                **env,
            },
            # A file, not a pipe: nobody reads a pipe during the tests, and a full one would stall the service.
            stdout=open(Path(directory, "service.log"), "wb"),
            stderr=subprocess.STDOUT,
        )
        started.append(Service(f"http://127.0.0.1:{port}", API_KEY, TENANT, process, directory))
    deadline = time.monotonic() + 30
    for svc in started:
        while True:
            if svc.process.poll() is not None:
                raise RuntimeError(f"service exited with {svc.process.returncode}: {svc.log()}")
            try:
                if httpx.get(f"{svc.base_url}/livez", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                for each in started:
                    each.stop()
                raise RuntimeError("service did not start within 30 s")
            time.sleep(0.05)
    return started


@pytest.fixture(scope="session")
def services() -> Iterator[List[Service]]:
    """A plain service, one whose tokens live 2 s, one that allows three resource requests a minute per key."""
    started = start_services({}, {"SERVICE_TOKEN_TTL": "2"}, {"RATE_LIMIT_PER_MINUTE": "3"})
    yield started
    for svc in started:
        svc.stop()


@pytest.fixture(scope="session")
def service(services: List[Service]) -> Service:
    return services[0]


@pytest.fixture(scope="session")
def short_ttl_service(services: List[Service]) -> Service:
    return services[1]


@pytest.fixture(scope="session")
def limited_service(services: List[Service]) -> Service:
    return services[2]


# What the proxy does with one request: pass it on; pass it on and drop the answer (the service did the work,
# the client never hears); wait, then pass it on; or answer by itself with (status, headers, body).
Action = Union[str, Tuple[str, float], Tuple[int, Dict[str, str], str]]


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: bytes = b""


@dataclass
class FaultProxy:
    """A real HTTP proxy in front of a service, whose ``decide`` chooses a fault per request."""

    target: str
    decide: Callable[[Seen, int], Action] = lambda seen, index: "forward"
    requests: List[Seen] = field(default_factory=list)
    server: Optional[http.server.ThreadingHTTPServer] = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def paths(self, suffix: str, method: Optional[str] = None) -> List[Seen]:
        return [r for r in self.requests if r.path.split("?")[0].endswith(suffix) and (method is None or r.method == method)]


def _handler(proxy: FaultProxy, upstream_client: httpx.Client) -> type:
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with lock:
                proxy.requests.append(seen)
                index = len(proxy.requests) - 1
            action = proxy.decide(seen, index)
            if isinstance(action, tuple) and len(action) == 3:
                status, headers, text = cast(Tuple[int, Dict[str, str], str], action)
                payload = text.encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "content-length" not in headers:
                    self.send_header("content-length", str(len(payload)))
                else:
                    self.close_connection = True  # a longer announced length: the answer is cut short
                self.end_headers()
                self.wfile.write(payload)
                return
            if isinstance(action, tuple) and len(action) == 2:
                time.sleep(cast(Tuple[str, float], action)[1])
            forward = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
            upstream = upstream_client.request(self.command, proxy.target + self.path, headers=forward, content=body, timeout=30)
            if action == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response(upstream.status_code)
            for name, value in upstream.headers.items():
                if name.lower() not in ("connection", "content-length", "transfer-encoding", "content-encoding"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(upstream.content)))
            self.end_headers()
            self.wfile.write(upstream.content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

    return Handler


@pytest.fixture()
def proxy(service: Service) -> Iterator[FaultProxy]:
    p = FaultProxy(service.base_url)
    upstream = httpx.Client(limits=httpx.Limits(max_connections=100))
    p.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(p, upstream))
    p.server.daemon_threads = True
    thread = threading.Thread(target=p.server.serve_forever, daemon=True)
    thread.start()
    yield p
    p.server.shutdown()
    p.server.server_close()
    upstream.close()


def unique(prefix: str) -> str:
    return f"{prefix} {time.time_ns()}"
