#!/bin/bash
# Creates .venv-families, the environment of the transformer and audio exports
# (export_transformers.py), from requirements/families.txt: a venv on Debian's python3 WITHOUT
# Debian's site packages (their torchvision 0.14 would break transformers on torch 2; the file says
# why), the pins installed one at a time with --no-deps. A later run installs nothing unless the pin
# list changed; a changed list gets a fresh environment, so nothing unlisted stays behind.
# scripts/setup.sh runs this, so preparing the test models downloads nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
VENV="$ROOT/.venv-families"
REQ="$ROOT/requirements/families.txt"
hash=$(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$REQ" | sha256sum | cut -d' ' -f1)
stamp="$VENV/.installed-families"
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && exit 0
t0=$(date +%s)
rm -rf "$VENV"
/usr/bin/python3 -m venv "$VENV"
while read -r spec; do
  if ! "$VENV/bin/pip" install --quiet --no-deps --disable-pip-version-check "$spec"; then
    echo "setup_venv.sh: pip could not install $spec (requirements/families.txt); check that PyPI is reachable" \
      "and the version is still published" >&2
    exit 1
  fi
done < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$REQ")
echo "$hash" > "$stamp"
echo "setup_venv.sh: set up .venv-families in $(( $(date +%s) - t0 )) s"
