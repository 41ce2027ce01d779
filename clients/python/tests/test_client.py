"""Records, namespaces, errors, pagination and conditional GETs against a real service, sync and async."""
from __future__ import annotations

import asyncio
import inspect
import re
from typing import Any, Set, cast

import httpx
import pytest

import aigov_client
from aigov_client import (
    AigovError,
    AlreadyExistsError,
    ApiError,
    AsyncClient,
    AuthenticationError,
    Client,
    ConflictError,
    NotFoundError,
    NotModified,
    Page,
    ValidationError,
    etag_of,
)
from aigov_client._resources import OPERATIONS

from conftest import Service, unique


def client_for(service: Service, **kwargs: Any) -> Client:
    return Client(service.base_url, api_key=service.api_key, tenant=service.tenant, **kwargs)


def test_crud_and_sub_resources(service: Service) -> None:
    with client_for(service) as client:
        created = client.use_cases.create({"name": unique("Credit scoring"), "risk_category_level": "high"})
        assert created["id"].startswith("uc_") and created["risk_category_level"] == "high"
        assert client.use_cases.get(created["id"])["name"] == created["name"]
        updated = client.use_cases.update(created["id"], {"description": "scores applications"})
        assert updated["description"] == "scores applications"
        model = client.models.create({"name": unique("gbm")})
        client.use_cases(created["id"]).models.link(model["id"])
        linked = client.use_cases(created["id"]).models.list()
        assert [m["id"] for m in linked.items] == [model["id"]] and linked.has_more is False
        client.use_cases(created["id"]).models.unlink(model["id"])
        assert client.use_cases(created["id"]).models.list().items == []
        assert client.use_cases(created["id"]).workflow.get()["workflow_stage_step"] == "assessment"
        assert client.system.ping()["tenant"] == service.tenant
        assert client.health.live()["message"] is True
        assert "use_case.created" in client.audit_logs.export(format="ndjson")
        client.use_cases.delete(created["id"])
        with pytest.raises(NotFoundError) as caught:
            client.use_cases.get(created["id"])
        assert caught.value.status_code == 404 and caught.value.request_id and caught.value.code == "not_found"


def test_async_crud(service: Service) -> None:
    async def main() -> None:
        async with AsyncClient(service.base_url, api_key=service.api_key, tenant=service.tenant) as client:
            vendor = await client.vendors.create({"name": unique("Acme")})
            assert (await client.vendors.get(vendor["id"]))["id"] == vendor["id"]
            await client.vendors.delete(vendor["id"])
            with pytest.raises(NotFoundError):
                await client.vendors.get(vendor["id"])

    asyncio.run(main())


def test_errors_are_typed_and_carry_the_problem(service: Service) -> None:
    with client_for(service) as client:
        name = unique("Duplicate")
        first = client.risk_types.create({"name": name})
        with pytest.raises(AlreadyExistsError) as duplicate:
            client.risk_types.create({"name": name.upper()})
        assert duplicate.value.status_code == 422 and duplicate.value.existing_id == first["id"]
        assert duplicate.value.code == "already_exists" and isinstance(duplicate.value, ApiError)
        with pytest.raises(ValidationError) as invalid:
            client.use_cases.create(cast(Any, {"name": "x", "unknown_field": 1}))
        assert invalid.value.status_code == 422 and invalid.value.error_details["errors"]
        stages = client.workflow_stages.list().items
        start = next(s for s in stages if s["type"] == "start")
        with pytest.raises(ConflictError):
            client.workflow_stages.delete(start["id"])
        with pytest.raises(ValidationError) as local:
            client.use_cases.get("")
        assert local.value.status_code is None  # refused before anything was sent
        with pytest.raises(ApiError) as bad_cursor:
            client.use_cases.list(page_after="not a cursor!")
        assert bad_cursor.value.status_code == 400
    with Client(service.base_url, api_key="sk_wrong", tenant=service.tenant) as wrong:
        with pytest.raises(AuthenticationError) as denied:
            wrong.system.ping()
        assert denied.value.status_code == 401
    for kind in (AlreadyExistsError, ValidationError, ConflictError, NotFoundError, AuthenticationError, aigov_client.RateLimitError, aigov_client.ServerError):
        assert issubclass(kind, ApiError) and issubclass(kind, AigovError)
    assert issubclass(aigov_client.TimeoutError, AigovError) and issubclass(aigov_client.ConnectionError, AigovError)


def test_read_role_is_refused_writes(service: Service) -> None:
    with client_for(service) as admin:
        key = admin.api_keys.create({"name": unique("reader"), "role": "read"})
    with Client(service.base_url, api_key=key["key"], tenant=service.tenant) as reader:
        reader.use_cases.list()
        with pytest.raises(AuthenticationError) as forbidden:
            reader.use_cases.create({"name": unique("nope")})
        assert forbidden.value.status_code == 403


def test_pagination_pages_and_iterators(service: Service) -> None:
    prefix = unique("Paged")
    with client_for(service) as client:
        ids = [client.risk_types.create({"name": f"{prefix} {i}"})["id"] for i in range(5)]
        first = client.risk_types.list(page_limit=2, q=prefix)
        assert isinstance(first, Page) and len(first.items) == 2 and first.has_more and first.next_cursor
        second = client.risk_types.list(page_limit=2, q=prefix, page_after=first.next_cursor)
        assert [r["id"] for r in first.items + second.items] == ids[:4]
        assert [r["id"] for r in client.risk_types.list_all(page_size=2, q=prefix)] == ids

    async def walk() -> Any:
        async with AsyncClient(service.base_url, api_key=service.api_key, tenant=service.tenant) as client:
            return [r["id"] async for r in client.risk_types.list_all(page_size=2, q=prefix)]

    assert asyncio.run(walk()) == ids


def test_audit_query_pages_through_the_body(service: Service) -> None:
    with client_for(service) as client:
        name = unique("Audited")
        created = client.use_cases.create({"name": name})
        client.use_cases.update(created["id"], {"description": "changed"})
        records = list(client.audit_logs.query_all({"resource_id": created["id"], "page_limit": 1}))
        assert [r["action"] for r in records] == ["use_case.created", "use_case.updated"]


def test_if_none_match_polls_cheaply(service: Service) -> None:
    with client_for(service) as client:
        page = client.use_cases.list()
        assert page.etag is not None
        with pytest.raises(NotModified) as unchanged:
            client.use_cases.list(if_none_match=page.etag)
        assert unchanged.value.etag == page.etag
        created = client.use_cases.create({"name": unique("Poll")})
        fresh = client.use_cases.list(if_none_match=page.etag)
        assert fresh.etag != page.etag
        record = client.use_cases.get(created["id"])
        assert etag_of(record) is not None and isinstance(record, dict)


def test_credentials_from_the_environment(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_URL", service.base_url + "/api/v1/integration/")
    monkeypatch.setenv("SERVICE_API_KEY", service.api_key)
    monkeypatch.setenv("SERVICE_TENANT", service.tenant)
    with Client() as client:
        assert client.system.ping()["tenant"] == service.tenant
        token = client.token()
    with Client(service.base_url, access_token=token, tenant=service.tenant) as bearer:
        assert bearer.system.ping()["tenant"] == service.tenant
    monkeypatch.delenv("SERVICE_TENANT")
    with Client() as default_tenant:
        # The key belongs to another tenant: the exchange for tenant `default` is refused like any wrong key.
        with pytest.raises(AuthenticationError):
            default_tenant.system.ping()
    monkeypatch.delenv("SERVICE_API_URL")
    with pytest.raises(ValidationError):
        Client()


def _operation_ids(obj: Any) -> Set[str]:
    """operationIds the public methods of a namespace tree call (item namespaces reached with a dummy id)."""
    found: Set[str] = set()
    for name, member in inspect.getmembers(type(obj), inspect.isfunction):
        if not name.startswith("_"):
            found |= set(re.findall(r'_t\.(?:call|iterate|events)\("(\w+)"', inspect.getsource(member)))
    for name, value in vars(obj).items():
        if not name.startswith("_") and hasattr(value, "_t"):
            found |= _operation_ids(value)
    if callable(obj) and "__call__" in vars(type(obj)):
        found |= _operation_ids(obj("x"))
    return found


def test_every_operation_of_the_live_document_is_reachable(service: Service) -> None:
    document = httpx.get(f"{service.base_url}/openapi.json").json()
    live = {op["operationId"] for item in document["paths"].values() for op in item.values() if isinstance(op, dict) and "operationId" in op}
    assert set(OPERATIONS) == live
    with client_for(service) as client:
        assert _operation_ids(client) == live

    async def reach() -> Set[str]:
        async with AsyncClient(service.base_url, api_key=service.api_key, tenant=service.tenant) as client:
            return _operation_ids(client)

    assert asyncio.run(reach()) == live
