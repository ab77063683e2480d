"""The shapes of the answers scripts/verify-draw.py reads, field by field as Tally's own
verifier reads them: an integer field holds a JSON integer in its range, so `true`, `8.0`
or `-1` make the answer no draw's (step `format`), as they do there. Fields not named here
are not read."""

U32 = range(2**32)
U64 = range(2**64)
I64 = range(-2**63, 2**63)


class Maybe:
    """A field that may be absent or null."""

    def __init__(self, shape):
        self.shape = shape


BEACON = {"network": str, "scheme": str, "public_key": str, "genesis_time": I64,
          "period": U32, "round": U64, "signature": str}
PICK = {"pick": U64, "prize": U32, "ticket": U64, "requested_at": Maybe(str),
        "beacon_round": Maybe(U64), "beacon_signature": Maybe(str)}
INSTANT = {"algorithm": str, "key": str, "commitment": str,
           "prizes": [{"prize": str, "count": U32}],
           "map": [{"ticket": U64, "prize": str}],
           "awards": [{"ticket": U64, "prize": str, "status": str}]}
PROOF = {"algorithm": str, "seed": str, "seed_commitment": str, "total_tickets": U64,
         "prizes": U32, "eligible_count": U64, "eligible_digest": str, "frozen_at": str,
         "drawn_at": Maybe(str), "beacon": Maybe(BEACON), "picks": [PICK],
         "instant_wins": Maybe(INSTANT)}
WINNERS = {"prizes": [{"prize": U32, "ticket": U64}],
           "pending_redraw": Maybe({"prize": U32, "beacon_round": U64}), "proof": PROOF}
ELIGIBLE = {"total_tickets": U64, "eligible_count": U64, "eligible_digest": str,
            "bitmap": str}
KEPT = {"seed_commitment": str, "eligible_count": Maybe(U64), "eligible_digest": Maybe(str),
        "frozen_at": Maybe(str), "beacon": Maybe({"round": Maybe(U64)}), "prizes": Maybe(U32),
        "instant_wins": Maybe({"commitment": str})}


def misfit(value, shape, where):
    """Why `value`, found at `where`, does not have `shape`, or None."""
    if isinstance(shape, Maybe):
        return None if value is None else misfit(value, shape.shape, where)
    if shape is str:
        return None if isinstance(value, str) else "%s is not a string" % where
    if isinstance(shape, range):
        # bool is a subclass of int in Python, not an integer in JSON.
        if type(value) is int and value in shape:
            return None
        return "%s is not an integer from %d to %d" % (where, shape.start, shape.stop - 1)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return "%s is not an array" % where
        return next(filter(None, (misfit(item, shape[0], "%s[%d]" % (where, at))
                                  for at, item in enumerate(value))), None)
    if not isinstance(value, dict):
        return "%s is not an object" % where
    for field, inner in shape.items():
        if field not in value and not isinstance(inner, Maybe):
            return "%s has no %s" % (where, field)
        why = misfit(value.get(field), inner, "%s.%s" % (where, field))
        if why:
            return why
    return None


def read(answer, shape, what):
    """`answer` itself when it has `shape`; else ValueError, saying which field does not."""
    why = misfit(answer, shape, what)
    if why:
        raise ValueError(why)
    return answer
