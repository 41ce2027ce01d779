"""Verification of webhook deliveries signed per Standard Webhooks (``webhook-id``, ``-timestamp``, ``-signature``)."""
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Mapping, Optional, Union

from .errors import ValidationError

#: Deliveries older or newer than this are refused, so a captured request cannot be replayed later.
DEFAULT_TOLERANCE = 5 * 60


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: Union[bytes, str],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> None:
    """Raises ``ValidationError`` unless ``body`` was signed with ``secret`` (``whsec_…``) within ``tolerance`` s.

    Pass the raw request body exactly as received (re-serialised JSON does not verify) and its headers.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    message_id, timestamp, signatures = lower.get("webhook-id"), lower.get("webhook-timestamp"), lower.get("webhook-signature")
    if not message_id or not timestamp or not signatures:
        raise ValidationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise ValidationError("webhook-timestamp is not a whole number of seconds") from None
    if abs((time.time() if now is None else now) - sent_at) > tolerance:
        raise ValidationError("webhook-timestamp is outside the tolerance: an old or replayed delivery")
    try:
        key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret, validate=True)
    except ValueError:
        raise ValidationError("the webhook secret is not base64 after its whsec_ prefix") from None
    payload = body.encode("utf-8") if isinstance(body, str) else body
    signed = f"{message_id}.{sent_at}.".encode("utf-8") + payload
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return
    raise ValidationError("no webhook-signature matches the body")
