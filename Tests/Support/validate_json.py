#!/usr/bin/python3
"""Validates mappack --json output against the JSON Schemas in Schemas/ (draft 2020-12).

usage: validate_json.py SCHEMAS_DIR OUTPUT_FILE...

Each line of each OUTPUT_FILE must be one JSON object whose "schema" field ("NAME/VERSION") names
SCHEMAS_DIR/NAME.schema.json, whose own "schema" const must be that same NAME/VERSION. Prints one
line per problem (file:line: what) and exits 1 if there was any; prints the schemas used, exits 0.
Uses Debian's python3-jsonschema.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator


def main():
    folder, outputs = sys.argv[1], sys.argv[2:]
    validators, problems, used = {}, [], set()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".schema.json"):
            with open(os.path.join(folder, name)) as handle:
                schema = json.load(handle)
            Draft202012Validator.check_schema(schema)
            validators[name[: -len(".schema.json")]] = (schema, Draft202012Validator(schema))
    for output in outputs:
        with open(output) as handle:
            lines = handle.read().splitlines()
        if not lines:
            problems.append(f"{output}: no output")
        for number, line in enumerate(lines, 1):
            where = f"{output}:{number}"
            try:
                value = json.loads(line)
            except ValueError as error:
                problems.append(f"{where}: not JSON ({error}): {line[:200]}")
                continue
            if not isinstance(value, dict) or not isinstance(value.get("schema"), str):
                problems.append(f"{where}: no \"schema\" field: {line[:200]}")
                continue
            tag = value["schema"]
            name = tag.split("/")[0]
            if name not in validators:
                problems.append(f"{where}: no schema file {name}.schema.json for {tag}")
                continue
            schema, validator = validators[name]
            if schema["properties"]["schema"].get("const") != tag:
                problems.append(f"{where}: {tag} but {name}.schema.json is {schema['properties']['schema'].get('const')}")
            for error in validator.iter_errors(value):
                path = "/".join(str(part) for part in error.absolute_path)
                problems.append(f"{where}: {tag} /{path}: {error.message}")
            used.add(name)
    for problem in problems:
        print(problem)
    print("schemas used: " + " ".join(sorted(used)))
    print("schemas unused: " + " ".join(sorted(set(validators) - used)))
    sys.exit(1 if problems else 0)


main()
