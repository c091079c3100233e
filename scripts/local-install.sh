#!/usr/bin/env bash
# Installs the optional local-model runtime (node-llama-cpp and this platform's prebuilt llama.cpp
# binary, ~85 MB) into runtimes/local, apart from the gateway's own dependencies. No install
# scripts run and nothing is compiled: node-llama-cpp's binaries come inside its npm packages.
set -euo pipefail
cd "$(dirname "$0")/../runtimes/local"
version=$(node -p "require('./package.json').dependencies['node-llama-cpp']")
binary="@node-llama-cpp/$(node -p 'process.platform + "-" + process.arch')@${version}"
if [ -d node_modules/node-llama-cpp ] && [ -d "node_modules/${binary%@*}" ]; then
  exit 0
fi
npm install --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error
npm install --no-save --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error "$binary"
echo "local runtime installed: node-llama-cpp ${version} + ${binary} ($(du -sh node_modules | cut -f1))"
