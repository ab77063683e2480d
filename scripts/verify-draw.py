#!/usr/bin/env python3
"""Checks a drawn Tally draw from its public data alone (tally-draw-v2, and
tally-instant-v1 for a draw with instant wins; docs/winners.md).

    scripts/verify-draw.py WINNERS.json ELIGIBLE.json [--draw DRAW.json] [--networks FILE]

WINNERS.json is the answer of GET /draws/{draw_id}/winners, ELIGIBLE.json the answer of
GET /draws/{draw_id}/eligible, DRAW.json the answer of GET /draws/{draw_id} kept from the
close (without it step `frozen` is skipped). quicknet is trusted; --networks (or
TALLY_BEACON_NETWORKS) adds networks as a JSON array of {name, scheme, public_key,
genesis_time, period}, never another quicknet.

The hashes and picks need the standard library only; the beacon signatures need py_ecc
(pinned in scripts/requirements.txt). Prints each step and exits 0 when the draw holds, 1
when a step fails (`format` when a file is not such an answer, a field of the wrong JSON
type included), 3 when none fails but the signatures could not be checked for want of
py_ecc: the draw is then NOT verified, and 2 when the command line is wrong or a file
cannot be read.
"""

import json
import os
import sys

from verify_draw import answers
from verify_draw.check import Check
from verify_draw.rules import ALGORITHM

# The exit status when no step fails but the signatures could not be checked.
UNCHECKED = 3

QUICKNET = {
    "name": "quicknet",
    "scheme": "bls-unchained-g1-rfc9380",
    "public_key": "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
    "genesis_time": 1692803367,
    "period": 3,
}
UNKEPT = (", but not against the draw's answer kept from the close (--draw): nothing shows "
          "that the list, the round and the number of prizes are those fixed before the round "
          "was out")


def unique_keys(pairs):
    """A JSON object whose keys are distinct: a key given twice could be read either way."""
    fields = {}
    for key, value in pairs:
        if key in fields:
            raise ValueError("the key %r is given twice" % key)
        fields[key] = value
    return fields


def refuse_constant(name):
    raise ValueError("%s is not JSON" % name)


def load(path, shape, what):
    """The answer in the file at `path`, read as a draw's answer `what` of `shape`."""
    with open(path, encoding="utf-8") as f:
        answer = json.load(f, object_pairs_hook=unique_keys, parse_constant=refuse_constant)
    return answers.read(answer, shape, what)


def malformed(error):
    """Step `format` failed by `error`: a ValueError says what is wrong, any other is named."""
    detail = str(error) if isinstance(error, ValueError) else repr(error)
    return ("FAIL", "format", "The files are a Tally draw's answers", "malformed: " + detail)


def trusted_networks(path):
    text = os.environ.get("TALLY_BEACON_NETWORKS", "")
    if path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    networks = {QUICKNET["name"]: QUICKNET}
    for network in json.loads(text) if text.strip() else []:
        if network["name"] in networks:
            raise ValueError("network %s is defined twice (quicknet is built in)"
                             % network["name"])
        networks[network["name"]] = network
    return networks


def main(argv):
    args, options = [], {}
    rest = iter(argv[1:])
    for arg in rest:
        if arg in ("--draw", "--networks"):
            options[arg] = next(rest, None)
        else:
            args.append(arg)
    if len(args) != 2 or None in options.values():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        trusted = trusted_networks(options.get("--networks"))
    except ValueError as error:
        print("the networks you trust: %s" % error, file=sys.stderr)
        return 2
    try:
        kept = load(options["--draw"], answers.KEPT, "draw") if "--draw" in options else None
        winners = load(args[0], answers.WINNERS, "winners")
        check = Check(winners, load(args[1], answers.ELIGIBLE, "eligible"), kept, trusted)
    except OSError as error:
        print("cannot read the answers: %s" % error, file=sys.stderr)
        return 2
    except Exception as error:  # whatever a file holds that stops its reading is no answer
        steps = [malformed(error)]
    else:
        try:
            steps = check.run()
        except (KeyError, TypeError, ValueError) as error:
            steps = [malformed(error)]
    for outcome, id_, title, detail in steps:
        print("%-4s  %-10s  %s: %s" % (outcome, id_, title, detail))
    if any(outcome == "FAIL" for outcome, _, _, _ in steps):
        return 1
    if check.unchecked:
        print("NOT VERIFIED: the beacon signatures were not checked, py_ecc is not installed. "
              "Without them the picks prove nothing: whoever knew the seed could have tried "
              "signatures until the picks suited them. Install py_ecc "
              "(scripts/pip-tool.sh py-ecc) and run this with target/python-tools/bin/python3.")
        return UNCHECKED
    unkept = any(outcome == "skip" and id_ == "frozen" for outcome, id_, _, _ in steps)
    print("ok: the draw holds (%s)%s" % (ALGORITHM, UNKEPT if unkept else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
