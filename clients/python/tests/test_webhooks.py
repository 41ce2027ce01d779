"""Webhook signature verification, on the Standard Webhooks specification's published example."""
from __future__ import annotations

import pytest

from aigov_client import ValidationError, verify_webhook

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
BODY = b'{"test": 2432232314}'


def test_a_correct_signature_verifies() -> None:
    verify_webhook(SECRET, HEADERS, BODY, now=1614265330)
    verify_webhook(SECRET, {**HEADERS, "webhook-signature": "v1,bogus= " + HEADERS["webhook-signature"]}, BODY.decode(), now=1614265330)


@pytest.mark.parametrize(
    "headers, body, now",
    [
        (HEADERS, b'{"test": 2432232315}', 1614265330),  # body changed
        ({**HEADERS, "webhook-id": "msg_other"}, BODY, 1614265330),  # id changed
        (HEADERS, BODY, 1614265330 + 301),  # too old: a replay
        ({k: v for k, v in HEADERS.items() if k != "webhook-signature"}, BODY, 1614265330),
    ],
)
def test_anything_else_is_refused(headers: dict, body: bytes, now: float) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValidationError):
        verify_webhook(SECRET, headers, body, now=now)
