"""Checks schemathesis runs on every response from the gateway (loaded through SCHEMATHESIS_HOOKS)."""
import schemathesis


@schemathesis.check
def api_error_shape(ctx, response, case):
    """Every 4xx and 5xx carries its API's error body: OpenAI's {"error": {message, type, param, code}}, on
    Anthropic's Messages routes Anthropic's {"type": "error", "error": {type, message}}, on /mcp JSON-RPC's."""
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except Exception as error:  # noqa: BLE001 - any parse failure is the finding
        raise AssertionError(f"{response.status_code} without a JSON body: {response.text[:200]!r}") from error
    if case.path.startswith("/v1/messages"):
        assert isinstance(body, dict) and body.get("type") == "error", f"{response.status_code} body is not an Anthropic error: {body!r}"[:300]
        error = body.get("error")
        assert isinstance(error, dict) and isinstance(error.get("type"), str), "error.type must be a string"
        assert isinstance(error.get("message"), str) and error["message"], "error.message must be a non-empty string"
        return None
    if case.path == "/mcp" or case.path.startswith("/mcp/"):
        # MCP (docs/mcp.md) is JSON-RPC 2.0: its errors are JSON-RPC's, with no id when the request had none usable.
        assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", f"{response.status_code} body is not JSON-RPC: {body!r}"[:300]
        error = body.get("error")
        assert isinstance(error, dict) and isinstance(error.get("code"), int), "error.code must be an integer"
        assert isinstance(error.get("message"), str) and error["message"], "error.message must be a non-empty string"
        return None
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"{response.status_code} body is not an OpenAI error: {body!r}"[:300]
    assert set(error) == {"message", "type", "param", "code"}, f"error fields: {sorted(error)}"
    assert isinstance(error["message"], str) and error["message"], "error.message must be a non-empty string"
    assert isinstance(error["type"], str), "error.type must be a string"
    return None


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    """Console sign-ins carry generated (wrong) admin keys: each comes from its own address (the test gateway trusts
    X-Forwarded-For from 127.0.0.1), so the wrong-key throttle, which refuses every key from an address after five
    wrong ones, does not turn the rest of the run's admin calls into 429s and leave their routes unfuzzed."""
    if case.path.startswith("/console/"):
        before_call.counter = getattr(before_call, "counter", 0) + 1
        n = before_call.counter
        case.headers = {**(case.headers or {}), "X-Forwarded-For": f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"}
