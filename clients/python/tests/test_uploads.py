"""Multipart uploads as the client encodes them (the service's evidence upload arrives with issue 15: until then
the proxy answers by itself and the test reads what reached it)."""
from __future__ import annotations

import email.parser
import email.policy
from email.message import EmailMessage
from pathlib import Path
from typing import cast

from aigov_client._core import Engine, Operation, SyncTransport, settings_from

from conftest import FaultProxy, Seen


def test_a_file_is_sent_as_multipart_and_resent_identically_on_a_retry(proxy: FaultProxy, tmp_path: Path) -> None:
    report = tmp_path / "model card.pdf"
    report.write_bytes(b"%PDF-1.7 \x00\xff binary")

    def decide(seen: Seen, index: int) -> object:
        if len(proxy.requests) == 1:
            return (503, {}, "")
        return (201, {"content-type": "application/json"}, '{"id": "ev_1"}')

    proxy.decide = decide  # type: ignore[assignment]
    operations = {"upload": Operation("POST", "/evidence", "json", public=True, idempotency_key=True)}
    engine = Engine(settings_from(proxy.base_url, None, "t", None, 5.0, 2, 0.01, 1.0, None), operations)
    transport = SyncTransport(engine, None)
    try:
        with report.open("rb") as handle:
            answer = transport.call("upload", files={"file": handle}, data={"title": "Model card", "skipped": None})
    finally:
        transport.close()
    assert answer == {"id": "ev_1"}
    first, second = proxy.requests
    assert first.body == second.body and first.headers["idempotency-key"] == second.headers["idempotency-key"]
    message = cast(EmailMessage, email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"content-type: {first.headers['content-type']}\r\n\r\n".encode() + first.body
    ))
    parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
    assert set(parts) == {"file", "title"}
    assert parts["file"].get_filename() == "model card.pdf" and parts["file"].get_content_type() == "application/pdf"
    assert parts["file"].get_payload(decode=True) == b"%PDF-1.7 \x00\xff binary"
    assert parts["title"].get_payload(decode=True) == b"Model card"
