#!/usr/bin/env python3
"""What the clients' tests call instead of a deployment, all on 127.0.0.1:

- a stand-in for API Gateway in front of `tally serve`: it checks each request's SigV4
  signature (IAM auth, service `execute-api`) by computing it again with botocore, AWS's
  own signer, and answers as API Gateway does when it refuses (`403 {"message": ...}`);
  a request with a bearer token instead stands for a stack with a JWT authorizer: the
  token must be one of HARNESS_TOKENS, else `401 {"message": "Unauthorized"}`;
  on demand it answers API Gateway's own `429`, `403` or `5xx` instead of forwarding;
- a fault proxy between `tally serve` and DynamoDB Local: on demand it throttles
  DynamoDB calls, or lets a write commit and then answers `500`, so that Tally answers
  real `503`s with `Retry-After`; or it leaves the last entry out of a Query's answer,
  as an index moments behind does (`hide_last`, for calls whose request holds `holding`);
- a control endpoint for the tests: faults to inject, and counts of what happened; it
  also answers as a container's credential endpoint and an instance's metadata service
  do, with the test credentials that carry a session token.

  harness.py --gateway PORT --tally URL --dynamodb-proxy PORT --dynamodb URL --control PORT

Credentials the stand-in accepts come as JSON in HARNESS_CREDENTIALS:
`[{"key": ..., "secret": ..., "token": null}, ...]`; the region in HARNESS_REGION; the
bearer tokens it takes as JSON in HARNESS_TOKENS: `["...", ...]`.
"""

import argparse
import http.client
import json
import os
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SERVICE = "execute-api"
# API Gateway refuses a signature dated more than five minutes away.
MAX_SKEW_SECONDS = 300


class State:
    """Faults waiting to fire and counts of what happened, shared by every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.gateway_faults = []
            self.dynamodb_faults = []
            self.counts = {}

    def count(self, name):
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1

    def take(self, faults, matches):
        """The first fault that matches and still has shots left, one shot spent."""
        with self.lock:
            for fault in faults:
                if fault["count"] > 0 and matches(fault):
                    fault["count"] -= 1
                    return dict(fault)
        return None


STATE = State()


def credentials():
    return {c["key"]: c for c in json.loads(os.environ["HARNESS_CREDENTIALS"])}


def check_token(header):
    """None when the bearer token is one the stand-in takes, else API Gateway's word for
    a JWT authorizer's refusal. The signature, issuer and audience of a real token are
    API Gateway's to check; here a token is a name the tests agree on."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or token not in json.loads(os.environ["HARNESS_TOKENS"]):
        return "Unauthorized"
    return None


def authorization_parts(header):
    """`AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...` as a dict."""
    algorithm, _, rest = header.partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        return None
    parts = {}
    for item in rest.split(","):
        name, _, value = item.strip().partition("=")
        parts[name] = value
    return parts if {"Credential", "SignedHeaders", "Signature"} <= parts.keys() else None


def check_signature(method, url, headers, body, region):
    """None when botocore computes the signature the request carries, else why not, in
    API Gateway's words."""
    header = headers.get("authorization")
    if not header:
        return "Forbidden"
    parts = authorization_parts(header)
    if parts is None:
        return "Authorization header requires 'Credential', 'Signature', 'SignedHeaders'"
    key, date, scope_region, service, terminal = (parts["Credential"].split("/") + [""] * 5)[:5]
    known = credentials().get(key)
    if known is None:
        return "The security token included in the request is invalid."
    if (scope_region, service, terminal) != (region, SERVICE, "aws4_request"):
        return f"Credential should be scoped to a valid region and to service '{SERVICE}'."
    amz_date = headers.get("x-amz-date", "")
    signed = parts["SignedHeaders"].split(";")
    if "host" not in signed or "x-amz-date" not in signed or not amz_date.startswith(date):
        return "Signature must cover host and x-amz-date."
    try:
        at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return "Invalid X-Amz-Date."
    if abs(time.time() - at.timestamp()) > MAX_SKEW_SECONDS:
        return "Signature expired"
    if known.get("token") and (
        headers.get("x-amz-security-token") != known["token"]
        or "x-amz-security-token" not in signed
    ):
        return "The security token included in the request is invalid."
    request = AWSRequest(
        method=method,
        url=url,
        data=body,
        headers={name: headers.get(name, "") for name in signed},
    )
    request.context["timestamp"] = amz_date
    auth = SigV4Auth(Credentials(key, known["secret"], known.get("token")), SERVICE, region)
    canonical = auth.canonical_request(request)
    string_to_sign = auth.string_to_sign(request, canonical)
    expected = auth.signature(string_to_sign, request)
    if expected != parts["Signature"]:
        # As API Gateway words it, quoting the request it expected, the session token
        # among its headers: the clients must keep that quote out of their errors.
        return (
            "The request signature we calculated does not match the signature you "
            "provided. Check your AWS Secret Access Key and signing method. Consult the "
            "service documentation for details.\n\n"
            f"The Canonical String for this request should have been\n'{canonical}'\n\n"
            f"The String-to-Sign should have been\n'{string_to_sign}'\n"
        )
    return None


# Headers of one hop, which the next connection sets for itself.
HOP_HEADERS = ("host", "connection", "keep-alive", "transfer-encoding", "content-length")


def forward(base, method, path, headers, body):
    """Sends the request on to `base`; returns (status, headers, body)."""
    target = urlsplit(base)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
    try:
        sent = {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS}
        sent["Host"] = target.netloc
        connection.request(method, path, body=body or None, headers=sent)
        answer = connection.getresponse()
        return answer.status, answer.getheaders(), answer.read()
    finally:
        connection.close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


GATEWAY_MESSAGES = {
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Internal Server Error",
    503: "Service Unavailable",
    504: "Service Unavailable",
}


class Gateway(Handler):
    tally = ""
    region = ""

    def handle_any(self, method):
        body = self.body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        host = headers.get("host", "")
        if headers.get("authorization", "").lower().startswith("bearer "):
            refused = check_token(headers["authorization"])
            if refused:
                STATE.count("gateway.refused_token")
                return self.answer(401, json.dumps({"message": refused}).encode())
            STATE.count("gateway.token")
        else:
            refused = check_signature(method, f"http://{host}{self.path}", headers, body, self.region)
            if refused:
                STATE.count("gateway.refused_signature")
                return self.answer(403, json.dumps({"message": refused}).encode())
            STATE.count("gateway.signed")
        fault = STATE.take(
            STATE.gateway_faults,
            lambda f: f.get("method", method) == method
            and self.path.startswith(f.get("path_prefix", "/")),
        )
        if fault:
            STATE.count(f"gateway.injected.{fault['status']}")
            message = fault.get("message", GATEWAY_MESSAGES.get(fault["status"], "Error"))
            return self.answer(fault["status"], json.dumps({"message": message}).encode())
        status, answered, payload = forward(self.tally, method, self.path, self.headers, body)
        STATE.count(f"tally.{status}")
        kept = [(k, v) for k, v in answered if k.lower() in ("retry-after", "location")]
        content_type = dict((k.lower(), v) for k, v in answered).get("content-type", "application/json")
        self.answer(status, payload, content_type, kept)


class DynamoDbProxy(Handler):
    dynamodb = ""

    def handle_any(self, method):
        body = self.body()
        operation = (self.headers.get("x-amz-target") or "").rpartition(".")[2]
        fault = STATE.take(
            STATE.dynamodb_faults,
            lambda f: f["operation"] == operation and f.get("holding", "").encode() in body,
        )
        error = {"content-type": "application/x-amz-json-1.0"}
        if fault and fault["kind"] == "throttle":
            STATE.count(f"dynamodb.throttled.{operation}")
            payload = {
                "__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException",
                "message": "Rate of requests exceeds the allowed throughput.",
            }
            return self.answer(400, json.dumps(payload).encode(), error["content-type"])
        status, answered, payload = forward(self.dynamodb, method, self.path, self.headers, body)
        if fault and fault["kind"] == "error_after":
            STATE.count(f"dynamodb.error_after.{operation}")
            payload = {
                "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
                "message": "Internal server error",
            }
            return self.answer(500, json.dumps(payload).encode(), error["content-type"])
        if fault and fault["kind"] == "hide_last" and status == 200:
            payload = without_last_item(payload, operation)
        content_type = dict((k.lower(), v) for k, v in answered).get("content-type", "")
        self.answer(status, payload, content_type)


def without_last_item(payload, operation):
    """A Query's answer without its last item (the newest, in an index read oldest first), counted."""
    answer = json.loads(payload)
    if not answer.get("Items"):
        return payload
    answer["Items"].pop()
    answer["Count"] -= 1
    STATE.count(f"dynamodb.hidden.{operation}")
    return json.dumps(answer).encode()


# What a container's credential endpoint and an instance's metadata service (IMDSv2)
# answer: the set of test credentials with a session token.
IMDS_TOKEN = "imds-token-for-tests"
ROLE = "tally-test-role"


def temporary_credentials():
    session = next(c for c in credentials().values() if c.get("token"))
    expires = datetime.fromtimestamp(time.time() + 3600, timezone.utc)
    return {
        "AccessKeyId": session["key"],
        "SecretAccessKey": session["secret"],
        "Token": session["token"],
        "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "Code": "Success",
        "Type": "AWS-HMAC",
        "LastUpdated": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


class Control(Handler):
    def credential_endpoints(self, method):
        """The container endpoint (`/container-credentials`, with the token in
        HARNESS_CONTAINER_TOKEN) and IMDSv2 (`/latest/...`); None for other paths."""
        if self.path == "/container-credentials":
            if self.headers.get("authorization") != os.environ["HARNESS_CONTAINER_TOKEN"]:
                return self.answer(401, b'{"message": "no token"}')
            STATE.count("credentials.container")
            return self.answer(200, json.dumps(temporary_credentials()).encode())
        if (method, self.path) == ("PUT", "/latest/api/token"):
            return self.answer(200, IMDS_TOKEN.encode(), "text/plain")
        if self.path.startswith("/latest/meta-data/iam/security-credentials/"):
            if self.headers.get("x-aws-ec2-metadata-token") != IMDS_TOKEN:
                return self.answer(401, b"", "text/plain")
            if self.path.endswith("/"):
                return self.answer(200, ROLE.encode(), "text/plain")
            STATE.count("credentials.instance")
            return self.answer(200, json.dumps(temporary_credentials()).encode())
        return False

    def handle_any(self, method):
        if self.credential_endpoints(method) is not False:
            return
        body = json.loads(self.body() or b"{}")
        if (method, self.path) == ("POST", "/faults/gateway"):
            with STATE.lock:
                STATE.gateway_faults.append(body)
        elif (method, self.path) == ("POST", "/faults/dynamodb"):
            with STATE.lock:
                STATE.dynamodb_faults.append(body)
        elif (method, self.path) == ("POST", "/reset"):
            STATE.reset()
        elif (method, self.path) != ("GET", "/counts"):
            return self.answer(404, b'{"message": "no such control"}')
        with STATE.lock:
            counts = dict(STATE.counts)
        self.answer(200, json.dumps(counts).encode())


def serve(handler, port):
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("gateway", "dynamodb-proxy", "control"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--tally", required=True)
    parser.add_argument("--dynamodb", required=True)
    args = parser.parse_args()
    Gateway.tally = args.tally
    Gateway.region = os.environ["HARNESS_REGION"]
    DynamoDbProxy.dynamodb = args.dynamodb
    serve(DynamoDbProxy, args.dynamodb_proxy)
    serve(Gateway, args.gateway)
    serve(Control, args.control)
    threading.Event().wait()


if __name__ == "__main__":
    main()
