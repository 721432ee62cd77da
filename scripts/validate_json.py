#!/usr/bin/env python3
"""Validates npgx JSON documents against the committed schemas, with an independent validator.

The integration tests keep every npgx JSON document they see (stdout, and `.json` files written
with -o/--output/--out) in target/json-corpus/ (tests/it/common.rs, `keep_documents`);
scripts/test.sh empties that folder before the tests and runs this script after them. Each
document is checked with the `jsonschema` package (JSON Schema draft 2020-12) against
schemas/<its "schema">.schema.json, which a test keeps equal to what `npgx schema NAME` prints.

Fails (exit 1) when a document does not validate, names a schema there is no file for, is not
a JSON object with a `schema`, or when there is no document at all (a check that validated
nothing proves nothing). Prints the count per schema, and the schemas no document exercised.

Usage: validate_json.py [--schemas DIR] [--corpus DIR] [FILE...]
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

REPO = Path(__file__).resolve().parent.parent


def load_schemas(folder):
    """{schema name: validator} for every `<name>.schema.json` in `folder`."""
    validators = {}
    for path in sorted(folder.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        name = path.name[: -len(".schema.json")]
        declared = schema.get("properties", {}).get("schema", {}).get("const")
        if declared != name:
            raise SystemExit(f"{path}: its schema const is {declared!r}, not {name!r}")
        validators[name] = Draft202012Validator(schema)
    return validators


def problems(path, validators, counts):
    """The problems of the document at `path` (an empty list when it is valid)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [f"not readable as JSON: {e}"]
    name = doc.get("schema") if isinstance(doc, dict) else None
    if not isinstance(name, str):
        return ["not an npgx document (no string `schema` field)"]
    validator = validators.get(name)
    if validator is None:
        return [f"no schema for {name!r} in schemas/ (known: {', '.join(sorted(validators))})"]
    counts[name] += 1
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [describe(name, e) for e in errors]


def describe(name, error):
    """One line per error: where, and why. For a document that fits none of its bodies (`anyOf`,
    npgx.dump-config and npgx.plog), the reason of the body it came closest to."""
    if error.context:
        error = best_match(error.context)
    where = "/".join(str(p) for p in error.absolute_path)
    message = error.message if len(error.message) <= 300 else error.message[:300] + "…"
    return f"{name} at /{where}: {message}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schemas", type=Path, default=REPO / "schemas")
    ap.add_argument("--corpus", type=Path, default=REPO / "target" / "json-corpus")
    ap.add_argument("files", nargs="*", type=Path, help="documents to check instead of --corpus")
    args = ap.parse_args()

    validators = load_schemas(args.schemas)
    if not validators:
        print(f"validate_json: no *.schema.json in {args.schemas}", file=sys.stderr)
        return 1
    files = args.files or sorted(
        p for p in args.corpus.glob("*.json") if not p.name.startswith(".")
    )
    if not files:
        print(f"validate_json: no documents to validate in {args.corpus}", file=sys.stderr)
        return 1

    counts = Counter()
    failed = 0
    for path in files:
        found = problems(path, validators, counts)
        if found:
            failed += 1
            print(f"INVALID {path}", file=sys.stderr)
            for p in found[:20]:
                print(f"  {p}", file=sys.stderr)
            if len(found) > 20:
                print(f"  … and {len(found) - 20} more", file=sys.stderr)

    for name in sorted(counts):
        print(f"{counts[name]:6d}  {name}")
    unseen = sorted(set(validators) - set(counts))
    if unseen:
        print(f"no document of: {', '.join(unseen)}")
    print(f"validate_json: {len(files)} documents, {failed} invalid")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
