"""One home for keeping credentials out of files and terminals.

Every writer (manifest, records, cache keys, reports, error lines) goes through these
functions, so a rule added here holds everywhere. Standard library only: importable from
any module of assay without an import cycle.

Rules:
- URLs lose userinfo (``user:pass@``), query string and fragment; scheme, host, port and
  path stay.
- A mapping entry whose key names a credential (``Authorization``, ``api-key``, ``token``,
  ``client_secret``, ... matched case-insensitively with ``-``/space/``.`` read as ``_``)
  is replaced by :data:`MARKER`, at any depth. ``*_env`` keys name a variable, not a value,
  and are kept.
- Headers are credentials by value: in a mapping under a headers key (``extra_headers``,
  ``headers``, ``default_headers``, ...) every value is replaced by :data:`MARKER` unless
  its name is on the short allow-list :data:`SAFE_HEADERS` (names go by patterns; a
  gateway's ``X-Custom-Auth`` does not).
- Free text (error messages, warnings) loses the values of secrets registered by the
  clients that use them (API keys read from the environment, credentials found in
  ``api_base`` or ``extra_body``, header values), URL credentials, ``Bearer ...`` tokens,
  ``api_key=...``-style pairs and ``sk-...`` keys.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

MARKER = "<redacted>"
#: shorter registered values are not scrubbed from free text (too many false hits)
MIN_SECRET_LENGTH = 8

_SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "api_key",
        "apikey",
        "x_api_key",
        "api_token",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "x_auth_token",
        "session_token",
        "bearer",
        "bearer_token",
        "secret",
        "secret_key",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "cookie",
        "set_cookie",
        "private_key",
        "subscription_key",
    }
)
_SECRET_SUFFIXES = (
    "_api_key",
    "_apikey",
    "_secret",
    "_secret_key",
    "_password",
    "_passwd",
    "_access_token",
    "_auth_token",
    "_refresh_token",
    "_session_token",
    "_credential",
    "_credentials",
    "_private_key",
    "_subscription_key",
)
_SEPARATORS = re.compile(r"[-\s.]+")

#: mapping keys whose entries are HTTP headers (litellm, the OpenAI SDK, httpx)
HEADER_CONTAINERS = frozenset(
    {"extra_headers", "headers", "default_headers", "http_headers", "custom_headers"}
)
#: headers whose values are kept: they describe the request, never who sends it
#: (``OpenAI-Organization`` is not here: its name is kept, its value names the account)
SAFE_HEADERS = frozenset(
    {
        "user_agent",
        "accept",
        "accept_encoding",
        "accept_language",
        "content_type",
        "cache_control",
        "openai_beta",
        "anthropic_version",
        "anthropic_beta",
    }
)
#: header names that say credential: left out of cache keys (a new token keeps the cache)
_CREDENTIAL_HEADER = re.compile(
    r"auth|token|key|secret|passw|cookie|session|signature|credential|sig$"
)

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}")
_NAMED_VALUE = re.compile(
    r"(?i)\b(api[-_]?key|access[-_]?token|auth[-_]?token|client[-_]?secret|password|passwd)"
    r"([\"']?\s*[=:]\s*[\"']?)([^\s&\"',;<>]{4,})"
)
_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")
_QUERY = re.compile(r"\?[^\s\"'<>#?]*=[^\s\"'<>#]*")  # a query string, with or without a URL
_QUERY_VALUE = re.compile(r"([?&][^=&\s]+=)[^&\s]+")

_known: set[str] = set()
_known_sorted: tuple[str, ...] = ()
_lock = threading.Lock()


def _norm(name: object) -> str:
    return _SEPARATORS.sub("_", str(name).strip().lower())


def is_secret_key(name: object) -> bool:
    """Whether a mapping key names a credential (case and separators ignored)."""
    key = _norm(name)
    return key in _SECRET_KEYS or key.endswith(_SECRET_SUFFIXES)


def is_header_container(name: object) -> bool:
    """Whether a mapping key holds HTTP headers (whose values are secret by default)."""
    return _norm(name) in HEADER_CONTAINERS


def is_safe_header(name: object) -> bool:
    """Whether a header is on the allow-list whose values are recorded as they are."""
    return _norm(name) in SAFE_HEADERS


def _hidden(name: object, value: object) -> bool:
    """Whether a header's value is replaced: not allow-listed, and not empty."""
    return not is_safe_header(name) and value not in (None, "") and not isinstance(value, bool)


@lru_cache(maxsize=256)
def redact_url(url: str | None) -> str | None:
    """Scheme, host, port and path of a URL: userinfo, query and fragment are dropped
    (keys sometimes hide there). A trailing slash is dropped too."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def url_secrets(url: str | None) -> list[str]:
    """The credential parts of a URL: user, password and every query value."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password]
    except ValueError:
        return []
    found += [v for _, v in parse_qsl(parts.query, keep_blank_values=False)]
    return [unquote(v) for v in found if v]


def secret_values(value: Any) -> list[str]:
    """Every credential inside a value: strings under credential-naming keys (and the token
    of a ``Bearer <token>`` string), and the credential parts of URLs, at any depth."""
    out: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            if is_header_container(k) and isinstance(v, Mapping):
                hidden = [str(hv) for hk, hv in v.items() if _hidden(hk, hv)]
                out += hidden + [t for h in hidden for t in h.split()[1:]]
                out += secret_values({hk: hv for hk, hv in v.items() if not _hidden(hk, hv)})
            elif is_secret_key(k) and isinstance(v, str):
                out.append(v)
                out += v.split()[1:]  # "Bearer abc" -> also "abc"
            else:
                out += secret_values(v)
    elif isinstance(value, list | tuple):
        for v in value:
            out += secret_values(v)
    elif isinstance(value, str) and "://" in value:
        for match in _URL.finditer(value):
            out += url_secrets(match.group(0))
    return out


def register_secrets(values: Iterable[str | None]) -> None:
    """Remember secret values (an API key, a password) so that `scrub_text` removes them
    from any text, e.g. a provider's error message that echoes the key."""
    global _known_sorted
    fresh = {v for v in values if v and len(v) >= MIN_SECRET_LENGTH and v not in _known}
    if not fresh:
        return
    with _lock:
        _known.update(fresh)
        _known_sorted = tuple(sorted(_known, key=len, reverse=True))


def _scrub_url(match: re.Match[str]) -> str:
    url = match.group(0)
    try:
        parts = urlsplit(url)
        has_credentials = bool(parts.username or parts.password or parts.query)
    except ValueError:
        return MARKER
    if not has_credentials:
        return url
    return redact_url(url) or ""


def scrub_text(text: str) -> str:
    """Free text with every known secret, URL credential and key-looking token removed."""
    if "://" in text:  # first: a URL whose userinfo holds a known secret still parses
        text = _URL.sub(_scrub_url, text)
    if "?" in text:  # e.g. an api_base without a scheme, quoted in an error message
        text = _QUERY.sub(lambda m: _QUERY_VALUE.sub(rf"\1{MARKER}", m.group(0)), text)
    for secret in _known_sorted:
        if secret in text:
            text = text.replace(secret, MARKER)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{MARKER}", text)
    text = _NAMED_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{MARKER}", text)
    return _KEY_SHAPE.sub(MARKER, text)


def credential_shapes(text: str) -> list[str]:
    """What each credential-looking part of `text` looks like, never the value itself:
    the same rules `scrub_text` applies, asked as a question (`assay pack` refuses a run
    directory whose files answer it). A URL's query counts only where the name says
    credential (``?page=2`` is not one)."""
    found: list[str] = []
    if "://" in text:
        for match in _URL.finditer(text):
            found += _url_shapes(match.group(0))
    if _known_sorted and any(secret in text for secret in _known_sorted):
        found.append("registered secret value")
    found += [f"{m.group(1).capitalize()} token" for m in _AUTH_SCHEME.finditer(text)]
    found += [f"{m.group(1)}=... pair" for m in _NAMED_VALUE.finditer(text)]
    found += ["sk-... API key" for _ in _KEY_SHAPE.finditer(text)]
    return found


def _url_shapes(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    found = ["URL with user:password" if password else "URL with a user name"] if user else []
    names = [k for k, v in parse_qsl(parts.query, keep_blank_values=False) if is_secret_key(k)]
    return found + [f"URL query {name}=..." for name in names]


#: what replaces a hidden header value: (name, value) -> replacement
HeaderRule = Callable[[object, object], object]


def _marker(_name: object, _value: object) -> object:
    return MARKER


def redact_with_paths(
    value: Any, path: str = "", *, header: HeaderRule = _marker
) -> tuple[Any, list[str]]:
    """A redacted deep copy of `value` and the dotted paths of the fields that changed
    (e.g. ``spec.judges[0].api_base``). Mappings become dicts, tuples become lists.
    `header` says what a hidden header value becomes (the marker, or for cache keys a
    digest)."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        paths: list[str] = []
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            if is_header_container(k) and isinstance(v, Mapping):
                out[k], sub = _redact_headers(v, where, header)
                paths += sub
            elif is_secret_key(k) and v not in (None, "") and not isinstance(v, bool):
                out[k] = MARKER
                paths.append(where)
            else:
                out[k], sub = redact_with_paths(v, where, header=header)
                paths += sub
        return out, paths
    if isinstance(value, list | tuple):
        items: list[Any] = []
        paths = []
        for i, v in enumerate(value):
            item, sub = redact_with_paths(v, f"{path}[{i}]", header=header)
            items.append(item)
            paths += sub
        return items, paths
    if isinstance(value, str):
        clean = scrub_text(value)
        return clean, ([path] if clean != value else [])
    return value, []


def _redact_headers(
    headers: Mapping[Any, Any], path: str, header: HeaderRule
) -> tuple[dict[Any, Any], list[str]]:
    """A headers mapping: every value not allow-listed is replaced by `header`'s."""
    out: dict[Any, Any] = {}
    paths: list[str] = []
    for k, v in headers.items():
        where = f"{path}.{k}"
        if _hidden(k, v):
            out[k] = header(k, v)
            paths.append(where)
        else:
            out[k], sub = redact_with_paths(v, where, header=header)
            paths += sub
    return out, paths


def redact_headers(headers: Mapping[Any, Any]) -> dict[Any, Any]:
    """HTTP headers as they may be shown: every value not allow-listed is the marker."""
    return _redact_headers(headers, "", _marker)[0]


def redact(value: Any) -> Any:
    """A redacted deep copy of `value` (see `redact_with_paths`)."""
    return redact_with_paths(value)[0]


def _cache_header(name: object, value: object) -> object:
    """A credential-named header drops out of the cache key (a rotated token keeps the
    cache, as ``Authorization`` always did); any other header (a tenant, a deployment)
    can change the answer, so it enters by a SHA-256 of its value, never the value."""
    if is_secret_key(name) or _CREDENTIAL_HEADER.search(_norm(name)):
        return MARKER
    digest = hashlib.sha256(str(value).encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest}"


def redact_for_cache_key(value: Any) -> Any:
    """`redact` for a cache key: hidden header values become `_cache_header`'s."""
    return redact_with_paths(value, header=_cache_header)[0]
