#!/usr/bin/env python3
"""A local stand-in for EventBridge's PutEvents, for `make invoke FUNCTION=events`.

    scripts/event-sink.py PORT_FILE [LOG_FILE]

Listens on a free loopback port (written to PORT_FILE), takes every entry, and writes
one line per event (detail type and detail) to LOG_FILE, or stderr.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class PutEvents(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        entries = body.get("Entries", [])
        with open(LOG, "a", encoding="utf-8") if LOG else open(2, "w", closefd=False) as log:
            for entry in entries:
                log.write(f"{entry.get('DetailType')}: {entry.get('Detail')}\n")
        answer = json.dumps({
            "FailedEntryCount": 0,
            "Entries": [{"EventId": f"local-{i}"} for i in range(len(entries))],
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/x-amz-json-1.1")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    LOG = sys.argv[2] if len(sys.argv) > 2 else None
    server = ThreadingHTTPServer(("127.0.0.1", 0), PutEvents)
    with open(sys.argv[1], "w", encoding="utf-8") as port_file:
        port_file.write(str(server.server_address[1]))
    server.serve_forever()
