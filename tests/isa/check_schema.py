"""Validate ISA descriptions with the reference jsonschema package (cross-checks isa/schema.json)."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for path in sys.argv[2:]:
    jsonschema.Draft202012Validator(schema).validate(json.load(open(path)))
    print("valid:", path)
