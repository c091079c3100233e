"""Checks schemathesis runs on every response from the gateway (loaded through SCHEMATHESIS_HOOKS)."""
import schemathesis


@schemathesis.check
def openai_error_shape(ctx, response, case):
    """Every 4xx and 5xx carries OpenAI's error body: {"error": {message, type, param, code}}."""
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except Exception as error:  # noqa: BLE001 - any parse failure is the finding
        raise AssertionError(f"{response.status_code} without a JSON body: {response.text[:200]!r}") from error
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"{response.status_code} body is not an OpenAI error: {body!r}"[:300]
    assert set(error) == {"message", "type", "param", "code"}, f"error fields: {sorted(error)}"
    assert isinstance(error["message"], str) and error["message"], "error.message must be a non-empty string"
    assert isinstance(error["type"], str), "error.type must be a string"
    return None
