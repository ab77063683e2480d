"""The steps of scripts/verify-draw.py, one method each, run in order by `Check.run`."""

import base64
import hashlib

from verify_draw.rules import (ALGORITHM, INSTANT_ALGORITHM, MAX_INSTANT_PRIZES, MAX_PRIZES,
                               MAX_TOTAL_TICKETS, Failed, Skipped, Unchecked, instant_map,
                               millis, pick_index, round_after, signature_valid)

NETWORK_FIELDS = ("scheme", "public_key", "genesis_time", "period")


def same_field(name, value):
    """A network field as compared: a public key by its bytes, not its hex's case."""
    if name == "public_key" and isinstance(value, str):
        try:
            return bytes.fromhex(value)
        except ValueError:
            return value
    return value


class Check:
    def __init__(self, winners, eligible, kept, trusted):
        self.winners, self.eligible, self.kept, self.trusted = winners, eligible, kept, trusted
        self.proof = winners["proof"]
        self.steps = []
        self.unchecked = False

    def step(self, id_, title, run):
        try:
            outcome, detail = "pass", run()
        except Failed as failure:
            outcome, detail = "FAIL", str(failure)
        except Skipped as skip:
            outcome, detail = "skip", str(skip)
            self.unchecked = self.unchecked or isinstance(skip, Unchecked)
        self.steps.append((outcome, id_, title, detail))
        return outcome

    def malformed(self):
        """Why the answers are not a draw's within its limits, or None."""
        proof = self.proof
        if proof.get("algorithm") != ALGORITHM:
            return "the proof's algorithm is not " + ALGORITHM
        if not 1 <= proof["total_tickets"] <= MAX_TOTAL_TICKETS:
            return "the draw has %d tickets, not 1 to %d" % (proof["total_tickets"],
                                                            MAX_TOTAL_TICKETS)
        if not 1 <= proof["prizes"] <= MAX_PRIZES:
            return "the draw has %d prizes, not 1 to %d" % (proof["prizes"], MAX_PRIZES)
        instant = proof.get("instant_wins")
        counted = sum(p["count"] for p in instant["prizes"]) if instant else 0
        if counted > MAX_INSTANT_PRIZES:
            return "the draw has %d instant-winning numbers, more than %d" % (
                counted, MAX_INSTANT_PRIZES)
        for pick in proof["picks"]:
            if (pick.get("beacon_round") is None) != (pick.get("beacon_signature") is None):
                return "pick %d has a round without a signature" % pick["pick"]
        return None

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
            if any(p.get("beacon_round") is not None for p in self.proof["picks"]):
                raise Failed("a redraw names a round in a draw without a beacon")
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

    def assignment(self):
        """Picks are numbered 1, 2, ...; pick k of the first P went to prize k, every later
        one to some prize; at least P of them."""
        proof, prizes = self.proof, self.proof["prizes"]
        for k, record in enumerate(proof["picks"], start=1):
            prize = record["prize"]
            if record["pick"] != k or (prize != k if k <= prizes else not 1 <= prize <= prizes):
                return "pick %d is out of order or goes to a prize it cannot" % record["pick"]
        if len(proof["picks"]) < prizes:
            return "%d picks for %d prizes" % (len(proof["picks"]), prizes)
        return None

    def picks(self, checkable):
        proof, prizes = self.proof, self.proof["prizes"]
        disorder = self.assignment()
        if disorder:
            self.steps.append(("FAIL", "pick", "Picks 1 to P go to prizes 1 to P, in order",
                               disorder))
            self.steps.append(("skip", "prizes", "Each prize names its last pick",
                               "the picks are out of order"))
            return
        if not checkable:
            self.steps.append(("skip", "pick", "Each pick is recomputed",
                               "needs a well-formed list and valid signatures"))
            return
        seed, digest = bytes.fromhex(proof["seed"]), bytes.fromhex(proof["eligible_digest"])
        tickets = list(self.tickets)
        for k, record in enumerate(proof["picks"], start=1):
            title = "Pick %d for prize %d is ticket %d" % (k, record["prize"], record["ticket"])
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
        # The prizes as a list, in prize order, each its last pick's ticket as published.
        winner_of = {record["prize"]: record["ticket"] for record in proof["picks"]}
        expected = [(prize, winner_of[prize]) for prize in range(1, prizes + 1)]
        published = [(p["prize"], p["ticket"]) for p in self.winners["prizes"]]
        if published == expected:
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
        malformed = self.malformed()
        if malformed:
            self.steps.append(("FAIL", "format", "The files are a Tally draw's answers", malformed))
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
