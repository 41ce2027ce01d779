"""Python client for the AI governance integration service."""
from ._client import AsyncClient, Client
from ._core import Event, Page, Record, etag_of
from .errors import (
    AigovError,
    AlreadyExistsError,
    ApiError,
    AuthenticationError,
    ConflictError,
    ConnectionError,
    NotFoundError,
    NotModified,
    RateLimitError,
    ServerError,
    TimeoutError,
    ValidationError,
)
from .webhooks import verify_webhook

__all__ = [
    "AigovError",
    "AlreadyExistsError",
    "ApiError",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "ConnectionError",
    "Event",
    "NotFoundError",
    "NotModified",
    "Page",
    "RateLimitError",
    "Record",
    "ServerError",
    "TimeoutError",
    "ValidationError",
    "etag_of",
    "verify_webhook",
]
__version__ = "0.2.0"
