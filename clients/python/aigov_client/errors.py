"""Every failure the client raises: ``except AigovError`` catches all of them, transport failures included."""
from __future__ import annotations

import builtins
from typing import Any, Dict, Mapping, Optional


class AigovError(Exception):
    """Base of every exception this package raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ApiError(AigovError):
    """The service answered with an error (or with something that is not a valid answer)."""

    def __init__(
        self,
        message: str,
        *,
        status_code: Optional[int] = None,
        request_id: Optional[str] = None,
        error_details: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.request_id = request_id
        #: The RFC 9457 problem body as the service sent it (``{}`` when there was none).
        self.error_details: Dict[str, Any] = error_details or {}

    @property
    def code(self) -> Optional[str]:
        """The problem's machine-readable ``code`` (``not_found``, ``already_exists``, …)."""
        code = self.error_details.get("code")
        return code if isinstance(code, str) else None


class AuthenticationError(ApiError):
    """401 (no, wrong or expired credentials) or 403 (a role or tenant that does not allow the call)."""


class NotFoundError(ApiError):
    """404, also for another tenant's ids."""


class AlreadyExistsError(ApiError):
    """Problem code ``already_exists`` (422 per the contract): a record with this name or key exists."""

    @property
    def existing_id(self) -> Optional[str]:
        value = self.error_details.get("existing_id")
        return value if isinstance(value, str) else None


class ConflictError(ApiError):
    """409: the record's state does not allow the change (referenced, published, system-managed, …)."""


class ValidationError(ApiError):
    """422 from the service, or an argument the client refused before sending anything."""


class RateLimitError(ApiError):
    """429 after the retries; ``retry_after`` is in seconds."""

    def __init__(
        self,
        message: str,
        *,
        status_code: Optional[int] = None,
        request_id: Optional[str] = None,
        error_details: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
        limit: Optional[int] = None,
        remaining: Optional[int] = None,
        reset_time: Optional[str] = None,
    ) -> None:
        super().__init__(message, status_code=status_code, request_id=request_id, error_details=error_details)
        self.retry_after = retry_after
        self.limit = limit
        self.remaining = remaining
        self.reset_time = reset_time


class ServerError(ApiError):
    """5xx after the retries."""


class TimeoutError(AigovError, builtins.TimeoutError):
    """No complete answer within the timeout (also catchable as the built-in ``TimeoutError``)."""


class ConnectionError(AigovError, builtins.ConnectionError):
    """The service could not be reached, or dropped the connection (also the built-in ``ConnectionError``)."""


class NotModified(Exception):
    """A GET sent with ``if_none_match`` whose answer has not changed (HTTP 304). Not an error."""

    def __init__(self, etag: Optional[str]) -> None:
        super().__init__(f"not modified (ETag {etag})")
        self.etag = etag


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _integer(value: Any) -> Optional[int]:
    number = _number(value)
    return int(number) if number is not None else None


def error_from_response(status: int, headers: Mapping[str, str], problem: Optional[Dict[str, Any]]) -> ApiError:
    """The exception for one error answer, chosen by status (and problem ``code``)."""
    details = problem or {}
    title = details.get("detail") or details.get("title")
    message = f"{status} {title}" if isinstance(title, str) else f"the service answered {status}"
    kwargs: Dict[str, Any] = {"status_code": status, "request_id": headers.get("x-request-id"), "error_details": details}
    if status == 429:
        return RateLimitError(
            message,
            **kwargs,
            retry_after=parse_retry_after(headers.get("retry-after")) or _number(details.get("retry_after")),
            limit=_integer(details.get("limit", headers.get("ratelimit-limit", headers.get("x-ratelimit-limit")))),
            remaining=_integer(details.get("remaining", headers.get("ratelimit-remaining", headers.get("x-ratelimit-remaining")))),
            reset_time=details.get("reset_time") if isinstance(details.get("reset_time"), str) else None,
        )
    if details.get("code") == "already_exists":
        return AlreadyExistsError(message, **kwargs)
    if status in (401, 403):
        return AuthenticationError(message, **kwargs)
    if status == 404:
        return NotFoundError(message, **kwargs)
    if status == 409:
        return ConflictError(message, **kwargs)
    if status == 422:
        return ValidationError(message, **kwargs)
    if status >= 500:
        return ServerError(message, **kwargs)
    return ApiError(message, **kwargs)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    seconds = _number(value.strip())
    if seconds is not None:
        return max(seconds, 0.0)
    from email.utils import parsedate_to_datetime
    from datetime import datetime, timezone

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)
