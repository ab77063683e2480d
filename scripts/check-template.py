#!/usr/bin/env python3
"""Checks what cfn-lint cannot know about Tally's template: scripts/check-template.py [FILE|-]

- every IAM statement that grants a DynamoDB action is limited, with
  dynamodb:LeadingKeys, to exactly the key prefixes its role owns (EXPECTED below),
  except that the roles in STREAM_READERS may read the table's stream and nothing else
  of the table;
- no IAM statement names every resource ("*") or uses an action wildcard;
- dynamodb:Query is granted only on the global secondary indexes a role may read
  (EXPECTED_INDEXES), in a statement of its own, never on the table; no role may scan;
  every index but those in FULL_INDEXES projects keys only, so no index copies a
  draw's secrets;
- secretsmanager actions: only GetSecretValue, only by the roles of SECRET_READERS,
  each on exactly its secret, which the template generates; the functions of those
  roles (and no other) get the secret's ARN in TALLY_DEPLOYMENT_SECRET_ARN;
- every function runs under a role declared in the template (no SAM-made roles or
  SAM policy templates, which this check cannot see into);
- every function logs JSON at the application log level TRACE: Lambda reads a metrics
  line (no `level` member) as INFO, and would drop it at a higher level;
- every function is built by SAM's rust-cargolambda build from a binary of src/bin/, for
  arm64 on provided.al2023 (what `make build`, `make sam` and the cold-start bench expect),
  and functions that share a binary share its role and its settings (but time limits);
- the HTTP API writes JSON access logs that name the caller, to a log group kept for
  LogRetentionDays, and throttles every route with the Throttling* parameters;
- every route takes SigV4-signed requests (AWS_IAM), or, with the OidcIssuer parameter
  set, a JSON Web Token of that issuer (a JWT authorizer) instead: the template is put
  through SAM's own transform both ways, its `!If`s resolved from the parameters first as
  the AWS::LanguageExtensions transform (which must come before SAM's) resolves them;
- every queue has an alarm on its own metrics, every function alarms on its errors and
  its throttles, the API on its 5xx answers, and Tally's fault metrics (ALARMED_METRICS:
  503s by code, internal errors, imports rejected) each have theirs; every alarm notifies the AlarmTopicArn
  parameter's topic when one is given and nothing otherwise; an alarm on Tally's own
  namespace names a metric the functions write (declared in src/telemetry/metrics.rs)
  with its dimension, in the namespace the functions are given; one dashboard charts
  every declared metric and shows every alarm. Each run also removes each queue's,
  each function's and each fault metric's alarms in turn, and raises each function's log
  level, and checks that the check then fails.

Needs PyYAML and SAM's translator (aws-sam-translator), from the Python environment of
scripts/pip-tool.sh. Exits 1 and lists every failure. The checks themselves are in
scripts/template_check/.
"""

import json
import os
import sys

import yaml

from template_check.authorizers import authorizer_failures
from template_check.check import Check
from template_check.loader import TemplateLoader
from template_check.rules import ALARM_TYPE, ALARMED_METRICS, FUNCTION_TYPES, QUEUE_TYPE


def copy_of(template):
    return json.loads(json.dumps(template))


def without_alarms(template, reads):
    """A copy of `template` without the alarms whose Properties `reads` picks."""
    copy = copy_of(template)
    resources = copy["Resources"]
    for name in [n for n, r in resources.items() if r.get("Type") == ALARM_TYPE
                 and reads(json.dumps(r.get("Properties", {})))]:
        del resources[name]
    return copy


def spoiled_copies(template):
    """Copies of `template`, each missing one thing the check must notice: the alarms of a
    queue, of a function or on an alarmed metric, or a function's application log level
    (raised to WARN). Yields what is missing, the copy, and how its failure starts."""
    resources = template.get("Resources") or {}
    for name, resource in resources.items():
        kind = resource.get("Type")
        if kind in FUNCTION_TYPES | {QUEUE_TYPE}:
            yield (f"the alarms of {name}", without_alarms(template, lambda p, n=name: n in p),
                   f"{name}: no alarm")
        if kind in FUNCTION_TYPES:
            copy = copy_of(template)
            props = copy["Resources"][name].setdefault("Properties", {})
            props.setdefault("LoggingConfig", {})["ApplicationLogLevel"] = "WARN"
            yield (f"the log level of {name}", copy, f"{name}: LoggingConfig ApplicationLogLevel")
    for metric, values in ALARMED_METRICS.items():
        for value in values or [None]:
            label = f"{metric} {value}" if value else metric
            def reads(props, metric=metric, value=value):
                return f'"{metric}"' in props and (value is None or f'"{value}"' in props)
            yield f"the alarms on {label}", without_alarms(template, reads), f"{label}: no alarm"


def unnoticed_spoils(template, source_root):
    """What went unnoticed of `spoiled_copies`, and how many were tried."""
    unnoticed, tried = [], 0
    for missing, copy, failure in spoiled_copies(template):
        tried += 1
        if not any(f.startswith(failure) for f in Check(copy).run(source_root)):
            unnoticed.append(missing)
    return unnoticed, tried


def main(argv):
    path = argv[1] if len(argv) > 1 else "template.yaml"
    if path == "-":
        path, text, source_root = "<stdin>", sys.stdin.read(), "."
    else:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        source_root = os.path.dirname(os.path.abspath(path))
    template = yaml.load(text, Loader=TemplateLoader) or {}
    check = Check(template)
    failures = check.run(source_root)
    unnoticed, spoils = unnoticed_spoils(template, source_root)
    failures += [f"removing {missing} went unnoticed" for missing in unnoticed]
    failures += authorizer_failures(template)
    for failure in failures:
        print(f"{path}: {failure}", file=sys.stderr)
    if failures:
        print(f"{path}: {len(failures)} failed, {check.passed} passed", file=sys.stderr)
        return 1
    print(f"{path}: {check.passed} checks passed; each of {spoils} copies missing an alarm"
          " or a log level was noticed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
