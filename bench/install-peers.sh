#!/usr/bin/env bash
# Installs the peers the benchmark compares against, under bench/peers/ (git-ignored):
#   Portkey's open-source gateway (npm; @hono/node-server pinned to 1.13.5 by an override, newer versions
#   break its streaming) and LiteLLM's proxy (PyPI litellm[proxy], in a virtualenv).
set -euo pipefail
cd "$(dirname "$0")/peers"
if [ ! -d node_modules/@portkey-ai/gateway ]; then
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error
fi
if [ ! -x litellm-venv/bin/litellm ]; then
  python3 -m venv litellm-venv
  litellm-venv/bin/pip install --quiet --disable-pip-version-check 'litellm[proxy]'
fi
echo "peers installed: portkey $(node -p "require('./node_modules/@portkey-ai/gateway/package.json').version"), litellm $(litellm-venv/bin/pip show litellm | sed -n 's/^Version: //p')"
