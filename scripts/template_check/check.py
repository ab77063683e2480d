"""One run of every check over a template, counting what passed and listing what failed."""

from .alarms import AlarmChecks, declared_metrics
from .deploy import DeployChecks
from .iam import IamChecks
from .rules import METRICS_SOURCE


class Check(IamChecks, DeployChecks, AlarmChecks):
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

    def run(self, source_root):
        self.check_iam()
        self.check_indexes()
        self.check_functions()
        self.check_builds(source_root)
        self.check_logging()
        self.check_http_apis()
        declared = declared_metrics(source_root)
        self.expect(bool(declared), f"no metric declared in {METRICS_SOURCE}")
        self.check_alarms(declared)
        self.check_dashboard(declared)
        return self.failures
