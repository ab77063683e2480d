#!/usr/bin/env python3
"""Checks a drawn Tally draw from its public data alone (tally-draw-v2, and
tally-instant-v1 for a draw with instant wins; docs/winners.md).

    scripts/verify-draw.py WINNERS.json ELIGIBLE.json [--draw DRAW.json] [--networks FILE]

WINNERS.json is the answer of GET /draws/{draw_id}/winners, ELIGIBLE.json the answer of
GET /draws/{draw_id}/eligible, DRAW.json the answer of GET /draws/{draw_id} kept from the
close (without it step `frozen` is skipped). quicknet is trusted; --networks (or
TALLY_BEACON_NETWORKS) adds networks as a JSON array of {name, scheme, public_key,
genesis_time, period}, never another quicknet.

The hashes and picks need the standard library only. The beacon signature is checked
with py_ecc (pinned in scripts/requirements.txt) when it is installed, and skipped with a
message when it is not. Prints each step and exits 0 when none fails, 1 otherwise.
"""

import base64
import datetime
import hashlib
import json
import os
import sys

ALGORITHM = "tally-draw-v2"
INSTANT_ALGORITHM = "tally-instant-v1"
TWO_64 = 1 << 64
MARGIN_MS = 30_000
QUICKNET = {
    "name": "quicknet",
    "scheme": "bls-unchained-g1-rfc9380",
    "public_key": "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
    "genesis_time": 1692803367,
    "period": 3,
}
NETWORK_FIELDS = ("scheme", "public_key", "genesis_time", "period")


def same_field(name, value):
    """A network field as compared: a public key by its bytes, not its hex's case."""
    if name == "public_key" and isinstance(value, str):
        try:
            return bytes.fromhex(value)
        except ValueError:
            return value
    return value


UNKEPT = (", but not against the draw's answer kept from the close (--draw): nothing shows "
          "that the list, the round and the number of prizes are those fixed before the round "
          "was out")


class Failed(Exception):
    pass


class Skipped(Exception):
    pass


def pick_index(seed, digest, pick, beacon, remaining):
    """The index pick `pick` takes among `remaining` tickets, without modulo bias."""
    cut = TWO_64 % remaining
    attempt = 0
    while True:
        message = (ALGORITHM.encode() + seed + digest + pick.to_bytes(8, "big")
                   + len(beacon).to_bytes(8, "big") + beacon + attempt.to_bytes(8, "big"))
        x = int.from_bytes(hashlib.sha256(message).digest()[:8], "big")
        if x < TWO_64 - cut:
            return x % remaining
        attempt += 1


def instant_map(key, total, counts):
    """The winning numbers, slot by slot: each uniform over the numbers left, no bias."""
    cut = TWO_64 % total
    taken, slots = set(), []
    for slot in range(1, sum(counts) + 1):
        attempt = 0
        while True:
            message = (INSTANT_ALGORITHM.encode() + key + total.to_bytes(8, "big")
                       + slot.to_bytes(8, "big") + attempt.to_bytes(8, "big"))
            x = int.from_bytes(hashlib.sha256(message).digest()[:8], "big")
            attempt += 1
            if x < TWO_64 - cut and x % total + 1 not in taken:
                taken.add(x % total + 1)
                slots.append(x % total + 1)
                break
    return slots


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def millis(text):
    """An RFC 3339 time as Unix milliseconds, in integers (a float would round)."""
    since = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")) - EPOCH
    return since.days * 86_400_000 + since.seconds * 1000 + since.microseconds // 1000


def round_after(network, at_ms):
    """The first round published more than the margin after `at_ms`."""
    after = at_ms + MARGIN_MS - network["genesis_time"] * 1000
    return 1 if after < 0 else after // (network["period"] * 1000) + 2


def signature_valid(network, round_, signature):
    """True or False with py_ecc; raises Skipped without it."""
    try:
        from py_ecc.bls import G2Basic
        from py_ecc.bls.g2_primitives import pubkey_to_G1, signature_to_G2
        from py_ecc.bls.hash_to_curve import hash_to_G1
        from py_ecc.optimized_bls12_381 import (FQ12, G2, curve_order, final_exponentiate,
                                                is_inf, multiply, neg, pairing)
    except ImportError:
        raise Skipped("py_ecc is not installed (scripts/pip-tool.sh py-ecc, then run this "
                      "with target/python-tools/bin/python3): signatures not checked") from None
    message = hashlib.sha256(round_.to_bytes(8, "big")).digest()
    key, sig = bytes.fromhex(network["public_key"]), bytes.fromhex(signature)
    try:
        if network["scheme"] == "pedersen-bls-unchained":
            return G2Basic.Verify(key, message, sig)
        if network["scheme"] == "bls-unchained-g1-rfc9380":
            point = pubkey_to_G1(sig)
            if len(sig) != 48 or not is_inf(multiply(point, curve_order)):
                return False
            hashed = hash_to_G1(message, b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_",
                                hashlib.sha256)
            paired = (pairing(signature_to_G2(key), hashed, final_exponentiate=False)
                      * pairing(G2, neg(point), final_exponentiate=False))
            return final_exponentiate(paired) == FQ12.one()
    except (ValueError, AssertionError):
        return False
    raise Failed("unknown scheme " + network["scheme"])


class Check:
    def __init__(self, winners, eligible, kept, trusted):
        self.winners, self.eligible, self.kept, self.trusted = winners, eligible, kept, trusted
        self.proof = winners["proof"]
        self.steps = []

    def step(self, id_, title, run):
        try:
            outcome, detail = "pass", run()
        except Failed as failure:
            outcome, detail = "FAIL", str(failure)
        except Skipped as skip:
            outcome, detail = "skip", str(skip)
        self.steps.append((outcome, id_, title, detail))
        return outcome

    def commitment(self):
        proof = self.proof
        if hashlib.sha256(bytes.fromhex(proof["seed"])).hexdigest() != proof["seed_commitment"]:
            raise Failed("SHA-256 of the seed is not the proof's commitment")
        if self.kept and self.kept["seed_commitment"] != proof["seed_commitment"]:
            raise Failed("the draw answer you kept publishes another commitment")
        return "SHA-256(seed) = " + proof["seed_commitment"]

    def eligible_list(self):
        proof, eligible = self.proof, self.eligible
        total = proof["total_tickets"]
        bitmap = base64.b64decode(eligible["bitmap"], validate=True)
        if eligible["total_tickets"] != total or len(bitmap) != (total + 7) // 8:
            raise Failed("the bitmap does not have one bit per ticket")
        if total % 8 and bitmap[-1] >> (total % 8):
            raise Failed("the bitmap sets bits past the last ticket")
        if (eligible["eligible_count"], eligible["eligible_digest"]) != (
                proof["eligible_count"], proof["eligible_digest"]):
            raise Failed("the list's answer states another count or digest than the proof")
        if hashlib.sha256(bitmap).hexdigest() != proof["eligible_digest"]:
            raise Failed("SHA-256 of the bitmap is not the published digest")
        self.tickets = [8 * i + bit + 1 for i, byte in enumerate(bitmap) if byte
                        for bit in range(8) if byte >> bit & 1]
        if len(self.tickets) != proof["eligible_count"]:
            raise Failed("the bitmap holds %d tickets, the proof says %d"
                         % (len(self.tickets), proof["eligible_count"]))
        return "%d eligible tickets, digest %s" % (len(self.tickets), proof["eligible_digest"])

    def frozen(self):
        kept, proof = self.kept, self.proof
        if kept is None:
            raise Skipped("no draw answer kept from the close was given (--draw)")
        if kept.get("eligible_digest") is None:
            raise Failed("the draw answer you kept was read before the close")
        shown = (kept["eligible_count"], kept["eligible_digest"], millis(kept["frozen_at"]))
        if shown != (proof["eligible_count"], proof["eligible_digest"], millis(proof["frozen_at"])):
            raise Failed("the list differs from the one shown at the close")
        round_ = (proof["beacon"] or {}).get("round")
        if (kept.get("beacon") or {}).get("round") != round_:
            raise Failed("the beacon round differs from the one shown at the close")
        if kept.get("prizes") is None:
            raise Failed("the draw answer you kept fixes no number of prizes: they could have "
                         "been chosen once the round was out")
        if kept["prizes"] != proof["prizes"]:
            raise Failed("the close fixed %d prize(s), the proof draws %d"
                         % (kept["prizes"], proof["prizes"]))
        return "the same digest, count, freeze time, round and number of prizes"

    def network(self):
        beacon = self.proof["beacon"]
        if beacon is None:
            raise Skipped("the draw declared no beacon: it trusts whoever could read its seed")
        known = self.trusted.get(beacon["network"])
        if known is None:
            raise Failed("network %s is not one you know: add it with --networks if you trust "
                         "its public key %s" % (beacon["network"], beacon["public_key"]))
        if any(same_field(f, known[f]) != same_field(f, beacon[f]) for f in NETWORK_FIELDS):
            raise Failed("the proof's network has another key or clock than the one you trust")
        self.net = known
        return "%s (%s)" % (beacon["network"], beacon["scheme"])

    def rounds(self):
        beacon, proof = self.proof["beacon"], self.proof
        if beacon is None or not hasattr(self, "net"):
            raise Skipped("no trusted beacon network")
        frozen_at = millis(proof["frozen_at"])
        if beacon["round"] != round_after(self.net, frozen_at):
            raise Failed("round %d is not the first published more than 30 s after the freeze"
                         % beacon["round"])
        if proof.get("drawn_at") is None:
            raise Failed("the proof does not say when the winners were drawn (drawn_at)")
        drawn_at = millis(proof["drawn_at"])
        published = (self.net["genesis_time"]
                     + (beacon["round"] - 1) * self.net["period"]) * 1000
        if drawn_at < published:
            raise Failed("the winners were drawn before their round was published")
        asked_after = None
        for k, pick in enumerate(proof["picks"], start=1):
            own = pick.get("requested_at") is not None or pick.get("beacon_round") is not None
            if k <= proof["prizes"]:
                if own:
                    raise Failed("pick %d is one of the prizes' first picks: it uses the draw's "
                                 "round, not a request or round of its own" % k)
                continue
            if pick.get("requested_at") is None or pick.get("beacon_round") is None:
                raise Failed("pick %d (a redraw) names no request time and round" % k)
            at = millis(pick["requested_at"])
            if at < drawn_at:
                raise Failed("pick %d (a redraw) was asked for before the winners were drawn" % k)
            if asked_after is not None and at <= asked_after:
                raise Failed("pick %d (a redraw) was asked for no later than the redraw before it"
                             % k)
            if pick["beacon_round"] != round_after(self.net, at):
                raise Failed("pick %d (a redraw) does not use the first round after its request"
                             % k)
            asked_after = at
        return "round %d of %s" % (beacon["round"], beacon["network"])

    def signatures(self):
        beacon = self.proof["beacon"]
        self.randomness = {}
        if beacon is None:
            raise Skipped("no beacon: every pick hashes an empty beacon")
        if not hasattr(self, "net"):
            raise Skipped("no trusted network to check against")
        rounds = [(0, beacon["round"], beacon["signature"])] + [
            (p["pick"], p["beacon_round"], p["beacon_signature"])
            for p in self.proof["picks"] if p.get("beacon_round") is not None]
        try:
            for pick, round_, signature in rounds:
                if not signature_valid(self.net, round_, signature):
                    raise Failed("the signature is not the network's signature of round %d"
                                 % round_)
        finally:
            # The picks are recomputed with the randomness even when py_ecc is missing.
            for pick, _, signature in rounds:
                self.randomness[pick] = hashlib.sha256(bytes.fromhex(signature)).digest()
        return "%d signature(s) valid" % len(rounds)

    def picks(self, checkable):
        proof, prizes = self.proof, self.proof["prizes"]
        if not checkable:
            self.steps.append(("skip", "pick", "Each pick is recomputed",
                               "needs a well-formed list and valid signatures"))
            return
        seed, digest = bytes.fromhex(proof["seed"]), bytes.fromhex(proof["eligible_digest"])
        tickets, winner_of, ordered = list(self.tickets), {}, True
        for k, record in enumerate(proof["picks"], start=1):
            title = "Pick %d for prize %d is ticket %d" % (k, record["prize"], record["ticket"])
            prize = record["prize"]
            if record["pick"] != k or (prize != k if k <= prizes else not 1 <= prize <= prizes):
                self.steps.append(("FAIL", "pick", title, "out of order or to a prize it cannot go to"))
                ordered = False
                break
            if k <= prizes or proof["beacon"] is None:
                beacon = self.randomness.get(0, b"")
            elif k in self.randomness:
                beacon = self.randomness[k]
            else:
                self.steps.append(("FAIL", "pick", title, "this redraw names no beacon round"))
                return
            if not tickets:
                self.steps.append(("FAIL", "pick", title, "no eligible ticket is left to pick"))
                return
            ticket = tickets.pop(pick_index(seed, digest, k, beacon, len(tickets)))
            if ticket != record["ticket"]:
                self.steps.append(("FAIL", "pick", title, "the procedure picks ticket %d" % ticket))
            else:
                self.steps.append(("pass", "pick", title, "recomputed"))
            winner_of[prize] = ticket
        published = {p["prize"]: p["ticket"] for p in self.winners["prizes"]}
        if not ordered:
            self.steps.append(("skip", "prizes", "Each prize names its last pick", "picks out of order"))
        elif published == winner_of and len(winner_of) == prizes:
            self.steps.append(("pass", "prizes", "Each prize names its last pick", "%d prize(s)" % prizes))
        else:
            self.steps.append(("FAIL", "prizes", "Each prize names its last pick",
                               "a prize does not name the last pick that went to it"))

    def pending(self):
        waiting = self.winners["pending_redraw"]
        raise Failed("prize %d waits for the redraw that round %d's signature makes: the winners "
                     "are not final until it is made" % (waiting["prize"], waiting["beacon_round"]))

    def instant(self):
        instant, total = self.proof["instant_wins"], self.proof["total_tickets"]
        if instant["algorithm"] != INSTANT_ALGORITHM:
            raise Failed("the instant wins' algorithm is not " + INSTANT_ALGORITHM)
        key = bytes.fromhex(instant["key"])
        if hashlib.sha256(key).hexdigest() != instant["commitment"]:
            raise Failed("SHA-256 of the instant-win key is not its commitment")
        kept = (self.kept or {}).get("instant_wins")
        if kept and kept["commitment"] != instant["commitment"]:
            raise Failed("the draw's answer you kept publishes another instant-win commitment")
        counts = [p["count"] for p in instant["prizes"]]
        if sum(counts) > total:
            raise Failed("more instant prizes than tickets")
        names = [p["prize"] for p in instant["prizes"] for _ in range(p["count"])]
        recomputed = list(zip(instant_map(key, total, counts), names))
        if recomputed != [(m["ticket"], m["prize"]) for m in instant["map"]]:
            raise Failed("the published map differs from the one the key gives")
        prize_of = dict(recomputed)
        awarded = set()
        for award in instant["awards"]:
            if prize_of.get(award["ticket"]) != award["prize"]:
                raise Failed("ticket %d is awarded %r, which the map does not give it"
                             % (award["ticket"], award["prize"]))
            if award["ticket"] in awarded:
                raise Failed("ticket %d is awarded twice" % award["ticket"])
            awarded.add(award["ticket"])
        if hasattr(self, "tickets"):
            eligible = set(self.tickets)
            for ticket, _ in recomputed:
                if ticket in eligible and ticket not in awarded:
                    raise Failed("ticket %d was sold and wins an instant prize, but no award names it"
                                 % ticket)
            for award in instant["awards"]:
                if award["status"] != "void" and award["ticket"] not in eligible:
                    raise Failed("ticket %d has a live award but is not in the eligible list"
                                 % award["ticket"])
        return "%d winning numbers recomputed; %d awarded" % (len(recomputed), len(awarded))

    def run(self):
        if self.proof.get("algorithm") != ALGORITHM:
            self.steps.append(("FAIL", "format", "The files are a Tally draw's answers",
                               "the proof's algorithm is not " + ALGORITHM))
            return self.steps
        self.step("commitment", "The seed matches the commitment published before the sale", self.commitment)
        listed = self.step("eligible", "The eligible list matches its digest and count", self.eligible_list)
        self.step("frozen", "The list, the round and the number of prizes are those shown from the close",
                  self.frozen)
        self.step("network", "The beacon network is one you trust", self.network)
        self.step("round", "Each beacon round is the first published after the freeze or the redraw's request",
                  self.rounds)
        signed = self.step("signature", "Each round's signature is the network's", self.signatures)
        self.picks(hasattr(self, "tickets") and listed == "pass" and signed != "FAIL")
        if self.winners.get("pending_redraw") is not None:
            self.step("pending", "No redraw waits for its round", self.pending)
        title = "The instant wins follow from the key committed at creation"
        if "instant_wins" in self.proof:
            self.step("instant", title, self.instant)
        elif (self.kept or {}).get("instant_wins"):
            self.steps.append(("FAIL", "instant", title,
                               "the draw showed an instant-win commitment, the proof has no instant wins"))
        return self.steps


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
    def load(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    kept = load(options["--draw"]) if "--draw" in options else None
    try:
        trusted = trusted_networks(options.get("--networks"))
    except ValueError as error:
        print("the networks you trust: %s" % error, file=sys.stderr)
        return 2
    try:
        steps = Check(load(args[0]), load(args[1]), kept, trusted).run()
    except (KeyError, TypeError, ValueError) as error:
        steps = [("FAIL", "format", "The files are a Tally draw's answers", "malformed: %r" % (error,))]
    for outcome, id_, title, detail in steps:
        print("%-4s  %-10s  %s: %s" % (outcome, id_, title, detail))
    if any(outcome == "FAIL" for outcome, _, _, _ in steps):
        return 1
    unkept = any(outcome == "skip" and id_ == "frozen" for outcome, id_, _, _ in steps)
    print("ok: the draw holds (%s)%s" % (ALGORITHM, UNKEPT if unkept else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
