"""What the template must hold: the key prefixes and indexes of each role, the access
log's fields, the stream readers, the alarms' topic and namespace, the secret readers."""

import os
import re

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
# Tally's metrics that report a fault, each with the values of its dimension (None: it
# has none) that an alarm must read.
ALARMED_METRICS = {
    "ServiceUnavailable": ["contention", "outcome_unknown", "throttled"],
    "InternalErrors": ["internal_error"],
    "ImportRejected": ["message", "order"],
}
# A declaration there: `Metric::count("Name")`, optionally `.by("Dimension")`.
METRIC_DECLARATION = re.compile(r'Metric::(?:count|milliseconds)\("(\w+)"\)(?:\s*\.by\("(\w+)"\))?')
# Roles that may read a secret of Secrets Manager, and which one (a resource of the
# template). The ticket functions key purchase fingerprints with the deployment secret.
SECRET_READERS = {"TicketsRole": "DeploymentSecret"}
SECRET_ENV = "TALLY_DEPLOYMENT_SECRET_ARN"

# Every function's logs: JSON, at Lambda's most verbose application log level. Lambda
# reads a line without a `level` member (a metrics document) as INFO and drops it at a
# higher level; at TRACE it drops nothing, and Tally's own level is RUST_LOG.
LOGGING = {"LogFormat": "JSON", "ApplicationLogLevel": "TRACE"}

ROLE_TYPES = {"AWS::IAM::Role"}
POLICY_TYPES = {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"}
FUNCTION_TYPES = {"AWS::Serverless::Function", "AWS::Lambda::Function"}
