#!/bin/sh
# The image's entrypoint: the admin key is SWITCHYARD_ADMIN_KEY when set, else one generated once into the state
# volume (as the quickstart does into .cache/), so `docker compose up` needs no setup. It is never printed: read it
# with `docker compose exec gateway cat /var/lib/switchyard/admin-key`.
set -eu
if [ -z "${SWITCHYARD_ADMIN_KEY:-}" ]; then
  key_file=/var/lib/switchyard/admin-key
  if [ ! -s "$key_file" ]; then
    (umask 077 && node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))" >"$key_file")
    echo "switchyard: generated an admin key into $key_file (docker compose exec gateway cat $key_file)" >&2
  fi
  SWITCHYARD_ADMIN_KEY=$(cat "$key_file")
  export SWITCHYARD_ADMIN_KEY
fi
exec "$@"
