#!/usr/bin/env bash
# One command from a fresh clone to a gateway answering for real with a local model:
# installs, builds, installs the local runtime, fetches the model, checks Redis, starts the
# gateway with config/switchyard.yaml, makes sure team "demo" has a token, and prints how to call it.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { printf '\033[1mquickstart:\033[0m %s\n' "$*"; }

# Redis first: no point installing anything if the gateway could not start. Node's own net module, so this
# works before npm ci (a PING answered with PONG, or NOAUTH from a Redis that wants a password, means it is up).
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
if ! node -e "
  const url = new URL(process.env.REDIS_URL);
  const socket = require('net').connect(Number(url.port || 6379), url.hostname.replace(/^\[|\]$/g, ''));
  socket.setTimeout(2000, () => process.exit(1));
  socket.on('error', () => process.exit(1));
  socket.on('connect', () => socket.write('PING\r\n'));
  socket.on('data', (d) => process.exit(/^(\+PONG|-NOAUTH)/.test(String(d)) ? 0 : 1));
" 2>/dev/null; then
  say "no Redis answers at $REDIS_URL. Start one: 'redis-server --daemonize yes' (or 'docker run -d -p 6379:6379 redis:7'), or set REDIS_URL."
  exit 1
fi

# Installs are skipped when what they would install is already there (the lock file's hash, the build's sources).
mkdir -p .cache
lock_hash=$(node -e "process.stdout.write(require('crypto').createHash('sha256').update(require('fs').readFileSync('package-lock.json')).digest('hex'))")
if [ "$(cat .cache/quickstart-npm-ci 2>/dev/null)" != "$lock_hash" ] || [ ! -d node_modules ]; then
  say "installing dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  printf '%s' "$lock_hash" > .cache/quickstart-npm-ci
else
  say "dependencies up to date"
fi
if [ ! -f dist/main.js ] || [ ! -f dist/console-web/index.html ] || [ -n "$(find src tsconfig.json tsconfig.build.json package-lock.json -newer dist/main.js -print -quit)" ]; then
  say "building"
  npm run build --silent
else
  say "build up to date"
fi
npm run local:install --silent
say "the default local model (SmolLM2-135M-Instruct: a 93 MB download the first time, checksum-verified)"
python3 scripts/fetch-model.py >/dev/null
say "the default embedding model (all-MiniLM-L6-v2: an 83 MB download the first time, converted to GGUF, checksum-verified)"
python3 scripts/fetch-model.py --model minilm-l6-embed >/dev/null

if [ -z "${SWITCHYARD_ADMIN_KEY:-}" ]; then
  mkdir -p .cache && umask 077
  [ -s .cache/quickstart-admin-key ] || node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))" > .cache/quickstart-admin-key
  SWITCHYARD_ADMIN_KEY=$(cat .cache/quickstart-admin-key)
fi
export SWITCHYARD_ADMIN_KEY
PORT="${PORT:-8080}"
export PORT
node --max-semi-space-size=16 dist/main.js &
gateway=$!
trap 'kill -TERM $gateway 2>/dev/null; wait $gateway' INT TERM
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1 && break
  kill -0 $gateway 2>/dev/null || { say "the gateway did not start"; exit 1; }
  sleep 0.1
done

# A token for team "demo": reuse the one quickstart made before if it still works, else issue one.
token=""
[ -s .cache/quickstart-token ] && token=$(cat .cache/quickstart-token)
if [ -z "$token" ] || [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/models" -H "Authorization: Bearer $token")" != 200 ]; then
  token=$(curl -sf -X POST "http://127.0.0.1:$PORT/admin/v1/teams/demo/tokens" -H "Authorization: Bearer $SWITCHYARD_ADMIN_KEY" \
    -H 'Content-Type: application/json' -d '{"name":"quickstart"}' | node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8')).token")
  (umask 077 && printf '%s' "$token" > .cache/quickstart-token)
fi

cat <<INFO

Switchyard is running on http://127.0.0.1:$PORT (ready in $(( $(date +%s) - started )) s). Admin key: .cache/quickstart-admin-key
Team "demo" token (also in .cache/quickstart-token): $token

  curl -N http://127.0.0.1:$PORT/v1/chat/completions -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \\
    -d '{"model":"smollm2","stream":true,"messages":[{"role":"user","content":"What is the capital of France?"}]}'

  // npm i openai
  import OpenAI from 'openai';
  const client = new OpenAI({ apiKey: '$token', baseURL: 'http://127.0.0.1:$PORT/v1' });
  const reply = await client.chat.completions.create({ model: 'smollm2', messages: [{ role: 'user', content: 'Hi!' }] });
  console.log(reply.choices[0].message.content, reply.usage);

  Embeddings (model minilm, 384 dimensions):
  curl http://127.0.0.1:$PORT/v1/embeddings -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \\
    -d '{"model":"minilm","input":["red fox","blue whale"]}'

  Claude Code (Anthropic's Messages API; start the gateway with ANTHROPIC_API_KEY set for its anthropic backend):
  ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=$token claude --model claude-sonnet-5-5

  Admin console: http://127.0.0.1:$PORT/console (sign in with the admin key in .cache/quickstart-admin-key)

Usage: curl http://127.0.0.1:$PORT/v1/usage -H "Authorization: Bearer $token"    Stop: Ctrl-C
INFO
wait $gateway
