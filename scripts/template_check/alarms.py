"""Alarms on every queue, function and API, to the optional topic, on metrics the functions
write; one dashboard that charts every metric and shows every alarm."""

import json
import os
import re

from .loader import as_list
from .rules import (
    ALARM_ACTIONS, ALARM_TYPE, ALARMED_METRICS, DASHBOARD_TYPE, FUNCTION_TYPES,
    METRIC_DECLARATION, METRICS_NAMESPACE, METRICS_SOURCE, QUEUE_TYPE,
)


class AlarmChecks:
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
        """Whether some alarm reads `metric` of `namespace` with dimension `name` = `value`
        (with no dimension when `name` is None)."""
        return any(
            ns == namespace and (metric is None or m == metric)
            and (dims == [] if name is None else {"Name": name, "Value": value} in dims)
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
        for metric, values in ALARMED_METRICS.items():
            if not self.expect(metric in declared, f"{metric}: alarmed, but not a metric the functions write"):
                continue
            for value in values or [None]:
                label = f"{metric} {value}" if value else metric
                self.expect(self.alarmed(METRICS_NAMESPACE, metric, declared[metric], value),
                            f"{label}: no alarm on it")
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


def declared_metrics(source_root):
    """Each metric the functions write, with its dimension or None."""
    try:
        with open(os.path.join(source_root, METRICS_SOURCE), encoding="utf-8") as file:
            return {name: dimension or None for name, dimension in METRIC_DECLARATION.findall(file.read())}
    except OSError:
        return {}
