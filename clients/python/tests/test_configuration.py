"""Configuration as code: export (JSON or YAML text), schema, plan and apply with a pinned plan, sync and async."""
from __future__ import annotations

import asyncio

import pytest

from aigov_client import AsyncClient, Client, ConflictError, ValidationError

from conftest import Service, unique


def test_configuration_export_plan_apply(service: Service) -> None:
    with Client(service.base_url, api_key=service.api_key, tenant=service.tenant) as client:
        document = client.configuration.export()
        assert document["apiVersion"] == "aigov/v1"
        text = client.configuration.export_yaml()
        assert text.startswith("apiVersion: aigov/v1\n")
        assert "workflow_stages" in client.configuration.schema.get()["properties"]

        # Its own export, as JSON or as YAML text, changes nothing.
        same = client.configuration.plan(document)
        assert (same["summary"]["create"], same["summary"]["update"], same["summary"]["delete"]) == (0, 0, 0)
        assert client.configuration.plan(text)["summary"] == same["summary"]

        name = unique("Python-planned risk")
        change = f"apiVersion: aigov/v1\nrisk_types:\n  - name: {name}\n"
        plan = client.configuration.plan(change)
        created = [c for c in plan["changes"] if c["action"] == "create"]
        assert [(c["section"], c["key"]) for c in created] == [("risk_types", name)]
        applied = client.configuration.apply(change, plan_id=plan["plan_id"])
        assert applied["applied"] == 1 and applied["plan_id"] == plan["plan_id"]
        assert name in [r["name"] for r in client.configuration.export()["risk_types"]]
        # The tenant changed since that plan: refused, nothing applied.
        with pytest.raises(ConflictError):
            client.configuration.apply(change, plan_id=plan["plan_id"])

        with pytest.raises(ValidationError) as bad:
            client.configuration.plan("apiVersion: aigov/v1\nrisk_types:\n  - nom: x\n")
        assert any(e.get("line") == 3 for e in bad.value.error_details["errors"])


def test_configuration_async(service: Service) -> None:
    async def main() -> None:
        async with AsyncClient(service.base_url, api_key=service.api_key, tenant=service.tenant) as client:
            text = await client.configuration.export_yaml()
            plan = await client.configuration.plan(text, prune=True)
            assert plan["summary"]["create"] == 0 and plan["summary"]["delete"] == 0
            # The plan pins the document's content, not its form: its JSON export applies under the YAML's plan.
            document = await client.configuration.export()
            applied = await client.configuration.apply(document, prune=True, plan_id=plan["plan_id"])
            assert applied["applied"] == 0

    asyncio.run(main())
