"""The rules of tally-draw-v2 and tally-instant-v1 (docs/winners.md) as scripts/verify-draw.py
checks them: the picks, the instant-win map, the beacon rounds and their signatures."""

import datetime
import hashlib

ALGORITHM = "tally-draw-v2"
INSTANT_ALGORITHM = "tally-instant-v1"
TWO_64 = 1 << 64
MARGIN_MS = 30_000
# The draw's limits (docs/limits.md): no proof within them makes the check run long.
MAX_TOTAL_TICKETS = 10_000_000
MAX_PRIZES = 97
MAX_INSTANT_PRIZES = 1_000


class Failed(Exception):
    pass


class Skipped(Exception):
    pass


class Unchecked(Skipped):
    """A step this script cannot run here: the draw is not verified."""


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
        raise Unchecked("py_ecc is not installed (scripts/pip-tool.sh py-ecc, then run this "
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
