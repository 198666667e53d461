#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, the real Secret
# Service store the hub uses on Linux. Usage: tests/support/with-keyring.sh COMMAND [ARGS...]
# When called outside such a session it re-executes itself under dbus-run-session.
set -euo pipefail
if [ -z "${CAPA_KEYRING_SESSION:-}" ]; then
  export CAPA_KEYRING_SESSION=1
  # gnome-keyring keeps its files under $HOME: use a throwaway one so tests never touch a real keyring.
  export CAPA_TEST_KEYRING_HOME="${CAPA_TEST_KEYRING_HOME:-$(mktemp -d)}"
  export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
  exec env HOME="$CAPA_TEST_KEYRING_HOME" XDG_DATA_HOME="$CAPA_TEST_KEYRING_HOME/.local/share" \
    dbus-run-session -- "$0" "$@"
fi
# A password on stdin creates and unlocks the login keyring without a prompt (an empty one prompts).
eval "$(printf 'capa-test\n' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" || true
eval "$(gnome-keyring-daemon --start --components=secrets 2>/dev/null)" || true
"$@"
