"""The token exchange: lazy, cached, refreshed before expiry, once more after a 401, and single-flight."""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, List

import pytest

from aigov_client import AsyncClient, AuthenticationError, Client
from aigov_client._core import DEFAULT_TOKEN_LIFETIME, _TokenCache

from conftest import FaultProxy, Service


def exchanges(proxy: FaultProxy) -> int:
    return len(proxy.paths("/auth/token", "POST"))


def test_lazy_and_cached(proxy: FaultProxy, service: Service) -> None:
    with Client(proxy.base_url, api_key=service.api_key, tenant=service.tenant) as client:
        assert exchanges(proxy) == 0
        client.system.ping()
        client.system.get()
        client.use_cases.list()
        assert exchanges(proxy) == 1
        token_request = proxy.paths("/auth/token")[0]
        assert token_request.headers["x-api-key"] == service.api_key and token_request.headers["x-tenant"] == service.tenant
        issued = client.auth.token()  # an explicit exchange answers the token itself
        assert issued["token_type"] == "Bearer" and issued["expires_in"] == 3600 and exchanges(proxy) == 2


def test_refreshed_before_a_two_second_token_expires(short_ttl_service: Service) -> None:
    with Client(short_ttl_service.base_url, api_key=short_ttl_service.api_key, tenant=short_ttl_service.tenant, max_retries=0) as client:
        first = client.token()
        client.system.ping()
        time.sleep(2.2)
        # The cached token has expired: a fresh one is exchanged before the call, which therefore succeeds first time.
        client.system.ping()
        assert client.token() != first


def test_a_401_triggers_one_fresh_exchange_and_one_retry(proxy: FaultProxy, service: Service) -> None:
    unauthorized = (401, {"content-type": "application/problem+json"}, '{"status": 401, "code": "unauthorized"}')
    proxy.decide = lambda seen, index: unauthorized if seen.path.endswith("/system/ping") and len(proxy.paths("/system/ping")) == 1 else "forward"
    with Client(proxy.base_url, api_key=service.api_key, tenant=service.tenant) as client:
        assert client.system.ping()["message"] == "pong"
        assert exchanges(proxy) == 2 and len(proxy.paths("/system/ping")) == 2
        proxy.decide = lambda seen, index: unauthorized if seen.path.endswith("/system/ping") else "forward"
        with pytest.raises(AuthenticationError):
            client.system.ping()
        assert exchanges(proxy) == 3  # once more, not in a loop


def test_a_supplied_token_is_used_as_is(proxy: FaultProxy, service: Service) -> None:
    with Client(service.base_url, api_key=service.api_key, tenant=service.tenant) as source:
        token = source.token()
    with Client(proxy.base_url, access_token=token, tenant=service.tenant) as client:
        client.system.ping()
        assert exchanges(proxy) == 0 and proxy.paths("/system/ping")[0].headers["authorization"] == f"Bearer {token}"


def test_expires_in_absent_means_55_minutes() -> None:
    cache = _TokenCache()
    cache.store({"access_token": "t"}, 100.0)
    assert DEFAULT_TOKEN_LIFETIME == 55 * 60 and cache.refresh_at == 100.0 + 55 * 60 - 60
    cache.store({"access_token": "t", "expires_in": 2}, 100.0)
    assert cache.refresh_at == 100.0 + 2 - 1.5


def test_fifty_threads_share_one_exchange(proxy: FaultProxy, service: Service) -> None:
    # Slow the exchange down so that every thread arrives while it is still in flight.
    proxy.decide = lambda seen, index: ("delay", 0.3) if seen.path.endswith("/auth/token") else "forward"
    with Client(proxy.base_url, api_key=service.api_key, tenant=service.tenant) as client:
        start = threading.Barrier(50)
        errors: List[BaseException] = []

        def worker() -> None:
            start.wait()
            try:
                client.system.ping()
            except BaseException as err:  # noqa: BLE001 - collected and asserted on below
                errors.append(err)

        threads = [threading.Thread(target=worker) for _ in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == [] and exchanges(proxy) == 1 and len(proxy.paths("/system/ping")) == 50


def test_fifty_tasks_share_one_exchange(proxy: FaultProxy, service: Service) -> None:
    proxy.decide = lambda seen, index: ("delay", 0.3) if seen.path.endswith("/auth/token") else "forward"

    async def main() -> Any:
        async with AsyncClient(proxy.base_url, api_key=service.api_key, tenant=service.tenant) as client:
            return await asyncio.gather(*(client.system.ping() for _ in range(50)))

    answers = asyncio.run(main())
    assert len(answers) == 50 and exchanges(proxy) == 1 and len(proxy.paths("/system/ping")) == 50
