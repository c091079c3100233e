#!/usr/bin/env bash
# Installs the peers the benchmark compares against, under bench/peers/ (git-ignored); with arguments, only those
# (portkey, litellm, tensorzero, vllm-router):
#   Portkey's open-source gateway (npm; @hono/node-server pinned to 1.13.5 by an override, newer versions
#   break its streaming), LiteLLM's proxy (PyPI litellm[proxy], in a virtualenv), and the two compiled
#   references, pinned, in a second virtualenv: TensorZero's Rust gateway (its PyPI wheel bundles it) and
#   vllm-router (Rust).
set -euo pipefail
cd "$(dirname "$0")/peers"
wanted=" ${*:-portkey litellm tensorzero vllm-router} "
installed=()
if [[ $wanted == *" portkey "* ]]; then
  [ -d node_modules/@portkey-ai/gateway ] || npm install --ignore-scripts --no-audit --no-fund --loglevel=error
  installed+=("portkey $(node -p "require('./node_modules/@portkey-ai/gateway/package.json').version")")
fi
if [[ $wanted == *" litellm "* ]]; then
  if [ ! -x litellm-venv/bin/litellm ]; then
    python3 -m venv litellm-venv
    litellm-venv/bin/pip install --quiet --disable-pip-version-check 'litellm[proxy]'
  fi
  installed+=("litellm $(litellm-venv/bin/pip show litellm | sed -n 's/^Version: //p')")
fi
if [[ $wanted == *" tensorzero "* || $wanted == *" vllm-router "* ]]; then
  if [ ! -x rust-venv/bin/vllm-router ] || ! rust-venv/bin/python -c 'import tensorzero' 2>/dev/null; then
    python3 -m venv rust-venv
    rust-venv/bin/pip install --quiet --disable-pip-version-check 'tensorzero==2026.6.0' 'vllm-router==0.1.17'
  fi
  installed+=("tensorzero $(rust-venv/bin/pip show tensorzero | sed -n 's/^Version: //p')" "vllm-router $(rust-venv/bin/pip show vllm-router | sed -n 's/^Version: //p')")
fi
echo "peers installed: $(IFS=,; echo "${installed[*]}")"
