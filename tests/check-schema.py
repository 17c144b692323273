#!/usr/bin/python3
"""Validates system files against Airy's JSON Schema (test-files /files/json/schema).

Usage: check-schema.py SCHEMA FILE...  Prints "NAME: valid" or "NAME: invalid"
per file (errors on stderr); exits 1 when the schema itself is not valid
draft 2020-12.
"""
import json
import os
import sys

import jsonschema


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"schema: {e.message}", file=sys.stderr)
        return 1
    validator = jsonschema.Draft202012Validator(schema)
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        name = os.path.basename(path)
        print(f"{name}: {'invalid' if errors else 'valid'}")
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            print(f"{name}: {where}: {e.message[:300]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
