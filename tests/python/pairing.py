"""Pairing a client in the tests, as a person at a terminal would (docs/security.md, "Who may say
yes"): only a paired client's own approval forms count."""

from __future__ import annotations

import json
from typing import Any, Callable


def pair_client(capa: Callable[..., Any], workspace: Any, name: str = "pytest client") -> dict[str, Any]:
    """`capa clients pair NAME --json` at a terminal (`capa` is conftest's runner): its id, name
    and key."""
    done = capa(workspace, "clients", "pair", name, "--json", terminal=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # Under `script` stderr shares the terminal with stdout: take the JSON object alone.
    paired = json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])
    assert paired["key"].startswith("capa_client_"), paired
    return paired
