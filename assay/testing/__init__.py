"""Offline test doubles: a real HTTP server speaking the OpenAI chat-completions protocol.

Used by the test suite and the benchmark, and by users who want to dry-run a spec without
a provider key: point ``api_base`` at ``FakeOpenAIServer().base_url``.
"""

from assay.testing._behaviors import (
    DEFAULT_CONTENT,
    Behavior,
    Responder,
    delay,
    http_error,
    malformed_body,
    refusal,
    reply,
    tokens,
    tool_call,
    truncated,
)
from assay.testing._process import FakeServerClient
from assay.testing._ratewindow import RateWindows
from assay.testing._server import FakeOpenAIServer
from assay.testing._stats import ServerStats

__all__ = [
    "DEFAULT_CONTENT",
    "Behavior",
    "FakeOpenAIServer",
    "FakeServerClient",
    "RateWindows",
    "Responder",
    "ServerStats",
    "delay",
    "http_error",
    "malformed_body",
    "refusal",
    "reply",
    "tokens",
    "tool_call",
    "truncated",
]
