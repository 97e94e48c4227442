"""The pre-flight check of one OpenAI-compatible endpoint (``GET {url}/models``).

Decision on a 404 for ``/models``: vLLM, SGLang, llama.cpp server, LMDeploy and Ollama all
serve ``/v1/models``, so a 404 usually means the URL lacks ``/v1``. Some proxies serve
chat completions only, though, so a 404 is followed by a one-token chat probe; the
endpoint is usable if the probe answers 200 (any body). Otherwise the error suggests the
``/v1`` URL. A model list that does not name the model is only logged (gateways alias
names).
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

from heritage_eval.models.endpoints import EndpointError, endpoint_url
from heritage_eval.models.openai_http import Client, TransportError
from heritage_eval.models.openai_parse import snippet

log = logging.getLogger(__name__)


async def run_preflight(client: Client, url: str, model: str, headers: dict[str, str],
                        timeout_s: float, key_env: str) -> EndpointError | None:
    """``None`` when ``url`` looks like a working endpoint, else the
    :class:`~heritage_eval.models.endpoints.EndpointError` saying why (never raised).
    Each request is limited to ``timeout_s`` seconds."""
    get_headers = {k: v for k, v in headers.items() if k != "Content-Type"}
    try:
        r = await client.request("GET", endpoint_url(url, "/models"), None, get_headers, timeout_s)
    except TransportError as exc:
        if exc.kind == "timeout":
            return EndpointError(f"endpoint {url} did not answer GET /models within "
                                 f"{timeout_s:g} s; check --base-url and that the server is "
                                 "running", "timeout")
        return EndpointError(f"endpoint {url} unreachable ({exc}); check --base-url and that "
                             "the server is running", "unreachable")
    if r.status == 200:
        _note_models(url, model, r.body)
        return None
    if r.status in (401, 403):
        return EndpointError(f"endpoint {url} refused the API key (HTTP {r.status} on GET "
                             f"/models): {snippet(r.body)}; check ${key_env}", "auth")
    if r.status == 404:
        if await _chat_probe(client, url, model, headers, timeout_s):
            return None
        path = urlsplit(url).path.rstrip("/")
        hint = (f"; the URL probably lacks '/v1': try --base-url {url}/v1"
                if not path.endswith("/v1") else "; is this an OpenAI-compatible endpoint root?")
        return EndpointError(f"endpoint {url} answered HTTP 404 to GET /models and to a chat "
                             f"request{hint}", "not_found")
    kind = "server_error" if r.status >= 500 else "config"
    return EndpointError(f"endpoint {url} answered HTTP {r.status} to GET /models: "
                         f"{snippet(r.body)}", kind)


async def _chat_probe(client: Client, url: str, model: str, headers: dict[str, str],
                      timeout_s: float) -> bool:
    body = json.dumps({"model": model, "max_tokens": 1,
                       "messages": [{"role": "user", "content": "ping"}]}).encode()
    try:
        r = await client.request("POST", endpoint_url(url, "/chat/completions"), body,
                                 headers, timeout_s)
    except TransportError:
        return False
    return r.status == 200


def _note_models(url: str, model: str, body: bytes) -> None:
    try:
        data = json.loads(body)
        ids = [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError, TypeError):
        log.warning("endpoint %s: GET /models did not return a model list: %s", url,
                    snippet(body, 120))
        return
    if ids and model not in ids:
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        log.warning("endpoint %s does not list model %r (it lists: %s)", url, model, shown)
