#!/usr/bin/env python3
"""`planck verify` SARIF and JUnit output against the published schemas.

SARIF: OASIS sarif-schema-2.1.0.json; JUnit: the Apache Ant JUnit XSD (windyroad/JUnit-Schema);
both copied in tests/data/schemas with their source (README.md there). Inputs cover a clean plan,
one breaking a rule, a plan without model (checks-skipped), a missing file and several inputs at
once. Skips (exit 77) with a message when python3-jsonschema or python3-lxml is missing.
Usage: test_report_schemas.py PLANCK_BIN SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
    from lxml import etree
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {e.name} missing; install python3-jsonschema python3-lxml (scripts/setup.sh)")
    sys.exit(77)

planck, src = sys.argv[1], sys.argv[2]
schemas = os.path.join(src, "tests", "data", "schemas")
plans = os.path.join(src, "plans")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def verify(args, fmt):
    r = subprocess.run([planck, "verify", *args, "--format", fmt], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


no_model = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
no_model.write('{"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},'
               ' "mesh": {"dims": ["dp"], "shape": [8]}}')
no_model.close()
clean = os.path.join(plans, "torchtitan-hsdp-2x8.json")
broken = os.path.join(plans, "torchtitan-hsdp-2x8-flattened.json")
missing = os.path.join(tempfile.gettempdir(), "planck-no-such-plan.json")
cases = {"clean": [clean], "broken": [broken], "no-model": [no_model.name], "missing": [missing],
         "several": [clean, broken, no_model.name, missing],
         # --ignore: SARIF ruleConfigurationOverrides, JUnit <skipped> for the ignored rules
         "ignored": [broken, no_model.name, "--ignore", "hsdp-flattened,checks-skipped"]}

with open(os.path.join(schemas, "sarif-schema-2.1.0.json")) as f:
    sarif_schema = json.load(f)
sarif_validator = jsonschema.Draft4Validator(sarif_schema)
xsd = etree.XMLSchema(etree.parse(os.path.join(schemas, "JUnit.xsd")))

for name, args in cases.items():
    code, out = verify(args, "sarif")
    doc = json.loads(out)
    errors = [f"{list(e.path)}: {e.message}" for e in sarif_validator.iter_errors(doc)]
    check(not errors, f"sarif {name} valid: {errors[:3]}")
    check(len(doc["runs"]) == len([a for a in args if not a.startswith("--") and "," not in a]), f"sarif {name}: one run per input")
    for run in doc["runs"]:
        for rule in run["tool"]["driver"]["rules"]:
            for key in ("shortDescription", "fullDescription", "help", "helpUri"):
                check(key in rule, f"sarif {name}: rule {rule['id']} has {key}")
            check(rule["helpUri"].endswith("verify.md#rule-" + rule["id"]), f"sarif {name}: helpUri of {rule['id']}")

    code, out = verify(args, "junit")
    root = etree.fromstring(out.encode())
    check(root.tag == "testsuites", f"junit {name}: testsuites root")
    suites = root.findall("testsuite")
    check(len(suites) == len([a for a in args if not a.startswith("--") and "," not in a]), f"junit {name}: one suite per input")
    check(xsd.validate(root), f"junit {name} valid: {xsd.error_log.last_error}")

# What the counts must say: the missing file is one <error> and nothing passes; the plan without a
# model skips the rules that need one; the flattened plan fails hsdp-flattened.
_, out = verify([missing], "junit")
suite = etree.fromstring(out.encode()).find("testsuite")
check(suite.get("errors") == "1" and suite.get("failures") == "0", "junit missing: errors=1 failures=0")
check(int(suite.get("skipped")) == int(suite.get("tests")) - 1, "junit missing: every other rule skipped")
_, out = verify([no_model.name], "junit")
skipped = {c.get("name") for c in etree.fromstring(out.encode()).iter("testcase") if c.find("skipped") is not None}
check({"heads-indivisible", "memory-exceeds"} <= skipped, f"junit no-model: skipped {sorted(skipped)}")
_, out = verify([broken], "junit")
failed = {c.get("name") for c in etree.fromstring(out.encode()).iter("testcase") if c.find("failure") is not None}
check(failed == {"hsdp-flattened"}, f"junit broken: failed {sorted(failed)}")
_, out = verify([no_model.name], "sarif")
notes = json.loads(out)["runs"][0]["invocations"][0].get("toolExecutionNotifications", [])
check(any("memory-exceeds" in n["properties"]["skippedRules"] for n in notes), "sarif no-model: notification")

os.unlink(no_model.name)
sys.exit(1 if failures else 0)
