"""Server-sent event streams as the client reads them (the service's /events stream arrives with issue 16: until
then the proxy answers by itself), including the resume from Last-Event-ID after a dropped connection."""
from __future__ import annotations

import asyncio
import time
from typing import List

import pytest

from aigov_client import Event, RateLimitError
from aigov_client._core import AsyncTransport, Engine, Operation, SyncTransport, settings_from

from conftest import FaultProxy, Seen

FIRST = 'id: 1\nevent: use_case.created\ndata: {"id": "evt_1"}\n\n: heartbeat\n\nid: 2\ndata: plain\ndata: text\n\n'
SECOND = 'id: 3\nevent: use_case.deleted\ndata: {"id": "evt_3"}\n\n'


def cut_then_resume(proxy: FaultProxy) -> None:
    def decide(seen: Seen, index: int) -> object:
        sse = {"content-type": "text/event-stream"}
        if index == 0:
            return (200, {**sse, "content-length": str(len(FIRST) + 100)}, FIRST)  # dropped mid-stream
        return (200, sse, SECOND)

    proxy.decide = decide  # type: ignore[assignment]


def engine_for(proxy: FaultProxy) -> Engine:
    return Engine(settings_from(proxy.base_url, None, "t", "a-token", 5.0, 2, 0.01, 1.0, None), {"events": Operation("GET", "/events", "events")})


def check(proxy: FaultProxy, events: List[Event]) -> None:
    assert [(e.id, e.event, e.data) for e in events] == [
        ("1", "use_case.created", {"id": "evt_1"}),
        ("2", "message", "plain\ntext"),
        ("3", "use_case.deleted", {"id": "evt_3"}),
    ]
    first, second = proxy.requests
    assert first.headers["accept"] == "text/event-stream" and "last-event-id" not in first.headers
    assert second.headers["last-event-id"] == "2" and second.headers["authorization"] == "Bearer a-token"


def test_a_stream_resumes_after_the_last_event_it_saw(proxy: FaultProxy) -> None:
    cut_then_resume(proxy)
    transport = SyncTransport(engine_for(proxy), None)
    try:
        check(proxy, list(transport.events("events")))
    finally:
        transport.close()


def test_the_async_stream_resumes_the_same_way(proxy: FaultProxy) -> None:
    cut_then_resume(proxy)

    async def main() -> List[Event]:
        transport = AsyncTransport(engine_for(proxy), None)
        try:
            return [event async for event in transport.events("events")]
        finally:
            await transport.close()

    check(proxy, asyncio.run(main()))


def refused_then_streams(proxy: FaultProxy, refusals: int) -> List[float]:
    """The first ``refusals`` requests get a 429 asking for 0.4 s (as when a key holds too many streams); the rest stream."""
    asked_at: List[float] = []

    def decide(seen: Seen, index: int) -> object:
        asked_at.append(time.monotonic())
        if index < refusals:
            return (429, {"content-type": "application/problem+json", "retry-after": "0.4"}, '{"status": 429, "code": "rate_limited", "retry_after": 0.4}')
        return (200, {"content-type": "text/event-stream"}, SECOND)

    proxy.decide = decide  # type: ignore[assignment]
    return asked_at


def test_a_refused_stream_asks_again_after_retry_after(proxy: FaultProxy) -> None:
    asked_at = refused_then_streams(proxy, 2)
    transport = SyncTransport(engine_for(proxy), None)
    try:
        assert [e.id for e in transport.events("events")] == ["3"]
    finally:
        transport.close()
    assert len(asked_at) == 3
    assert all(later - earlier >= 0.4 for earlier, later in zip(asked_at, asked_at[1:]))


def test_a_stream_refused_more_than_max_retries_times_raises(proxy: FaultProxy) -> None:
    refused_then_streams(proxy, 3)

    async def main() -> None:
        transport = AsyncTransport(engine_for(proxy), None)
        try:
            async for _ in transport.events("events"):
                pass
        finally:
            await transport.close()

    with pytest.raises(RateLimitError) as refused:
        asyncio.run(main())
    assert refused.value.retry_after == 0.4
    assert len(proxy.requests) == 3
