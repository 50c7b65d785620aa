#!/usr/bin/python3
"""Validates mappack --json output against the JSON Schemas in Schemas/ (draft 2020-12).

usage: validate_json.py SCHEMAS_DIR OUTPUT_FILE...
       validate_json.py --document SCHEMA_FILE JSON_FILE...


Each line of each OUTPUT_FILE must be one JSON object whose "schema" field ("NAME/VERSION") names
SCHEMAS_DIR/NAME.schema.json, whose own "schema" const must be that same NAME/VERSION. Prints one
line per problem (file:line: what) and exits 1 if there was any; prints the schemas used, exits 0.
Schemas without a "schema" tag property describe files, not --json lines (mappack-source-1 is
`source.json`); they are checked as schemas and left out. `--document` validates whole JSON files
(one document each) against one schema, printing one line per problem (file /path: what).
Uses Debian's python3-jsonschema.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator


def documents(schema_file, files):
    with open(schema_file) as handle:
        schema = json.load(handle)
    Draft202012Validator.check_schema(schema)
    validator, problems = Draft202012Validator(schema), []
    for name in files:
        with open(name) as handle:
            value = json.load(handle)
        for error in validator.iter_errors(value):
            path = "/".join(str(part) for part in error.absolute_path)
            problems.append(f"{name} /{path}: {error.message}")
    for problem in problems:
        print(problem)
    print(f"{len(files)} documents, {len(problems)} problems")
    sys.exit(1 if problems else 0)


def main():
    if sys.argv[1] == "--document":
        documents(sys.argv[2], sys.argv[3:])
    folder, outputs = sys.argv[1], sys.argv[2:]
    validators, problems, used = {}, [], set()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".schema.json"):
            with open(os.path.join(folder, name)) as handle:
                schema = json.load(handle)
            Draft202012Validator.check_schema(schema)
            if "schema" not in schema.get("properties", {}):
                continue
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
