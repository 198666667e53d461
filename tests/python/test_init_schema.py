"""`capa init` writes a starter capabilities file that validates against the file's published
JSON Schema (docs/capabilities.schema.json), checked with the `jsonschema` validator, and that
says `toolExposure: search` as tool-exposure.md requires."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import yaml

from conftest import CAPA_BIN, REPO_ROOT


def test_the_starter_file_validates_against_the_json_schema(tmp_path: Path) -> None:
    env = dict(os.environ, CAPA_CONFIG_DIR=str(tmp_path / "config"), CAPA_DATA_DIR=str(tmp_path / "data"))
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run([str(CAPA_BIN), "init", "--dir", str(project)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((project / "capabilities.yaml").read_text())
    assert written["options"]["toolExposure"] == "search"
    schema = json.loads((REPO_ROOT / "docs" / "capabilities.schema.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [e.message for e in validator.iter_errors(written)]
    assert errors == []
    # The schema is not vacuous: a wrong mode is an error.
    written["options"]["toolExposure"] = "everything"
    assert list(validator.iter_errors(written)), "the schema accepted an unknown toolExposure"
