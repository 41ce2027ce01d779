"""``Client`` and ``AsyncClient``: settings, the HTTP connection pool and the namespaces."""
from __future__ import annotations

from types import TracebackType
from typing import Mapping, Optional, Type

import httpx

from ._core import AsyncTransport, Engine, SyncTransport, settings_from
from ._resources import OPERATIONS, AsyncResources, Resources


class Client(Resources):
    """A client of the integration API for threads and plain scripts.

    Settings fall back to SERVICE_API_URL, SERVICE_API_KEY and SERVICE_TENANT (tenant ``default``). The API
    key is exchanged for a token on first use; the token is cached, refreshed before it expires and once more
    after a 401. Every failure raises an ``AigovError``.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
        tenant: Optional[str] = None,
        access_token: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_delay: float = 0.5,
        max_retry_delay: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        settings = settings_from(base_url, api_key, tenant, access_token, timeout, max_retries, retry_delay, max_retry_delay, headers)
        self._transport = SyncTransport(Engine(settings, OPERATIONS), http_client)
        super().__init__(self._transport)

    def token(self) -> str:
        """A valid access token (exchanged now if there is none yet)."""
        return self._transport.token()

    def close(self) -> None:
        """Closes the connection pool (unless it was passed in as ``http_client``)."""
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()


class AsyncClient(AsyncResources):
    """The asyncio twin of ``Client``: the same namespaces, every call awaited, ``*_all`` async iterators."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
        tenant: Optional[str] = None,
        access_token: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_delay: float = 0.5,
        max_retry_delay: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        settings = settings_from(base_url, api_key, tenant, access_token, timeout, max_retries, retry_delay, max_retry_delay, headers)
        self._transport = AsyncTransport(Engine(settings, OPERATIONS), http_client)
        super().__init__(self._transport)

    async def token(self) -> str:
        """A valid access token (exchanged now if there is none yet)."""
        return await self._transport.token()

    async def close(self) -> None:
        """Closes the connection pool (unless it was passed in as ``http_client``)."""
        await self._transport.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()
