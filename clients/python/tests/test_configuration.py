"""Configuration as code: export (JSON or YAML text), schema, plan and apply with a pinned plan, sync and async; bundles
streamed to and from files."""
from __future__ import annotations

import asyncio
import io
import tarfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from aigov_client import AsyncClient, Client, ConflictError, ValidationError

from conftest import Service, start_services, unique


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


def _bundle_parts(data: bytes) -> Tuple[str, List[str], List[str]]:
    """A bundle's document, its record lines (sorted) and its file names."""
    document = ""
    lines: List[str] = []
    files: List[str] = []
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member)
            content = handle.read() if handle is not None else b""
            if member.name == "configuration.yaml":
                document = content.decode()
            elif member.name.startswith("records/"):
                lines.extend(line for line in content.decode().split("\n") if line)
            elif member.name.startswith("files/"):
                files.append(member.name)
    return document, sorted(lines), sorted(files)


def _tar(entries: Dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, content in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return out.getvalue()


def test_configuration_bundle_round_trip(service: Service, tmp_path: Path) -> None:
    """A bundle exported from one tenant (streamed to a file), planned and applied (streamed from one) into an empty
    tenant of another service, exports the same document, records and files."""
    with Client(service.base_url, api_key=service.api_key, tenant=service.tenant) as source:
        email = f"{unique('bundle-owner').lower().replace(' ', '-')}@example.com"
        owner = source.users.create({"email": email, "name": "Bundle Owner"})
        source.vendors.create({"name": unique("Bundle vendor"), "owner": {"owner_id": owner["id"]}})
        source.evidence.create(file=b"bundle evidence\n" * 1000, title=unique("Bundle report"))
        source.use_cases.create({"name": unique("Bundle use case"), "owner": {"owner_id": owner["id"]}})

        buffer = io.BytesIO()
        written = source.configuration.export_bundle(buffer)
        exported = buffer.getvalue()
        assert written == len(exported) > 0
        path = tmp_path / "source.tar"
        assert source.configuration.export_bundle(path) == written
        assert path.read_bytes() == exported
    document, lines, files = _bundle_parts(exported)
    assert any(email in line for line in lines) and files

    [target] = start_services({})
    try:
        with Client(target.base_url, api_key=target.api_key, tenant=target.tenant) as client:
            with open(path, "rb") as handle:
                plan = client.configuration.plan_bundle(handle)
            assert plan["records"]["summary"]["create"] == len(lines)
            assert plan["records"]["summary"]["files"] == len(files)
            applied = client.configuration.apply_bundle(path, plan_id=plan["plan_id"], idempotency_key="bundle-copy")
            assert applied["plan_id"] == plan["plan_id"] and applied["applied"] >= len(lines)
            # The same key with the same bundle answers the first apply again; with another bundle it is refused.
            again = client.configuration.apply_bundle(path, plan_id=plan["plan_id"], idempotency_key="bundle-copy")
            assert again == applied
            with pytest.raises(ValidationError):
                client.configuration.apply_bundle(io.BytesIO(_tar({"configuration.yaml": b"apiVersion: aigov/v1\n"})), idempotency_key="bundle-copy")

            copy = io.BytesIO()
            client.configuration.export_bundle(copy)
            assert _bundle_parts(copy.getvalue()) == (document, lines, files)

            unknown = _tar(
                {
                    "configuration.yaml": b"apiVersion: aigov/v1\n",
                    "records/vendors/000001.ndjson": (
                        '{"name":"Owned","description":null,"website":null,"status":"active",'
                        '"owner":{"email":"nobody@example.com"},"custom_fields":{}}\n'
                    ).encode(),
                }
            )
            with pytest.raises(ValidationError) as refused:
                client.configuration.plan_bundle(io.BytesIO(unknown))
            assert [(e["file"], e["line"], e["pointer"]) for e in refused.value.error_details["errors"]] == [
                ("records/vendors/000001.ndjson", 1, "/owner")
            ]

        async def main() -> None:
            async with AsyncClient(target.base_url, api_key=target.api_key, tenant=target.tenant) as aclient:
                out = io.BytesIO()
                assert await aclient.configuration.export_bundle(out) == len(out.getvalue())
                assert _bundle_parts(out.getvalue()) == (document, lines, files)
                same = await aclient.configuration.plan_bundle(tmp_path / "source.tar")
                assert same["records"]["summary"]["unchanged"] == len(lines)
                assert same["records"]["summary"]["create"] == 0

        asyncio.run(main())
    finally:
        target.stop()
