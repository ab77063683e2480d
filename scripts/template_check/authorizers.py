"""Every route behind AWS_IAM by default and behind the JWT authorizer with OidcIssuer set,
as SAM's own transform makes them."""

import json
import os


# The transforms, in the order they must run.
TRANSFORMS = ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
# The API whose routes the authorizer check follows, and the authorizer with OidcIssuer.
API = "HttpApi"
JWT_AUTHORIZER = "OidcAuthorizer"


def resolve_conditions(node, conditions):
    """`node` with each `Fn::If` on one of `conditions` replaced by its branch, and
    `AWS::NoValue` dropped: what AWS::LanguageExtensions leaves of them."""
    no_value = {"Ref": "AWS::NoValue"}
    if isinstance(node, dict):
        if set(node) == {"Fn::If"} and node["Fn::If"][0] in conditions:
            name, then, otherwise = node["Fn::If"]
            return resolve_conditions(then if conditions[name] else otherwise, conditions)
        resolved = {k: resolve_conditions(v, conditions) for k, v in node.items()}
        return {k: v for k, v in resolved.items() if v != no_value}
    if isinstance(node, list):
        resolved = [resolve_conditions(v, conditions) for v in node]
        return [v for v in resolved if v != no_value]
    return node


def route_security(template, parameters, uses_oidc):
    """The security requirement of every route SAM's transform gives the API, as JSON
    text, with UsesOidc `uses_oidc`."""
    import copy
    import logging
    from samtranslator.translator.transform import transform

    class NoManagedPolicies:
        def load(self):
            return {}

    resolved = resolve_conditions(copy.deepcopy(template), {"UsesOidc": uses_oidc})
    resolved["Transform"] = TRANSFORMS[1]
    # SAM checks a deployed CodeUri's form; the build replaces it anyway.
    resolved.setdefault("Globals", {}).setdefault("Function", {})["CodeUri"] = "s3://b/k"
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    # The translator warns when its own metrics, which nothing here publishes, are dropped.
    logging.getLogger("samtranslator.metrics.metrics").setLevel(logging.ERROR)
    output = transform(resolved, parameters, NoManagedPolicies())
    body = output["Resources"][API]["Properties"]["Body"]
    schemes = (body.get("components") or {}).get("securitySchemes") or {}
    routes = {f"{method.upper()} {path}": json.dumps(operation.get("security"))
              for path, item in body.get("paths", {}).items()
              for method, operation in item.items()}
    return routes, schemes


def authorizer_failures(template):
    """Every route behind AWS_IAM by default, behind the JWT authorizer of OidcIssuer and
    OidcAudience with OidcIssuer set."""
    failures = []
    if template.get("Transform") != TRANSFORMS:
        failures.append(f"Transform is not {TRANSFORMS}: SAM would read the authorizer's !If")
    default = {name: (p or {}).get("Default")
               for name, p in (template.get("Parameters") or {}).items()}
    cases = [
        (False, dict(default), [{"AWS_IAM": []}]),
        (True, dict(default, OidcIssuer="https://auth.example.com/", OidcAudience="tally"),
         [{JWT_AUTHORIZER: []}]),
    ]
    for uses_oidc, parameters, expected in cases:
        mode = "with OidcIssuer" if uses_oidc else "by default"
        try:
            routes, schemes = route_security(template, parameters, uses_oidc)
        except Exception as error:  # SAM's own refusal, whatever its type
            failures.append(f"SAM's transform fails {mode}: {error}")
            continue
        if not routes:
            failures.append(f"{API} has no route {mode}")
        for route, security in sorted(routes.items()):
            if json.loads(security) != expected:
                failures.append(f"{route} {mode} takes {security}, not {json.dumps(expected)}")
        if uses_oidc:
            jwt = (schemes.get(JWT_AUTHORIZER) or {}).get("x-amazon-apigateway-authorizer") or {}
            config = jwt.get("jwtConfiguration") or {}
            if jwt.get("type") != "jwt" or config.get("issuer") != {"Ref": "OidcIssuer"}:
                failures.append(f"{JWT_AUTHORIZER} is not a JWT authorizer of OidcIssuer: {jwt}")
    return failures
