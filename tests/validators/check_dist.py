"""Checks a built open-data tree with the tools its users would check it with.

    tests/.venv/bin/python tests/validators/check_dist.py dist

- `frictionless` (PyPI `frictionless[json]`) validates `datapackage.json` against Data Package v2 and
  every resource's bytes and SHA-256;
- `jsonschema` validates every published JSON file, and every line of the JSON Lines dumps, against the
  Draft 2020-12 schema published for its kind (a JSON file of no known kind fails: every published kind
  must have a schema), and checks each published schema is itself a valid 2020-12 schema;
- `llms-txt` (the llmstxt.org reference parser) parses `llms.txt`;
- no published schema (`schemas/`, `openapi.json`, the MCP tools' `domain/src/mcp/tools.json`) names a
  `format` JSON Schema does not define (a validator may reject `uint32` or `double`).

`openapi.json` is checked by openapi-spec-validator in the integration tests, and `datapackage.json` is
checked here by frictionless, each against the schema of its own standard. Prints every problem, exits
non-zero when there is one.
"""

import json
import re
import sys
from pathlib import Path

import jsonschema
from frictionless import validate as frictionless_validate
from llms_txt import parse_llms_file

EP = r"ep_[a-z2-7]{10}"
SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
# Published path (regex) -> schema name under schemas/.
JSON_KINDS = [
    (rf"r/{SLUG}\.json", "published-recipe"),
    (rf"r/{SLUG}\.history\.json", "recipe-history"),
    (rf"episodes/{EP}\.json", "episode-record"),
    (rf"episodes/{EP}/transcript\.json", "canonical-transcript"),
    (rf"episodes/{EP}/names\.json", "episode-names"),
    (rf"episodes/{EP}/head\.json", "episode-head"),
    (rf"episodes/{EP}/view\.v\d+\.json", "transcript-view"),
    (rf"episodes/{EP}/transcript\.p20\.json", "podcasting20-transcript"),
    (r"episodes/by-url\.json", "episodes-by-url"),
    (r"episodes/decisions\.json", "built-decisions"),
    (r"episodes/review\.json", "review-queue"),
    (r"episodes/review/\d+\.json", "review-queue-part"),
    (r"episodes\.json", "episodes"),
    (r"shows\.json", "shows"),
    (r"slugs\.json", "slugs"),
    (r"facets\.json", "facets"),
    (r"search/manifest\.json", "search-manifest"),
    (r"quotes/manifest\.json", "phrase-index-manifest"),
]
JSONL_KINDS = [
    (r"recipes(?:-\d+)?\.jsonl", "published-recipe"),
    (r"episodes\.jsonl", "episode-line"),
]
# The formats JSON Schema 2020-12 defines (§7.3); any other is private to one generator.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4",
    "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
}
TOOLS_JSON = Path(__file__).resolve().parents[2] / "domain" / "src" / "mcp" / "tools.json"
# Files with a standard of their own, checked by that standard's validator.
OWN_STANDARD = {"datapackage.json": "frictionless (below)", "openapi.json": "openapi-spec-validator"}


def kind_of(path, kinds):
    for pattern, schema in kinds:
        if re.fullmatch(pattern, path):
            return schema
    return None


def private_formats(value, at=""):
    """Every `format` under `value` that JSON Schema does not define, with where it is."""
    if isinstance(value, dict):
        found = []
        if isinstance(value.get("format"), str) and value["format"] not in STANDARD_FORMATS:
            found.append((at or "/", value["format"]))
        for key, inner in value.items():
            found += private_formats(inner, f"{at}/{key}")
        return found
    if isinstance(value, list):
        return [hit for n, inner in enumerate(value) for hit in private_formats(inner, f"{at}/{n}")]
    return []


def main(dist):
    problems = []
    published = [line.split("  ", 1)[1] for line in (dist / "SHA256SUMS").read_text().splitlines()]
    published.append("datapackage.json")

    validators = {}
    for schema_file in sorted((dist / "schemas").glob("*.schema.json")):
        schema = json.loads(schema_file.read_text())
        name = schema_file.name.removesuffix(".schema.json")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as err:
            problems.append(f"schemas/{schema_file.name}: not a valid Draft 2020-12 schema: {err.message}")
            continue
        validators[name] = jsonschema.Draft202012Validator(schema)

    checked = {}
    for path in published:
        if path.startswith("schemas/") or path in OWN_STANDARD:
            continue
        if path.endswith(".json"):
            kind = kind_of(path, JSON_KINDS)
            documents = [(path, json.loads((dist / path).read_bytes()))] if kind else []
        elif path.endswith(".jsonl"):
            kind = kind_of(path, JSONL_KINDS)
            lines = (dist / path).read_text().splitlines() if kind else []
            documents = [(f"{path} line {n}", json.loads(line)) for n, line in enumerate(lines, 1)]
        else:
            continue
        if kind is None:
            problems.append(f"{path}: a published JSON file of no known kind (give its kind a schema)")
            continue
        if kind not in validators:
            problems.append(f"{path}: its schema schemas/{kind}.schema.json is not published")
            continue
        for where, document in documents:
            for error in validators[kind].iter_errors(document):
                at = "/".join(str(p) for p in error.absolute_path)
                problems.append(f"{where}: {at or '(root)'}: {error.message[:300]} (schemas/{kind}.schema.json)")
        checked[kind] = checked.get(kind, 0) + len(documents)

    schema_files = [(f"schemas/{f.name}", f) for f in sorted((dist / "schemas").glob("*.json"))]
    schema_files += [("openapi.json", dist / "openapi.json"), ("domain/src/mcp/tools.json", TOOLS_JSON)]
    for name, path in schema_files:
        for at, fmt in private_formats(json.loads(path.read_text())):
            problems.append(f"{name}: {at}: format `{fmt}` is not a JSON Schema format (use minimum/maximum)")

    report = frictionless_validate(str(dist / "datapackage.json"))
    if not report.valid:
        for task in report.tasks:
            for error in task.errors:
                problems.append(f"datapackage.json: resource {task.name}: {error.type}: {error.message}")
        for error in report.errors:
            problems.append(f"datapackage.json: {error.type}: {error.message}")

    try:
        llms = parse_llms_file((dist / "llms.txt").read_text())
        n_links = sum(len(links) for links in llms.sections.values())
        if not llms.title or not llms.summary or n_links == 0:
            problems.append("llms.txt: needs an H1 title, a blockquote summary and sections of links")
    except Exception as err:  # the reference parser raises on any line it cannot read
        problems.append(f"llms.txt: the reference parser failed: {type(err).__name__}: {err}")

    for problem in problems:
        print(problem)
    documents = sum(checked.values())
    print(f"{len(problems)} problem(s); {documents} documents of {len(checked)} kinds checked against "
          f"{len(validators)} published schemas; datapackage.json {'valid' if report.valid else 'INVALID'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
