"""How the functions are built (SAM's rust-cargolambda, arm64, a binary of src/bin/ and
one role a binary) and log, and what the HTTP API logs and throttles."""

import json
import os
import re

from .rules import ACCESS_LOG_FIELDS, FUNCTION_TYPES, LOGGING


class DeployChecks:
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
            variables = ((props.get("Environment") or {}).get("Variables") or {})
            settings = sorted(v for v in variables if not v.endswith("_TIMEOUT_MS"))
            binaries.append((binary, json.dumps(role, sort_keys=True), json.dumps(settings)))
            sources = [os.path.join(source_root, "src", "bin", binary + ".rs"),
                       os.path.join(source_root, "src", "bin", binary, "main.rs")]
            self.expect(any(os.path.isfile(source) for source in sources),
                        f"{name}: Binary {binary} is not a binary of src/bin/")
        # One binary may serve several functions (the ticket and drawing functions), with
        # other memory and timeouts, but never under another role: the same code must not
        # hold other permissions.
        # Nor with other settings but its time limits: a caller the one function binds to
        # its sources must not be unbound in the other (both serve every route of it).
        roles = {}
        settings = {}
        for binary, role, names in binaries:
            roles.setdefault(binary, set()).add(role)
            settings.setdefault(binary, set()).add(names)
        mixed = sorted(b for b, r in roles.items() if len(r) > 1)
        self.expect(not mixed, f"functions of the binaries {mixed} run under different roles")
        mixed = sorted(b for b, s in settings.items() if len(s) > 1)
        self.expect(not mixed, f"functions of the binaries {mixed} are given different settings")

    def check_logging(self):
        """Every function logs JSON at the application log level of LOGGING (its own
        LoggingConfig over that of Globals, as SAM merges them)."""
        defaults = ((self.template.get("Globals") or {}).get("Function") or {}).get("LoggingConfig") or {}
        for name, resource in self.resources.items():
            if resource.get("Type") not in FUNCTION_TYPES:
                continue
            config = {**defaults, **((resource.get("Properties") or {}).get("LoggingConfig") or {})}
            for key, wanted in LOGGING.items():
                self.expect(config.get(key) == wanted,
                            f"{name}: LoggingConfig {key} is {config.get(key)}, expected {wanted}")

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
