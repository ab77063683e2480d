#!/usr/bin/env python3
"""Checks a drawn Tally draw from its public data alone (tally-draw-v1, docs/winners.md).

    scripts/verify-draw.py WINNERS.json ELIGIBLE.json

WINNERS.json is the answer of GET /draws/{draw_id}/winners, ELIGIBLE.json the answer of
GET /draws/{draw_id}/eligible. Standard library only. Prints "ok" and exits 0 when every
check holds; otherwise names the first check that fails and exits 1.
"""

import base64
import hashlib
import json
import sys

TWO_64 = 1 << 64


def pick_index(seed, beacon, digest, pick, remaining):
    """The index pick `pick` takes among `remaining` tickets, without modulo bias."""
    cut = TWO_64 % remaining
    attempt = 0
    while True:
        message = (b"tally-draw-v1" + seed + len(beacon).to_bytes(8, "big") + beacon
                   + digest + pick.to_bytes(8, "big") + attempt.to_bytes(8, "big"))
        x = int.from_bytes(hashlib.sha256(message).digest()[:8], "big")
        if x < TWO_64 - cut:
            return x % remaining
        attempt += 1


def verify(winners, eligible):
    proof = winners["proof"]
    if proof["algorithm"] != "tally-draw-v1":
        return "unknown algorithm " + proof["algorithm"]
    seed = bytes.fromhex(proof["seed"])
    if hashlib.sha256(seed).hexdigest() != proof["seed_commitment"]:
        return "the seed does not hash to the commitment"
    total = proof["total_tickets"]
    bitmap = base64.b64decode(eligible["bitmap"], validate=True)
    if eligible["total_tickets"] != total or len(bitmap) != (total + 7) // 8:
        return "the bitmap does not have one bit per ticket"
    if total % 8 and bitmap[-1] >> (total % 8):
        return "the bitmap sets bits past the last ticket"
    digest = hashlib.sha256(bitmap).digest()
    if digest.hex() != proof["eligible_digest"]:
        return "the eligible list does not hash to the digest"
    tickets = [8 * i + bit + 1 for i, byte in enumerate(bitmap) if byte
               for bit in range(8) if byte >> bit & 1]
    if len(tickets) != proof["eligible_count"]:
        return "the eligible count differs from the list"
    beacon = (proof["beacon_value"] or "").encode()
    prizes = proof["prizes"]
    winner_of = {}
    for k, record in enumerate(proof["picks"], start=1):
        prize = record["prize"]
        if record["pick"] != k or (prize != k if k <= prizes else not 1 <= prize <= prizes):
            return "pick %d is out of order or goes to the wrong prize" % k
        ticket = tickets.pop(pick_index(seed, beacon, digest, k, len(tickets)))
        if ticket != record["ticket"]:
            return "pick %d is ticket %d, not %d" % (k, ticket, record["ticket"])
        winner_of[prize] = ticket
    published = {p["prize"]: p["ticket"] for p in winners["prizes"]}
    if published != winner_of or len(winner_of) != prizes:
        return "the prizes do not name the last pick of each prize"
    return None


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as w, open(argv[2], encoding="utf-8") as e:
        failure = verify(json.load(w), json.load(e))
    if failure:
        print("FAILED: " + failure)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
