"""Checks schemathesis runs on every response from the gateway (loaded through SCHEMATHESIS_HOOKS)."""
import schemathesis


@schemathesis.check
def api_error_shape(ctx, response, case):
    """Every 4xx and 5xx carries its API's error body: OpenAI's {"error": {message, type, param, code}}, or on
    Anthropic's Messages routes Anthropic's {"type": "error", "error": {type, message}}."""
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
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"{response.status_code} body is not an OpenAI error: {body!r}"[:300]
    assert set(error) == {"message", "type", "param", "code"}, f"error fields: {sorted(error)}"
    assert isinstance(error["message"], str) and error["message"], "error.message must be a non-empty string"
    assert isinstance(error["type"], str), "error.type must be a string"
    return None
