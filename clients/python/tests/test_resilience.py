"""Retries, idempotency, timeouts and transport failures, through a real fault proxy in front of a real service."""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

import aigov_client
from aigov_client import AigovError, AsyncClient, Client, RateLimitError, ServerError

from conftest import FaultProxy, Seen, Service, free_port, unique


def via(proxy: FaultProxy, service: Service, **kwargs: Any) -> Client:
    return Client(proxy.base_url, api_key=service.api_key, tenant=service.tenant, retry_delay=0.05, **kwargs)


def test_a_create_whose_answer_is_lost_is_retried_and_creates_once(proxy: FaultProxy, service: Service) -> None:
    proxy.decide = lambda seen, index: "drop" if seen.method == "POST" and seen.path.endswith("/use_cases") and len(proxy.paths("/use_cases", "POST")) == 1 else "forward"
    name = unique("Dropped answer")
    with via(proxy, service) as client:
        created = client.use_cases.create({"name": name})
        posts = proxy.paths("/use_cases", "POST")
        assert len(posts) == 2 and posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
        assert [uc["id"] for uc in client.use_cases.list_all(q=name)] == [created["id"]]


def test_503_twice_then_200(proxy: FaultProxy, service: Service) -> None:
    def decide(seen: Seen, index: int) -> Any:
        pings = proxy.paths("/system/ping")
        unavailable = (503, {"content-type": "application/problem+json"}, '{"status": 503, "code": "unavailable"}')
        return unavailable if seen.path.endswith("/system/ping") and len(pings) <= 2 else "forward"

    proxy.decide = decide
    with via(proxy, service) as client:
        assert client.system.ping()["message"] == "pong"
    assert len(proxy.paths("/system/ping")) == 3


def test_retries_give_up_after_max_retries_and_never_replay_a_patch(proxy: FaultProxy, service: Service) -> None:
    with via(proxy, service) as client:
        created = client.use_cases.create({"name": unique("Patched")})
        proxy.decide = lambda seen, index: (502, {}, "") if seen.method in ("GET", "PATCH") else "forward"
        with pytest.raises(ServerError) as gave_up:
            client.use_cases.get(created["id"], max_retries=1)
        assert gave_up.value.status_code == 502 and len(proxy.paths(created["id"], "GET")) == 2
        with pytest.raises(ServerError):
            client.use_cases.update(created["id"], {"description": "x"})
        assert len(proxy.paths(created["id"], "PATCH")) == 1  # a PATCH carries no Idempotency-Key: not retried


def test_429_with_retry_after_is_honoured(proxy: FaultProxy, service: Service) -> None:
    limited = (429, {"retry-after": "1", "content-type": "application/problem+json"}, '{"status": 429, "code": "rate_limited"}')
    proxy.decide = lambda seen, index: limited if len(proxy.paths("/system/ping")) == 1 else "forward"
    with via(proxy, service) as client:
        client.token()
        started = time.monotonic()
        client.system.ping()
        assert time.monotonic() - started >= 1.0


def test_a_real_429_carries_the_limits(limited_service: Service) -> None:
    with Client(limited_service.base_url, api_key=limited_service.api_key, tenant=limited_service.tenant, max_retries=0) as client:
        with pytest.raises(RateLimitError) as limited:
            for _ in range(10):
                client.system.ping()
        error = limited.value
        assert error.status_code == 429 and error.limit == 3 and error.remaining == 0
        assert error.retry_after is not None and 0 < error.retry_after <= 60 and error.reset_time
    # Retry-After longer than max_retry_delay: the error comes back at once instead of a long wait.
    with Client(limited_service.base_url, api_key=limited_service.api_key, tenant=limited_service.tenant, max_retry_delay=0.5) as client:
        started = time.monotonic()
        with pytest.raises(RateLimitError):
            client.system.ping()
        assert time.monotonic() - started < 5


def test_timeouts_default_and_per_call(proxy: FaultProxy, service: Service) -> None:
    proxy.decide = lambda seen, index: ("delay", 1.5) if seen.path.endswith("/system/ping") else "forward"
    with via(proxy, service, timeout=0.3) as client:
        client.token()
        started = time.monotonic()
        with pytest.raises(aigov_client.TimeoutError) as timed_out:
            client.system.ping()
        assert time.monotonic() - started < 1.4 and isinstance(timed_out.value, AigovError)
        assert isinstance(timed_out.value, TimeoutError)  # also the built-in
        assert client.system.ping(timeout=5)["message"] == "pong"
    assert Client("http://127.0.0.1:1", api_key="k")._transport.engine.settings.timeout == 30.0


def test_a_refused_connection_is_retried_then_raised() -> None:
    port = free_port()  # nothing listens here
    with Client(f"http://127.0.0.1:{port}", api_key="sk_x", tenant="t", retry_delay=0.05) as client:
        started = time.monotonic()
        with pytest.raises(aigov_client.ConnectionError) as refused:
            client.health.live()
        assert isinstance(refused.value, AigovError) and isinstance(refused.value, ConnectionError)
        assert time.monotonic() - started >= 0.05  # two backoffs happened

    async def main() -> None:
        async with AsyncClient(f"http://127.0.0.1:{port}", api_key="sk_x", tenant="t", max_retries=0) as client:
            with pytest.raises(aigov_client.ConnectionError):
                await client.system.ping()

    asyncio.run(main())


def test_async_client_retries_the_same_way(proxy: FaultProxy, service: Service) -> None:
    proxy.decide = lambda seen, index: "drop" if seen.method == "POST" and seen.path.endswith("/vendors") and len(proxy.paths("/vendors", "POST")) == 1 else "forward"

    async def main() -> None:
        async with AsyncClient(proxy.base_url, api_key=service.api_key, tenant=service.tenant, retry_delay=0.05) as client:
            name = unique("Async dropped")
            created = await client.vendors.create({"name": name}, idempotency_key=f"mine-{time.time_ns()}")
            assert [v["id"] async for v in client.vendors.list_all(q=name)] == [created["id"]]

    asyncio.run(main())
    posts = proxy.paths("/vendors", "POST")
    assert len(posts) == 2 and posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    assert posts[0].headers["idempotency-key"].startswith("mine-")


class SilentServer:
    """A real TCP server that accepts connections and never answers; counts the connections it accepted."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted: List[socket.socket] = []
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


@pytest.fixture()
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def test_a_per_call_timeout_bounds_the_token_exchange_it_triggers(silent: SilentServer) -> None:
    with Client(silent.base_url, api_key="sk_silent", tenant="t", timeout=5) as client:
        started = time.monotonic()
        with pytest.raises(aigov_client.TimeoutError) as timed_out:
            client.use_cases.list(timeout=0.3)
        took = time.monotonic() - started
        assert 0.28 <= took < 1.5, took
        assert "token exchange" in str(timed_out.value)
    assert len(silent.accepted) == 1  # the exchange; the call itself never went out


def test_threads_waiting_on_one_exchange_each_keep_their_own_deadline(silent: SilentServer) -> None:
    ended: Dict[float, float] = {}
    with Client(silent.base_url, api_key="sk_silent", tenant="t", timeout=5) as client:
        started = time.monotonic()

        def call(timeout: float) -> None:
            with pytest.raises(aigov_client.TimeoutError):
                client.vendors.list(timeout=timeout)
            ended[timeout] = time.monotonic() - started

        threads = [threading.Thread(target=call, args=(timeout,)) for timeout in (0.3, 0.8, 1.4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert sorted(ended) == [0.3, 0.8, 1.4]
    for timeout, at in ended.items():
        assert timeout - 0.02 <= at < timeout + 0.6, (timeout, at)
    assert len(silent.accepted) == 1  # one exchange for the three of them


def test_async_calls_waiting_on_one_exchange_keep_their_deadlines_and_can_be_cancelled(silent: SilentServer) -> None:
    async def main() -> None:
        async with AsyncClient(silent.base_url, api_key="sk_silent", tenant="t", timeout=5) as client:
            started = time.monotonic()

            async def timed(timeout: float) -> float:
                with pytest.raises(aigov_client.TimeoutError) as timed_out:
                    await client.models.list(timeout=timeout)
                assert "token exchange" in str(timed_out.value)
                return time.monotonic() - started

            cancelled = asyncio.ensure_future(client.use_cases.list())
            asyncio.get_running_loop().call_later(0.15, cancelled.cancel)
            short, long = await asyncio.gather(timed(0.3), timed(1.0))
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            assert 0.28 <= short < 0.9, short
            assert 0.98 <= long < 1.6, long

    asyncio.run(main())
    assert len(silent.accepted) == 1
