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
- every function is built by SAM's rust-cargolambda build from a binary of src/bin/, for
  arm64 on provided.al2023 (what `make build`, `make sam` and the cold-start bench expect),
  and functions that share a binary share its role;
- the HTTP API writes JSON access logs that name the caller, to a log group kept for
  LogRetentionDays, and throttles every route with the Throttling* parameters;
- every route takes SigV4-signed requests (AWS_IAM), or, with the OidcIssuer parameter
  set, a JSON Web Token of that issuer (a JWT authorizer) instead: the template is put
  through SAM's own transform both ways, its `!If`s resolved from the parameters first as
  the AWS::LanguageExtensions transform (which must come before SAM's) resolves them;
- every queue has an alarm on its own metrics, every function alarms on its errors and
  its throttles, the API on its 5xx answers; every alarm notifies the AlarmTopicArn
  parameter's topic when one is given and nothing otherwise; an alarm on Tally's own
  namespace names a metric the functions write (declared in src/telemetry/metrics.rs)
  with its dimension, in the namespace the functions are given; one dashboard charts
  every declared metric and shows every alarm. Each run also removes each queue's and
  each function's alarms in turn and checks that the check then fails.

Needs PyYAML and SAM's translator, which cfn-lint brings along. Exits 1 and lists every
failure.
"""

import json
import os
import re
import sys

import yaml

# The partition key prefixes each role may touch, one line per role (see src/store/keys.rs).
EXPECTED = {
    # Payers' terms across draws, and the operator journal (a purchase void, a close, winners).
    "TicketsRole": {"DRAW#*", "PAYER#*", "JOURNAL#*"},
    # The operator journal: an order void writes its entry.
    "OrdersRole": {"SERIES#*", "ORDER#*", "SOURCE#*", "JOURNAL#*"},
    "ImportRole": {"SERIES#*", "ORDER#*", "SOURCE#*"},
}

# The global secondary indexes each role may Query (by index name), under the same
# LeadingKeys condition as its items.
EXPECTED_INDEXES = {
    "TicketsRole": {"payer", "list"},
    "OrdersRole": {"period", "list"},
}

# Indexes that may project more than keys: they hold only items free of secrets (the
# period index holds number and move items of series, never a draw item).
FULL_INDEXES = {"period"}

# What an access log line must say, each as one of a few equivalent $context variables.
ACCESS_LOG_FIELDS = {
    "request id": ["$context.requestId"],
    "time": ["$context.requestTime", "$context.requestTimeEpoch"],
    "source IP": ["$context.identity.sourceIp"],
    "IAM caller": ["$context.identity.caller", "$context.identity.userArn"],
    "route": ["$context.routeKey"],
    "status": ["$context.status"],
    "latency": ["$context.responseLatency"],
    "integration error": ["$context.integrationErrorMessage", "$context.integration.error"],
}

# Roles that read the table's stream (and only that: no item of the table).
STREAM_READERS = {"EventsRole"}
STREAM_ACTIONS = {
    "dynamodb:describestream",
    "dynamodb:getrecords",
    "dynamodb:getsharditerator",
    "dynamodb:liststreams",
}

ALARM_TYPE = "AWS::CloudWatch::Alarm"
DASHBOARD_TYPE = "AWS::CloudWatch::Dashboard"
QUEUE_TYPE = "AWS::SQS::Queue"
# What every alarm does with the optional topic: notify it, or no one.
ALARM_ACTIONS = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}
# The namespace of Tally's own metrics, as the functions are given it and the alarms read it.
METRICS_NAMESPACE = {"Fn::Sub": "Tally/${AWS::StackName}"}
METRICS_SOURCE = os.path.join("src", "telemetry", "metrics.rs")
# A declaration there: `Metric::count("Name")`, optionally `.by("Dimension")`.
METRIC_DECLARATION = re.compile(r'Metric::(?:count|milliseconds)\("(\w+)"\)(?:\s*\.by\("(\w+)"\))?')
# Roles that may read a secret of Secrets Manager, and which one (a resource of the
# template). The ticket functions key purchase fingerprints with the deployment secret.
SECRET_READERS = {"TicketsRole": "DeploymentSecret"}
SECRET_ENV = "TALLY_DEPLOYMENT_SECRET_ARN"

ROLE_TYPES = {"AWS::IAM::Role"}
POLICY_TYPES = {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"}
FUNCTION_TYPES = {"AWS::Serverless::Function", "AWS::Lambda::Function"}


class TemplateLoader(yaml.SafeLoader):
    """A safe loader that also reads CloudFormation's short-form intrinsic tags."""


def _intrinsic(loader, tag_suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "Condition":
        return {"Condition": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {"Fn::" + tag_suffix: value}


TemplateLoader.add_multi_constructor("!", _intrinsic)


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


class Check:
    def __init__(self, template):
        self.template = template
        self.resources = template.get("Resources") or {}
        self.parameters = template.get("Parameters") or {}
        self.failures = []
        self.passed = 0

    def expect(self, ok, message):
        if ok:
            self.passed += 1
        else:
            self.failures.append(message)
        return ok

    # IAM

    def statements(self):
        """(owner, where, statement) for every statement of every policy in the template."""
        for name, resource in self.resources.items():
            kind = resource.get("Type")
            props = resource.get("Properties") or {}
            if kind in ROLE_TYPES:
                doc = props.get("AssumeRolePolicyDocument") or {}
                for i, st in enumerate(as_list(doc.get("Statement"))):
                    yield name, f"{name} trust policy statement {i + 1}", st
                for policy in as_list(props.get("Policies")):
                    pname = policy.get("PolicyName", "?")
                    doc = policy.get("PolicyDocument") or {}
                    for i, st in enumerate(as_list(doc.get("Statement"))):
                        yield name, f"{name} policy {pname} statement {i + 1}", st
            elif kind in POLICY_TYPES:
                doc = props.get("PolicyDocument") or {}
                roles = [r.get("Ref") if isinstance(r, dict) else r
                         for r in as_list(props.get("Roles"))]
                owner = roles[0] if len(roles) == 1 else name
                for i, st in enumerate(as_list(doc.get("Statement"))):
                    yield owner, f"{name} statement {i + 1}", st

    def check_iam(self):
        granted = set()
        queried = {}
        secrets_read = set()
        for owner, where, st in self.statements():
            if not isinstance(st, dict):
                self.expect(False, f"{where}: not a statement")
                continue
            self.expect("NotAction" not in st, f"{where}: NotAction grants everything else")
            self.expect("NotResource" not in st, f"{where}: NotResource grants everything else")
            resources = as_list(st.get("Resource"))
            self.expect("*" not in resources, f'{where}: Resource "*"')
            actions = as_list(st.get("Action"))
            wild = [a for a in actions if not isinstance(a, str) or "*" in a or "?" in a]
            self.expect(not wild, f"{where}: action wildcard {wild}")
            if any(isinstance(a, str) and a.lower().startswith("secretsmanager:")
                   for a in actions):
                self.check_secret_reader(owner, where, st, actions, resources, secrets_read)
            dynamo = [a for a in actions
                      if isinstance(a, str) and a.lower().startswith("dynamodb:")]
            if dynamo and st.get("Effect") == "Allow":
                if owner in STREAM_READERS:
                    self.check_stream_reader(where, dynamo, resources)
                    continue
                granted.add(owner)
                query_only = {a.lower() for a in dynamo} == {"dynamodb:query"}
                self.check_leading_keys(owner, where, st.get("Condition") or {}, query_only)
                self.check_queries(owner, where, dynamo, resources, queried)
        for role in sorted(set(SECRET_READERS) - secrets_read):
            self.expect(False, f"{role}: expected to read {SECRET_READERS[role]}, but no statement grants it")
        for role in sorted(set(EXPECTED) - granted):
            self.expect(False, f"{role}: expected to reach the table, but no statement grants it")
        for role in sorted(set(EXPECTED) | set(EXPECTED_INDEXES)):
            expected = EXPECTED_INDEXES.get(role, set())
            got = queried.get(role, set())
            self.expect(got == expected,
                        f"{role}: may Query indexes {sorted(got)}, expected {sorted(expected)}")

    def check_secret_reader(self, owner, where, st, actions, resources, secrets_read):
        secret = SECRET_READERS.get(owner)
        if not self.expect(secret is not None,
                           f"{where}: Secrets Manager access for a role not in SECRET_READERS"):
            return
        lowered = {a.lower() for a in actions if isinstance(a, str)}
        self.expect(lowered == {"secretsmanager:getsecretvalue"},
                    f"{where}: Secrets Manager actions {sorted(lowered)}, expected GetSecretValue alone")
        self.expect(resources == [{"Ref": secret}],
                    f"{where}: GetSecretValue on {resources}, expected exactly !Ref {secret}")
        self.expect(st.get("Effect") == "Allow", f"{where}: not an Allow statement")
        generated = (self.resources.get(secret) or {})
        props = generated.get("Properties") or {}
        self.expect(generated.get("Type") == "AWS::SecretsManager::Secret"
                    and "GenerateSecretString" in props and "SecretString" not in props,
                    f"{secret}: not a secret that the template generates")
        secrets_read.add(owner)

    def check_secret_env(self, name, props, role_name):
        env = ((props.get("Environment") or {}).get("Variables") or {})
        secret = SECRET_READERS.get(role_name)
        if secret is None:
            self.expect(SECRET_ENV not in env,
                        f"{name}: {SECRET_ENV} on a function whose role may not read it")
        else:
            self.expect(env.get(SECRET_ENV) == {"Ref": secret},
                        f"{name}: {SECRET_ENV} is not !Ref {secret}")

    def check_queries(self, owner, where, actions, resources, queried):
        lowered = {a.lower() for a in actions}
        self.expect("dynamodb:scan" not in lowered, f"{where}: dynamodb:Scan is granted")
        if "dynamodb:query" not in lowered:
            return
        self.expect(lowered == {"dynamodb:query"},
                    f"{where}: dynamodb:Query shares a statement with {sorted(lowered)}")
        for resource in resources:
            index = self.index_of(resource)
            if self.expect(index is not None,
                           f"{where}: dynamodb:Query on {resource}, not on an index of Table"):
                queried.setdefault(owner, set()).add(index)

    @staticmethod
    def index_of(resource):
        """The index name of `!Sub "${Table.Arn}/index/NAME"`, else None."""
        sub = resource.get("Fn::Sub") if isinstance(resource, dict) else None
        prefix = "${Table.Arn}/index/"
        if isinstance(sub, str) and sub.startswith(prefix) and "*" not in sub:
            return sub[len(prefix):]
        return None

    def check_indexes(self):
        table = (self.resources.get("Table") or {}).get("Properties") or {}
        indexes = as_list(table.get("GlobalSecondaryIndexes"))
        names = {i.get("IndexName") for i in indexes}
        for role, wanted in EXPECTED_INDEXES.items():
            self.expect(wanted <= names,
                        f"{role}: indexes {sorted(wanted - names)} are not on the table")
        for index in indexes:
            if index.get("IndexName") in FULL_INDEXES:
                continue
            projection = (index.get("Projection") or {}).get("ProjectionType")
            self.expect(projection == "KEYS_ONLY",
                        f"index {index.get('IndexName')}: projects {projection}, not KEYS_ONLY")

    def check_stream_reader(self, where, actions, resources):
        others = [a for a in actions if a.lower() not in STREAM_ACTIONS]
        self.expect(not others, f"{where}: a stream reader may not {others}")
        stream = {"Fn::GetAtt": ["Table", "StreamArn"]}
        self.expect(resources == [stream], f"{where}: stream actions on {resources}, not the table's stream")

    def check_leading_keys(self, owner, where, condition, query_only=False):
        """A Query statement may name fewer prefixes than the role owns (an index holds
        only some of its items); any other statement names exactly the role's."""
        expected = EXPECTED.get(owner)
        if not self.expect(expected is not None,
                           f"{where}: DynamoDB access for a role with no EXPECTED line"):
            return
        like = condition.get("ForAllValues:StringLike") or {}
        prefixes = set(as_list(like.get("dynamodb:LeadingKeys")))
        fits = prefixes <= expected if query_only else prefixes == expected
        self.expect(
            bool(prefixes) and fits,
            f"{where}: dynamodb:LeadingKeys (ForAllValues:StringLike) is"
            f" {sorted(prefixes) or 'missing'}, expected {sorted(expected)}",
        )
        # YAML reads a bare Null key as null: the operator must be quoted.
        self.expect(None not in condition,
                    f'{where}: condition operator Null must be quoted ("Null")')
        # ForAllValues is true for a request without the key, so the key must be present.
        null = condition.get("Null") or {}
        self.expect(
            str(null.get("dynamodb:LeadingKeys")).lower() == "false",
            f'{where}: no "Null": {{dynamodb:LeadingKeys: "false"}} guard',
        )
        others = [op for op, keys in condition.items()
                  if op not in ("ForAllValues:StringLike", "Null", None)
                  and isinstance(keys, dict) and "dynamodb:LeadingKeys" in keys]
        self.expect(not others, f"{where}: dynamodb:LeadingKeys also under {others}")

    def check_functions(self):
        for name, resource in self.resources.items():
            if resource.get("Type") not in FUNCTION_TYPES:
                continue
            props = resource.get("Properties") or {}
            role = props.get("Role")
            target = role.get("Fn::GetAtt", [None])[0] if isinstance(role, dict) else None
            declared = (self.resources.get(target) or {}).get("Type") in ROLE_TYPES
            self.expect(declared, f"{name}: Role is not a role declared in this template")
            self.expect("Policies" not in props, f"{name}: SAM Policies bypass the role checks")
            self.check_secret_env(name, props, target)

    # Build

    def check_builds(self, source_root):
        defaults = (self.template.get("Globals") or {}).get("Function") or {}
        binaries = []
        for name, resource in self.resources.items():
            if resource.get("Type") != "AWS::Serverless::Function":
                continue
            props = resource.get("Properties") or {}
            runtime = props.get("Runtime", defaults.get("Runtime"))
            self.expect(runtime == "provided.al2023",
                        f"{name}: Runtime is {runtime}, expected provided.al2023")
            architectures = props.get("Architectures", defaults.get("Architectures"))
            self.expect(architectures == ["arm64"],
                        f"{name}: Architectures is {architectures}, expected [arm64]")
            metadata = resource.get("Metadata") or {}
            self.expect(metadata.get("BuildMethod") == "rust-cargolambda",
                        f"{name}: Metadata BuildMethod is not rust-cargolambda")
            binary = (metadata.get("BuildProperties") or {}).get("Binary")
            if not self.expect(isinstance(binary, str) and re.fullmatch(r"[A-Za-z0-9_-]+", binary),
                               f"{name}: Metadata BuildProperties has no Binary"):
                continue
            role = props.get("Role")
            binaries.append((binary, json.dumps(role, sort_keys=True)))
            sources = [os.path.join(source_root, "src", "bin", binary + ".rs"),
                       os.path.join(source_root, "src", "bin", binary, "main.rs")]
            self.expect(any(os.path.isfile(source) for source in sources),
                        f"{name}: Binary {binary} is not a binary of src/bin/")
        # One binary may serve several functions (the ticket and drawing functions), with
        # other memory and timeouts, but never under another role: the same code must not
        # hold other permissions.
        roles = {}
        for binary, role in binaries:
            roles.setdefault(binary, set()).add(role)
        mixed = sorted(b for b, r in roles.items() if len(r) > 1)
        self.expect(not mixed, f"functions of the binaries {mixed} run under different roles")

    # HTTP API

    def check_http_apis(self):
        apis = {n: r for n, r in self.resources.items()
                if r.get("Type") == "AWS::Serverless::HttpApi"}
        self.expect(bool(apis), "no AWS::Serverless::HttpApi in the template")
        for name, api in apis.items():
            props = api.get("Properties") or {}
            self.check_access_log(name, props.get("AccessLogSettings") or {})
            self.check_throttling(name, props.get("DefaultRouteSettings") or {})

    def check_access_log(self, name, settings):
        dest = settings.get("DestinationArn")
        group = None
        if isinstance(dest, dict) and "Fn::GetAtt" in dest:
            group = self.resources.get(dest["Fn::GetAtt"][0])
        if self.expect((group or {}).get("Type") == "AWS::Logs::LogGroup",
                       f"{name}: access log destination is not a log group of this template"):
            retention = (group.get("Properties") or {}).get("RetentionInDays")
            self.expect(retention == {"Ref": "LogRetentionDays"},
                        f"{name}: access log group does not keep logs for LogRetentionDays")
        fmt = settings.get("Format")
        if not self.expect(isinstance(fmt, str),
                           f"{name}: AccessLogSettings.Format is not a plain string"):
            return
        try:
            values = json.loads(fmt)
        except ValueError as error:
            self.expect(False, f"{name}: access log format is not JSON ({error})")
            return
        if not self.expect(isinstance(values, dict),
                           f"{name}: access log format is not a JSON object"):
            return
        used = {str(v) for v in values.values()}
        for field, variables in ACCESS_LOG_FIELDS.items():
            self.expect(any(v in used for v in variables),
                        f"{name}: access log records no {field} (one of {', '.join(variables)})")

    def check_throttling(self, name, settings):
        for key in ("ThrottlingBurstLimit", "ThrottlingRateLimit"):
            self.expect(settings.get(key) == {"Ref": key},
                        f"{name}: DefaultRouteSettings.{key} is not the {key} parameter")
            param = self.parameters.get(key) or {}
            complete = param.get("Type") == "Number" and "Default" in param
            self.expect(complete and bool(param.get("Description")),
                        f"parameter {key}: missing, or not a Number with a default"
                        " and a description")

    # Alarms and the dashboard

    def of_type(self, kind):
        return {n: r for n, r in self.resources.items() if r.get("Type") == kind}

    @staticmethod
    def watched(alarm):
        """(namespace, metric name, dimensions) of each metric an alarm reads."""
        props = alarm.get("Properties") or {}
        if "MetricName" in props:
            yield props.get("Namespace"), props.get("MetricName"), as_list(props.get("Dimensions"))
        for query in as_list(props.get("Metrics")):
            metric = ((query or {}).get("MetricStat") or {}).get("Metric") or {}
            if metric:
                yield metric.get("Namespace"), metric.get("MetricName"), as_list(metric.get("Dimensions"))

    def alarmed(self, namespace, metric, name, value):
        """Whether some alarm reads `metric` of `namespace` with dimension `name` = `value`."""
        return any(
            ns == namespace and (metric is None or m == metric)
            and {"Name": name, "Value": value} in dims
            for alarm in self.of_type(ALARM_TYPE).values()
            for ns, m, dims in self.watched(alarm))

    def check_alarms(self, declared):
        for name in self.of_type(QUEUE_TYPE):
            self.expect(self.alarmed("AWS/SQS", None, "QueueName", {"Fn::GetAtt": [name, "QueueName"]}),
                        f"{name}: no alarm on the queue")
        for name, resource in self.resources.items():
            if resource.get("Type") in FUNCTION_TYPES:
                for metric in ("Errors", "Throttles"):
                    self.expect(self.alarmed("AWS/Lambda", metric, "FunctionName", {"Ref": name}),
                                f"{name}: no alarm on its {metric}")
        for name in self.of_type("AWS::Serverless::HttpApi"):
            self.expect(self.alarmed("AWS/ApiGateway", "5xx", "ApiId", {"Ref": name}),
                        f"{name}: no alarm on its 5xx answers")
        topic = self.parameters.get("AlarmTopicArn") or {}
        self.expect(topic.get("Type") == "String" and topic.get("Default") == "",
                    "parameter AlarmTopicArn: missing, or not a String that is empty by default")
        for name, alarm in self.of_type(ALARM_TYPE).items():
            props = alarm.get("Properties") or {}
            for key in ("AlarmActions", "OKActions"):
                self.expect(props.get(key) == ALARM_ACTIONS,
                            f"{name}: {key} is not the AlarmTopicArn topic when one is given")
            for namespace, metric, dims in self.watched(alarm):
                if namespace != METRICS_NAMESPACE:
                    continue
                if self.expect(metric in declared, f"{name}: {metric} is not a metric the functions write"):
                    keys = [d.get("Name") for d in dims]
                    wanted = [declared[metric]] if declared[metric] else []
                    self.expect(keys == wanted,
                                f"{name}: {metric} is written with dimensions {wanted}, not {keys}")
        variables = (((self.template.get("Globals") or {}).get("Function") or {})
                     .get("Environment") or {}).get("Variables") or {}
        self.expect(variables.get("TALLY_METRICS_NAMESPACE") == METRICS_NAMESPACE,
                    "Globals: TALLY_METRICS_NAMESPACE is not the namespace the alarms read")

    def check_dashboard(self, declared):
        dashboards = self.of_type(DASHBOARD_TYPE)
        if not self.expect(len(dashboards) == 1, f"{len(dashboards)} dashboards, expected one"):
            return
        (name, dashboard), = dashboards.items()
        body = ((dashboard.get("Properties") or {}).get("DashboardBody") or {}).get("Fn::Sub")
        if not self.expect(isinstance(body, str), f"{name}: DashboardBody is not a !Sub string"):
            return
        try:
            widgets = json.loads(re.sub(r"\$\{[^}]+\}", "x", body)).get("widgets") or []
        except ValueError as error:
            self.expect(False, f"{name}: DashboardBody is not JSON ({error})")
            return
        charted = set()
        for widget in widgets:
            previous = [None, None]
            for row in (widget.get("properties") or {}).get("metrics") or []:
                if not isinstance(row, list) or not row:
                    continue
                # "." repeats the value above; "..." repeats the row above up to its last value.
                if row[0] == "...":
                    namespace, metric = previous
                else:
                    namespace = previous[0] if row[0] == "." else row[0]
                    metric = previous[1] if len(row) < 2 or row[1] == "." else row[1]
                previous = [namespace, metric]
                if namespace == "Tally/x":
                    charted.add(metric)
        for metric in sorted(set(declared) - charted):
            self.expect(False, f"{name}: {metric} is not charted")
        for alarm in self.of_type(ALARM_TYPE):
            self.expect("${" + alarm + ".Arn}" in body, f"{name}: does not show {alarm}")

    def run(self, source_root):
        self.check_iam()
        self.check_indexes()
        self.check_functions()
        self.check_builds(source_root)
        self.check_http_apis()
        declared = declared_metrics(source_root)
        self.expect(bool(declared), f"no metric declared in {METRICS_SOURCE}")
        self.check_alarms(declared)
        self.check_dashboard(declared)
        return self.failures


# The transforms, in the order they must run.
TRANSFORMS = ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
# The API whose routes the authorizer check follows, and the authorizer with OidcIssuer.
API = "HttpApi"
JWT_AUTHORIZER = "OidcAuthorizer"


def resolve_conditions(node, conditions):
    """`node` with each `Fn::If` on one of `conditions` replaced by its branch, and
    `AWS::NoValue` dropped: what AWS::LanguageExtensions leaves of them."""
    no_value = {"Ref": "AWS::NoValue"}
    if isinstance(node, dict):
        if set(node) == {"Fn::If"} and node["Fn::If"][0] in conditions:
            name, then, otherwise = node["Fn::If"]
            return resolve_conditions(then if conditions[name] else otherwise, conditions)
        resolved = {k: resolve_conditions(v, conditions) for k, v in node.items()}
        return {k: v for k, v in resolved.items() if v != no_value}
    if isinstance(node, list):
        resolved = [resolve_conditions(v, conditions) for v in node]
        return [v for v in resolved if v != no_value]
    return node


def route_security(template, parameters, uses_oidc):
    """The security requirement of every route SAM's transform gives the API, as JSON
    text, with UsesOidc `uses_oidc`."""
    import copy
    import logging
    from samtranslator.translator.transform import transform

    class NoManagedPolicies:
        def load(self):
            return {}

    resolved = resolve_conditions(copy.deepcopy(template), {"UsesOidc": uses_oidc})
    resolved["Transform"] = TRANSFORMS[1]
    # SAM checks a deployed CodeUri's form; the build replaces it anyway.
    resolved.setdefault("Globals", {}).setdefault("Function", {})["CodeUri"] = "s3://b/k"
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    # The translator warns when its own metrics, which nothing here publishes, are dropped.
    logging.getLogger("samtranslator.metrics.metrics").setLevel(logging.ERROR)
    output = transform(resolved, parameters, NoManagedPolicies())
    body = output["Resources"][API]["Properties"]["Body"]
    schemes = (body.get("components") or {}).get("securitySchemes") or {}
    routes = {f"{method.upper()} {path}": json.dumps(operation.get("security"))
              for path, item in body.get("paths", {}).items()
              for method, operation in item.items()}
    return routes, schemes


def authorizer_failures(template):
    """Every route behind AWS_IAM by default, behind the JWT authorizer of OidcIssuer and
    OidcAudience with OidcIssuer set."""
    failures = []
    if template.get("Transform") != TRANSFORMS:
        failures.append(f"Transform is not {TRANSFORMS}: SAM would read the authorizer's !If")
    default = {name: (p or {}).get("Default")
               for name, p in (template.get("Parameters") or {}).items()}
    cases = [
        (False, dict(default), [{"AWS_IAM": []}]),
        (True, dict(default, OidcIssuer="https://auth.example.com/", OidcAudience="tally"),
         [{JWT_AUTHORIZER: []}]),
    ]
    for uses_oidc, parameters, expected in cases:
        mode = "with OidcIssuer" if uses_oidc else "by default"
        try:
            routes, schemes = route_security(template, parameters, uses_oidc)
        except Exception as error:  # SAM's own refusal, whatever its type
            failures.append(f"SAM's transform fails {mode}: {error}")
            continue
        if not routes:
            failures.append(f"{API} has no route {mode}")
        for route, security in sorted(routes.items()):
            if json.loads(security) != expected:
                failures.append(f"{route} {mode} takes {security}, not {json.dumps(expected)}")
        if uses_oidc:
            jwt = (schemes.get(JWT_AUTHORIZER) or {}).get("x-amazon-apigateway-authorizer") or {}
            config = jwt.get("jwtConfiguration") or {}
            if jwt.get("type") != "jwt" or config.get("issuer") != {"Ref": "OidcIssuer"}:
                failures.append(f"{JWT_AUTHORIZER} is not a JWT authorizer of OidcIssuer: {jwt}")
    return failures


def declared_metrics(source_root):
    """Each metric the functions write, with its dimension or None."""
    try:
        with open(os.path.join(source_root, METRICS_SOURCE), encoding="utf-8") as file:
            return {name: dimension or None for name, dimension in METRIC_DECLARATION.findall(file.read())}
    except OSError:
        return {}


def unnoticed_removals(template, source_root):
    """Removes each queue's and each function's alarms in turn: the check must fail each
    time. Returns what went unnoticed, and how many removals were tried."""
    resources = template.get("Resources") or {}
    watched = [n for n, r in resources.items() if r.get("Type") in FUNCTION_TYPES | {QUEUE_TYPE}]
    unnoticed = []
    for name in watched:
        copy = json.loads(json.dumps(template))
        alarms = [n for n, r in copy["Resources"].items() if r.get("Type") == ALARM_TYPE
                  and name in json.dumps(r.get("Properties", {}).get("Dimensions"))]
        for alarm in alarms:
            del copy["Resources"][alarm]
        check = Check(copy)
        check.check_alarms(declared_metrics(source_root))
        if not any(f.startswith(f"{name}: no alarm") for f in check.failures):
            unnoticed.append(name)
    return unnoticed, len(watched)


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
    unnoticed, removals = unnoticed_removals(template, source_root)
    failures += [f"removing the alarms of {name} went unnoticed" for name in unnoticed]
    failures += authorizer_failures(template)
    for failure in failures:
        print(f"{path}: {failure}", file=sys.stderr)
    if failures:
        print(f"{path}: {len(failures)} failed, {check.passed} passed", file=sys.stderr)
        return 1
    print(f"{path}: {check.passed} checks passed; each of {removals} queues and functions"
          " left without its alarms was noticed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
