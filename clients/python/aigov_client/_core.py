"""The request engine shared by ``Client`` and ``AsyncClient``.

Each call is planned once as a generator of steps (get a token, send, sleep) that a sync or an async driver
runs, so token handling, retries and error mapping exist once for both clients.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import mimetypes
import os
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterator,
    Dict,
    Generator,
    IO,
    Generic,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)
from urllib.parse import quote, urlencode

import httpx

from .errors import (
    AigovError,
    ApiError,
    AuthenticationError,
    ConnectionError,
    NotModified,
    TimeoutError,
    ValidationError,
    error_from_response,
    parse_retry_after,
)

API_PREFIX = "/api/v1/integration"
#: Lifetime assumed for a token whose exchange did not say (``expires_in`` absent).
DEFAULT_TOKEN_LIFETIME = 55 * 60.0
RETRY_STATUSES = frozenset({429, 502, 503, 504})

T = TypeVar("T")


#: A file to upload: a path, its bytes, or an open binary file.
FileInput = Union[str, "os.PathLike[str]", bytes, IO[bytes]]


def _file_part(value: FileInput) -> Tuple[str, bytes, str]:
    """(file name, content, content type), read once so that every retry sends the same bytes."""
    if isinstance(value, bytes):
        return "upload", value, "application/octet-stream"
    if isinstance(value, (str, os.PathLike)):
        with open(value, "rb") as handle:
            content = handle.read()
        name = os.path.basename(os.fspath(value))
    else:
        content = value.read()
        name = os.path.basename(str(getattr(value, "name", "upload")))
    return name, content, mimetypes.guess_type(name)[0] or "application/octet-stream"


#: A configuration bundle to send: a path, or an open binary file, read as it is sent (never whole).
BundleInput = Union[str, "os.PathLike[str]", IO[bytes]]
#: Where a bundle is written: a path (created or truncated), or an open binary file.
BundleOutput = Union[str, "os.PathLike[str]", IO[bytes]]
BUNDLE_TYPE = "application/x-tar"
_CHUNK = 64 * 1024


class _FileArgument:
    """A path or an open binary file, and whether each attempt of a call can start it over from where it began."""

    def __init__(self, target: Union[BundleInput, BundleOutput]) -> None:
        self.path: Optional[str] = os.fspath(target) if isinstance(target, (str, os.PathLike)) else None
        self.handle: Optional[IO[bytes]] = None if self.path is not None else target  # type: ignore[assignment]
        self.start = 0
        self.rewindable = self.path is not None
        if self.handle is not None:
            try:
                self.start = self.handle.tell()
                self.rewindable = self.handle.seekable()
            except (AttributeError, OSError, ValueError):
                self.rewindable = False


class _Upload(_FileArgument):
    """A bundle sent as a stream; each attempt sends it from its start, so only a rewindable one is retried."""

    def _open(self) -> Tuple[IO[bytes], bool]:
        if self.path is not None:
            return open(self.path, "rb"), True
        assert self.handle is not None
        if self.rewindable:
            self.handle.seek(self.start)
        return self.handle, False

    def chunks(self) -> Iterator[bytes]:
        handle, owned = self._open()
        try:
            while True:
                chunk = handle.read(_CHUNK)
                if not chunk:
                    return
                yield chunk
        finally:
            if owned:
                handle.close()

    async def achunks(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks():
            yield chunk


class _Sink(_FileArgument):
    """Where a streamed answer goes; each attempt writes it from the start, so only a rewindable one is retried."""

    def __init__(self, output: BundleOutput) -> None:
        super().__init__(output)
        #: The bytes of the answer written.
        self.count = 0

    def open(self) -> Tuple[IO[bytes], bool]:
        if self.path is not None:
            return open(self.path, "wb"), True
        assert self.handle is not None
        if self.rewindable:
            self.handle.seek(self.start)
            self.handle.truncate()
        return self.handle, False


@dataclass(frozen=True)
class Operation:
    """How one operationId of the service is called."""

    method: str
    #: Under /api/v1/integration unless ``root``; ``{name}`` segments are filled from the path arguments, in order.
    path: str
    #: What a 2xx answers: a JSON record, a page (``items`` + ``pagination``), text, bytes, or nothing (204).
    response: str = "json"
    root: bool = False
    #: No bearer token (health checks and the token exchange itself).
    public: bool = False
    #: A POST that changes state: it carries an Idempotency-Key, which also makes it safe to retry.
    idempotency_key: bool = False
    #: The content type of a body given as text (a YAML document), sent as it is.
    text_body: Optional[str] = None
    #: A content type the answer may come in as text instead of JSON (asked for with Accept): returned as a str.
    text_answer: Optional[str] = None


@dataclass
class Page(Generic[T]):
    """One page of a list: its records and the cursor of the next page."""

    items: List[T]
    has_more: bool
    next_cursor: Optional[str]
    #: The answer's ETag: pass it as ``if_none_match`` to poll cheaply.
    etag: Optional[str] = None


class Record(Dict[str, Any]):
    """A JSON object answered by the service; a plain ``dict`` that also remembers the answer's ETag."""

    etag: Optional[str] = None


@dataclass
class Event:
    """One server-sent event: ``data`` is the parsed JSON when it is JSON, else the text."""

    id: Optional[str]
    event: str
    data: Any


class _EventParser:
    """Server-sent events from lines (the text/event-stream format), remembering the last id."""

    def __init__(self, last_event_id: Optional[str]) -> None:
        self.last_event_id = last_event_id
        self._event = "message"
        self._data: List[str] = []

    def feed(self, line: str) -> Optional[Event]:
        if line == "":
            if not self._data:
                self._event = "message"
                return None
            text = "\n".join(self._data)
            try:
                data: Any = json.loads(text)
            except ValueError:
                data = text
            event = Event(self.last_event_id, self._event, data)
            self._event, self._data = "message", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_event_id = value
        return None


def etag_of(value: object) -> Optional[str]:
    """The ETag of the answer a record or page came from (``None`` when the service sent none)."""
    etag = getattr(value, "etag", None)
    return etag if isinstance(etag, str) else None


@dataclass
class Settings:
    base_url: str
    api_key: Optional[str]
    tenant: str
    access_token: Optional[str]
    timeout: float
    max_retries: int
    retry_delay: float
    max_retry_delay: float
    headers: Dict[str, str] = field(default_factory=dict)


def settings_from(
    base_url: Optional[str],
    api_key: Optional[str],
    tenant: Optional[str],
    access_token: Optional[str],
    timeout: float,
    max_retries: int,
    retry_delay: float,
    max_retry_delay: float,
    headers: Optional[Mapping[str, str]],
) -> Settings:
    """Arguments first, then SERVICE_API_URL / SERVICE_API_KEY / SERVICE_TENANT (tenant ``default``)."""
    url = base_url or os.environ.get("SERVICE_API_URL") or ""
    if not url:
        raise ValidationError("pass base_url or set SERVICE_API_URL")
    url = url.rstrip("/")
    if url.endswith(API_PREFIX):
        url = url[: -len(API_PREFIX)]
    if timeout <= 0 or max_retries < 0 or retry_delay < 0 or max_retry_delay < 0:
        raise ValidationError("timeout must be positive; max_retries, retry_delay and max_retry_delay not negative")
    return Settings(
        base_url=url,
        api_key=api_key or os.environ.get("SERVICE_API_KEY") or None,
        tenant=tenant or os.environ.get("SERVICE_TENANT") or "default",
        access_token=access_token,
        timeout=timeout,
        max_retries=max_retries,
        retry_delay=retry_delay,
        max_retry_delay=max_retry_delay,
        headers=dict(headers or {}),
    )


@dataclass
class CallOptions:
    timeout: Optional[float] = None
    max_retries: Optional[int] = None
    headers: Optional[Mapping[str, str]] = None
    idempotency_key: Optional[str] = None
    if_none_match: Optional[str] = None


@dataclass
class _Request:
    method: str
    url: str
    headers: Dict[str, str]
    content: Optional[bytes]
    timeout: float
    #: A body sent as a stream instead of ``content``.
    upload: Optional[_Upload] = None
    #: Where a 2xx answer's bytes are written as they arrive (the call then answers their count).
    sink: Optional[_Sink] = None


# Steps a call plan yields to its driver.
@dataclass
class _NeedToken:
    #: The token that failed (a 401): a fresh exchange unless someone already replaced it.
    stale: Optional[str] = None
    #: When the call stops waiting for it (``time.monotonic()``); the exchange goes on for the callers still waiting.
    deadline: Optional[float] = None


@dataclass
class _Send:
    request: _Request


@dataclass
class _Sleep:
    seconds: float


_Step = Union[_NeedToken, _Send, _Sleep]
_Plan = Generator[_Step, Any, Any]


class _TokenCache:
    def __init__(self) -> None:
        # One tuple, replaced whole, so a thread never reads one token with another's refresh time.
        self._state: Tuple[Optional[str], float] = (None, 0.0)

    @property
    def refresh_at(self) -> float:
        return self._state[1]

    def current(self) -> Optional[str]:
        token, refresh_at = self._state
        return token if token is not None and time.monotonic() < refresh_at else None

    def store(self, answer: Any, requested_at: float) -> str:
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise ApiError("malformed response from the service: the token exchange answered no access_token", status_code=200)
        expires_in = answer.get("expires_in")
        valid = isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0
        lifetime = float(expires_in) if valid else DEFAULT_TOKEN_LIFETIME
        # Refresh a little before the end: 10% of the lifetime (at most a minute), and at least 1.5 s because a
        # JWT `exp` counts whole seconds from when the server issued it, up to 1 s earlier than it looks.
        self._state = (token, requested_at + lifetime - min(60.0, max(lifetime / 10, 1.5)))
        return token


def _fill_path(template: str, args: Sequence[str]) -> str:
    parts = template.split("/")
    values = iter(args)
    for i, part in enumerate(parts):
        if part.startswith("{") and part.endswith("}"):
            value = next(values, None)
            if not isinstance(value, str) or value == "":
                raise ValidationError(f"{part[1:-1]} must be a non-empty string, got {value!r}")
            parts[i] = quote(value, safe="")
    return "/".join(parts)


def _query_pairs(query: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    pairs: List[Tuple[str, str]] = []
    for key, value in (query or {}).items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is None:
                continue
            pairs.append((key, ("true" if item else "false") if isinstance(item, bool) else str(item)))
    return pairs


class Engine:
    """Settings, the token cache and the call plan; the sync and async transports drive it."""

    def __init__(self, settings: Settings, operations: Mapping[str, Operation]) -> None:
        self.settings = settings
        self.operations = operations
        self.tokens = _TokenCache()

    def request(
        self,
        op: Operation,
        path_args: Sequence[str],
        query: Optional[Mapping[str, Any]],
        body: Any,
        options: CallOptions,
        extra_headers: Optional[Mapping[str, str]] = None,
        files: Optional[Mapping[str, FileInput]] = None,
        data: Optional[Mapping[str, Any]] = None,
        upload: Optional[_Upload] = None,
        sink: Optional[_Sink] = None,
    ) -> _Request:
        s = self.settings
        url = s.base_url + ("" if op.root else API_PREFIX) + _fill_path(op.path, path_args)
        pairs = _query_pairs(query)
        if pairs:
            url += "?" + urlencode(pairs)
        headers = {"accept": "application/json, application/problem+json", **s.headers, **(options.headers or {}), **(extra_headers or {})}
        if not op.root:
            headers["x-tenant"] = s.tenant
        content: Optional[bytes] = None
        if upload is not None:
            headers["content-type"] = BUNDLE_TYPE
        elif files is not None:
            fields = {key: str(value) for key, value in (data or {}).items() if value is not None}
            form = httpx.Request(op.method, url, files={key: _file_part(value) for key, value in files.items()}, data=fields)
            content = form.read()
            headers["content-type"] = form.headers["content-type"]
        elif isinstance(body, str) and op.text_body is not None:
            content = body.encode("utf-8")
            headers["content-type"] = op.text_body
        elif body is not None:
            if not isinstance(body, Mapping):
                raise ValidationError(f"the request body must be a mapping, got {type(body).__name__}")
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            headers["content-type"] = "application/json"
        if op.idempotency_key:
            headers["idempotency-key"] = options.idempotency_key or str(uuid.uuid4())
        if options.if_none_match is not None:
            headers["if-none-match"] = options.if_none_match
        timeout = options.timeout if options.timeout is not None else s.timeout
        return _Request(op.method, url, headers, content, timeout, upload, sink)

    def plan(
        self,
        operation_id: str,
        path_args: Sequence[str],
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        options: Optional[CallOptions] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        files: Optional[Mapping[str, FileInput]] = None,
        data: Optional[Mapping[str, Any]] = None,
        upload: Optional[BundleInput] = None,
        sink: Optional[BundleOutput] = None,
    ) -> _Plan:
        """One call: token, send, retries with backoff, one refresh after a 401, and the parsed answer."""
        op = self.operations[operation_id]
        opts = options or CallOptions()
        if operation_id == "createToken" and body is None and self.settings.api_key:
            # `client.auth.token()` without a body: the client's own credentials, in headers like the exchange.
            extra_headers = {"x-api-key": self.settings.api_key, **(extra_headers or {})}
        sent = _Upload(upload) if upload is not None else None
        written = _Sink(sink) if sink is not None else None
        if written is not None:
            extra_headers = {"accept": f"{BUNDLE_TYPE}, application/problem+json", **(extra_headers or {})}
        request = self.request(op, path_args, query, body, opts, extra_headers, files, data, sent, written)
        retriable = op.method in ("GET", "PUT", "DELETE") or op.idempotency_key or operation_id == "createToken"
        # A stream read once (a pipe, a socket) cannot be sent, or written, a second time.
        if (sent is not None and not sent.rewindable) or (written is not None and not written.rewindable):
            retriable = False
        max_retries = self.retries(opts)
        exchanged = self.settings.access_token is None
        refreshed = False
        attempt = 0
        while True:
            bearer: Optional[str] = None
            # The attempt's timeout covers the token it may wait for as well as the request.
            deadline = time.monotonic() + request.timeout
            attempt_request = request
            # The exchange itself never waits for a token (it would wait for itself).
            if not op.public and operation_id != "createToken":
                bearer = yield _NeedToken(deadline=deadline)
                request.headers["authorization"] = f"Bearer {bearer}"
                attempt_request = dataclasses.replace(request, timeout=max(deadline - time.monotonic(), 0.001))
            failure: Optional[AigovError] = None
            response: Optional[httpx.Response] = None
            try:
                response = yield _Send(attempt_request)
            except ConnectionError as err:
                failure = err
            if response is not None and response.status_code == 401 and bearer is not None and exchanged and not refreshed:
                # A token the service no longer accepts (expired early, key rotated): refresh once, retry once.
                refreshed = True
                yield _NeedToken(stale=bearer, deadline=deadline)
                continue
            transient = failure is not None or (response is not None and response.status_code in RETRY_STATUSES)
            if retriable and transient and attempt < max_retries:
                retry_after = parse_retry_after(response.headers.get("retry-after")) if response is not None else None
                delay = self.retry_delay(attempt, retry_after)
                if delay is not None:
                    attempt += 1
                    yield _Sleep(delay)
                    continue
            if failure is not None:
                raise failure
            assert response is not None
            if written is not None and 200 <= response.status_code < 300:
                return written.count
            return read(op, response)

    def retries(self, options: CallOptions) -> int:
        return options.max_retries if options.max_retries is not None else self.settings.max_retries

    def stream_request(self, operation_id: str, path_args: Sequence[str], query: Optional[Mapping[str, Any]], last_event_id: Optional[str], options: CallOptions, token: str) -> _Request:
        """The request that opens (or resumes, from ``last_event_id``) an event stream."""
        op = self.operations[operation_id]
        extra = {"accept": "text/event-stream", "authorization": f"Bearer {token}"}
        if last_event_id is not None:
            extra["last-event-id"] = last_event_id
        return self.request(op, path_args, query, None, options, extra)

    def retry_delay(self, attempt: int, retry_after: Optional[float]) -> Optional[float]:
        """Exponential backoff with jitter; a Retry-After above ``max_retry_delay`` gives the error back instead."""
        s = self.settings
        backoff = min(s.retry_delay * 2.0**attempt, s.max_retry_delay)
        jittered = backoff / 2 + random.random() * backoff / 2
        if retry_after is None:
            return jittered
        return None if retry_after > s.max_retry_delay else max(retry_after, jittered)

    def refused_stream_wait(self, operation_id: str, failures: int, options: CallOptions, response: httpx.Response) -> float:
        """The wait before asking again for a stream the service refused for now (429 when too many streams are open,
        502-504), honouring Retry-After, within ``max_retries`` in a row; otherwise raises the refusal."""
        if response.status_code in RETRY_STATUSES and failures < self.retries(options):
            delay = self.retry_delay(failures, parse_retry_after(response.headers.get("retry-after")))
            if delay is not None:
                return delay
        read(self.operations[operation_id], response)
        raise ApiError(f"unexpected status {response.status_code} for an event stream", status_code=response.status_code, request_id=response.headers.get("x-request-id"))

    def need_exchange(self) -> Optional[str]:
        """The token to use without an exchange, if there is one."""
        if self.settings.access_token is not None:
            return self.settings.access_token
        return self.tokens.current()

    def exchange_plan(self) -> _Plan:
        if not self.settings.api_key:
            raise AuthenticationError("no credentials: pass api_key (or set SERVICE_API_KEY), or an access_token")
        requested_at = time.monotonic()
        answer = yield from self.plan("createToken", ())
        return self.tokens.store(answer, requested_at)


def _json(response: httpx.Response) -> Any:
    if "json" not in response.headers.get("content-type", "").lower() or not response.content:
        return None
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def read(op: Operation, response: httpx.Response) -> Any:
    """The parsed answer of a finished exchange, or the exception for it."""
    status = response.status_code
    if status == 304:
        raise NotModified(response.headers.get("etag"))
    body = _json(response)
    if status >= 400 or status < 200:
        raise error_from_response(status, response.headers, body if isinstance(body, dict) else None)
    if op.response == "empty":
        return None
    if op.response == "text" or (op.text_answer is not None and op.text_answer in response.headers.get("content-type", "")):
        return response.text
    if op.response == "bytes":
        return response.content
    request_id = response.headers.get("x-request-id")
    if not isinstance(body, dict):
        raise ApiError("malformed response from the service: expected a JSON object", status_code=status, request_id=request_id)
    etag = response.headers.get("etag")
    if op.response == "page":
        items, pagination = body.get("items"), body.get("pagination")
        if not isinstance(items, list) or not isinstance(pagination, dict):
            raise ApiError("malformed response from the service: a list without items or pagination", status_code=status, request_id=request_id)
        cursor = pagination.get("next_cursor")
        return Page(items=items, has_more=pagination.get("has_more") is True, next_cursor=cursor if isinstance(cursor, str) else None, etag=etag)
    record = Record(body)
    record.etag = etag
    return record


def _no_token() -> TimeoutError:
    return TimeoutError("no access token within the call's timeout: the token exchange has not answered")


def _transport_error(err: Exception, request: _Request) -> AigovError:
    where = f"{request.method} {request.url.split('?')[0]}"
    if isinstance(err, httpx.TimeoutException):
        return TimeoutError(f"no complete answer from {where} within {request.timeout:.3g} s")
    return ConnectionError(f"{where} failed: {type(err).__name__}: {err}")


class SyncTransport:
    """Drives call plans with httpx.Client; concurrent token exchanges from threads are merged into one."""

    def __init__(self, engine: Engine, http: Optional[httpx.Client]) -> None:
        self.engine = engine
        self.http = http or httpx.Client()
        self._owns_http = http is None
        self._lock = threading.Lock()
        #: The exchange in flight, shared by every thread that needs a token meanwhile.
        self._exchange: Optional["concurrent.futures.Future[str]"] = None

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def call(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, body: Any = None, options: Optional[CallOptions] = None,
             files: Optional[Mapping[str, FileInput]] = None, data: Optional[Mapping[str, Any]] = None,
             upload: Optional[BundleInput] = None, sink: Optional[BundleOutput] = None) -> Any:
        return self._drive(self.engine.plan(operation_id, path_args, query, body, options, None, files, data, upload, sink))

    def iterate(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, body: Optional[Mapping[str, Any]] = None, options: Optional[CallOptions] = None) -> Iterator[Any]:
        """Every record of a list, page after page (the cursor goes in the body for POST lists)."""
        cursor: Optional[str] = None
        while True:
            after = {} if cursor is None else {"page_after": cursor}
            if body is not None:
                page = self.call(operation_id, path_args, body={**body, **after}, options=options)
            else:
                page = self.call(operation_id, path_args, query={**(query or {}), **after}, options=options)
            yield from page.items
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor

    def events(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, last_event_id: Optional[str] = None, options: Optional[CallOptions] = None) -> Iterator[Event]:
        """A server-sent event stream; a dropped connection resumes from the last event id (``max_retries`` in a row)."""
        opts = options or CallOptions()
        parser = _EventParser(last_event_id)
        failures = 0
        while True:
            request = self.engine.stream_request(operation_id, path_args, query, parser.last_event_id, opts, self.token())
            try:
                with self.http.stream(request.method, request.url, headers=request.headers, timeout=httpx.Timeout(request.timeout, read=None)) as response:
                    if response.status_code >= 300:
                        response.read()
                        wait = self.engine.refused_stream_wait(operation_id, failures, opts, response)
                    else:
                        failures = 0
                        for line in response.iter_lines():
                            event = parser.feed(line.rstrip("\r\n"))  # httpx 0.23 keeps line endings, later versions drop them
                            if event is not None:
                                yield event
                        return
            except (httpx.HTTPError, httpx.StreamError, OSError) as err:
                if failures >= self.engine.retries(opts):
                    raise _transport_error(err, request) from None
                wait = self.engine.retry_delay(failures, None) or 0.0
            failures += 1
            time.sleep(wait)

    def token(self, stale: Optional[str] = None, deadline: Optional[float] = None) -> str:
        """A valid token; waiting for an exchange ends at ``deadline``, while the exchange goes on for the others."""
        current = self.engine.need_exchange()
        if current is not None and (current != stale or self.engine.settings.access_token is not None):
            return current
        with self._lock:
            # Whoever held the lock before us may have exchanged already.
            current = self.engine.need_exchange()
            if current is not None and current != stale:
                return current
            exchange = self._exchange
            if exchange is None:
                # Its own thread, bounded by the client's timeout, so no caller's shorter deadline cuts it short.
                exchange = self._exchange = concurrent.futures.Future()
                threading.Thread(target=self._run_exchange, args=(exchange,), name="aigov-token-exchange", daemon=True).start()
        try:
            return exchange.result(timeout=None if deadline is None else max(deadline - time.monotonic(), 0.0))
        except concurrent.futures.TimeoutError:
            raise _no_token() from None

    def _run_exchange(self, exchange: "concurrent.futures.Future[str]") -> None:
        try:
            token: str = self._drive(self.engine.exchange_plan())
        except BaseException as err:  # handed to every waiting caller
            self._finish(exchange)
            exchange.set_exception(err)
        else:
            self._finish(exchange)
            exchange.set_result(token)

    def _finish(self, exchange: "concurrent.futures.Future[str]") -> None:
        with self._lock:
            if self._exchange is exchange:
                self._exchange = None

    def _drive(self, plan: _Plan) -> Any:
        value: Any = None
        error: Optional[BaseException] = None
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if isinstance(step, _NeedToken):
                value = self.token(step.stale, step.deadline)
            elif isinstance(step, _Sleep):
                time.sleep(step.seconds)
            else:
                value, error = self._send(step.request)

    def _send(self, request: _Request) -> Tuple[Optional[httpx.Response], Optional[AigovError]]:
        """The answer, or the transport failure to throw into the plan (which retries connection errors)."""
        content: Any = request.upload.chunks() if request.upload is not None else request.content
        try:
            if request.sink is None:
                response = self.http.request(request.method, request.url, headers=request.headers, content=content, timeout=request.timeout)
                return response, None
            with self.http.stream(request.method, request.url, headers=request.headers, content=content, timeout=request.timeout) as response:
                if not 200 <= response.status_code < 300:
                    response.read()
                    return response, None
                handle, owned = request.sink.open()
                written = 0
                try:
                    for chunk in response.iter_bytes():
                        handle.write(chunk)
                        written += len(chunk)
                finally:
                    if owned:
                        handle.close()
                request.sink.count = written
                return response, None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError) as err:
            return None, _transport_error(err, request)


class AsyncTransport:
    """Drives call plans with httpx.AsyncClient; concurrent token exchanges from tasks are merged into one."""

    def __init__(self, engine: Engine, http: Optional[httpx.AsyncClient]) -> None:
        self.engine = engine
        self.http = http or httpx.AsyncClient()
        self._owns_http = http is None
        #: The exchange in flight, shared by every task that needs a token meanwhile.
        self._exchange: Optional["asyncio.Future[str]"] = None

    async def close(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def call(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, body: Any = None, options: Optional[CallOptions] = None,
                   files: Optional[Mapping[str, FileInput]] = None, data: Optional[Mapping[str, Any]] = None,
                   upload: Optional[BundleInput] = None, sink: Optional[BundleOutput] = None) -> Any:
        return await self._drive(self.engine.plan(operation_id, path_args, query, body, options, None, files, data, upload, sink))

    async def iterate(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, body: Optional[Mapping[str, Any]] = None, options: Optional[CallOptions] = None) -> AsyncIterator[Any]:
        """Every record of a list, page after page (the cursor goes in the body for POST lists)."""
        cursor: Optional[str] = None
        while True:
            after = {} if cursor is None else {"page_after": cursor}
            if body is not None:
                page = await self.call(operation_id, path_args, body={**body, **after}, options=options)
            else:
                page = await self.call(operation_id, path_args, query={**(query or {}), **after}, options=options)
            for item in page.items:
                yield item
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def events(self, operation_id: str, path_args: Sequence[str] = (), *, query: Optional[Mapping[str, Any]] = None, last_event_id: Optional[str] = None, options: Optional[CallOptions] = None) -> AsyncIterator[Event]:
        """A server-sent event stream; a dropped connection resumes from the last event id (``max_retries`` in a row)."""
        opts = options or CallOptions()
        parser = _EventParser(last_event_id)
        failures = 0
        while True:
            request = self.engine.stream_request(operation_id, path_args, query, parser.last_event_id, opts, await self.token())
            try:
                async with self.http.stream(request.method, request.url, headers=request.headers, timeout=httpx.Timeout(request.timeout, read=None)) as response:
                    if response.status_code >= 300:
                        await response.aread()
                        wait = self.engine.refused_stream_wait(operation_id, failures, opts, response)
                    else:
                        failures = 0
                        async for line in response.aiter_lines():
                            event = parser.feed(line.rstrip("\r\n"))  # httpx 0.23 keeps line endings, later versions drop them
                            if event is not None:
                                yield event
                        return
            except (httpx.HTTPError, httpx.StreamError, OSError) as err:
                if failures >= self.engine.retries(opts):
                    raise _transport_error(err, request) from None
                wait = self.engine.retry_delay(failures, None) or 0.0
            failures += 1
            await asyncio.sleep(wait)

    async def token(self, stale: Optional[str] = None, deadline: Optional[float] = None) -> str:
        """A valid token; waiting for an exchange ends at ``deadline`` (or when the task is cancelled), while the
        exchange goes on, shielded, for the other tasks."""
        current = self.engine.need_exchange()
        if current is not None and (current != stale or self.engine.settings.access_token is not None):
            return current
        exchange = self._exchange
        if exchange is None or exchange.done():
            exchange = self._exchange = asyncio.ensure_future(self._drive(self.engine.exchange_plan()))
            exchange.add_done_callback(self._finish)
        try:
            return await asyncio.wait_for(asyncio.shield(exchange), None if deadline is None else max(deadline - time.monotonic(), 0.0))
        except asyncio.TimeoutError:
            raise _no_token() from None

    def _finish(self, exchange: "asyncio.Future[str]") -> None:
        if self._exchange is exchange:
            self._exchange = None
        # Retrieved here, so an exchange that failed after every caller stopped waiting logs no "never retrieved".
        if not exchange.cancelled():
            exchange.exception()

    async def _drive(self, plan: _Plan) -> Any:
        value: Any = None
        error: Optional[BaseException] = None
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if isinstance(step, _NeedToken):
                value = await self.token(step.stale, step.deadline)
            elif isinstance(step, _Sleep):
                await asyncio.sleep(step.seconds)
            else:
                value, error = await self._send(step.request)

    async def _send(self, request: _Request) -> Tuple[Optional[httpx.Response], Optional[AigovError]]:
        content: Any = request.upload.achunks() if request.upload is not None else request.content
        try:
            if request.sink is None:
                response = await self.http.request(request.method, request.url, headers=request.headers, content=content, timeout=request.timeout)
                return response, None
            async with self.http.stream(request.method, request.url, headers=request.headers, content=content, timeout=request.timeout) as response:
                if not 200 <= response.status_code < 300:
                    await response.aread()
                    return response, None
                handle, owned = request.sink.open()
                written = 0
                try:
                    async for chunk in response.aiter_bytes():
                        handle.write(chunk)
                        written += len(chunk)
                finally:
                    if owned:
                        handle.close()
                request.sink.count = written
                return response, None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError) as err:
            return None, _transport_error(err, request)
