"""Retries, idempotency, timeouts and transport failures, through a real fault proxy in front of a real service."""
from __future__ import annotations

import asyncio
import time
from typing import Any

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
