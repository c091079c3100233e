"""Serves TensorZero's Rust gateway (bundled in its PyPI wheel) on a loopback port with no database, for
bench/gateway.mjs: prints {"url": ".../openai/v1"} once it listens, then serves until it is stopped."""
import json
import sys
import time

import tensorzero

gateway = tensorzero._start_http_gateway(config_file=sys.argv[1], clickhouse_url=None, postgres_url=None, valkey_url=None, async_setup=False)
print(json.dumps({"url": gateway.base_url}), flush=True)
while True:
    time.sleep(3600)
