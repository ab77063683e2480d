"""Least privilege: every statement limited to its role's key prefixes, indexes and
secret; every function under a role of the template."""

from .loader import as_list
from .rules import (
    EXPECTED, EXPECTED_INDEXES, FULL_INDEXES, FUNCTION_TYPES, POLICY_TYPES, ROLE_TYPES,
    SECRET_ENV, SECRET_READERS, STREAM_ACTIONS, STREAM_READERS,
)


class IamChecks:
    def statements(self):
        """(owner, where, statement) for every statement of every policy in the template."""
        for name, resource in self.resources.items():
            kind = resource.get("Type")
            props = resource.get("Properties") or {}
            if kind in ROLE_TYPES:
                doc = props.get("AssumeRolePolicyDocument") or {}
                for i, st in enumerate(as_list(doc.get("Statement"))):
                    yield name, f"{name} trust policy statement {i + 1}", st
                for policy in as_list(props.get("Policies")):
                    pname = policy.get("PolicyName", "?")
                    doc = policy.get("PolicyDocument") or {}
                    for i, st in enumerate(as_list(doc.get("Statement"))):
                        yield name, f"{name} policy {pname} statement {i + 1}", st
            elif kind in POLICY_TYPES:
                doc = props.get("PolicyDocument") or {}
                roles = [r.get("Ref") if isinstance(r, dict) else r
                         for r in as_list(props.get("Roles"))]
                owner = roles[0] if len(roles) == 1 else name
                for i, st in enumerate(as_list(doc.get("Statement"))):
                    yield owner, f"{name} statement {i + 1}", st

    def check_iam(self):
        granted = set()
        queried = {}
        secrets_read = set()
        for owner, where, st in self.statements():
            if not isinstance(st, dict):
                self.expect(False, f"{where}: not a statement")
                continue
            self.expect("NotAction" not in st, f"{where}: NotAction grants everything else")
            self.expect("NotResource" not in st, f"{where}: NotResource grants everything else")
            resources = as_list(st.get("Resource"))
            self.expect("*" not in resources, f'{where}: Resource "*"')
            actions = as_list(st.get("Action"))
            wild = [a for a in actions if not isinstance(a, str) or "*" in a or "?" in a]
            self.expect(not wild, f"{where}: action wildcard {wild}")
            if any(isinstance(a, str) and a.lower().startswith("secretsmanager:")
                   for a in actions):
                self.check_secret_reader(owner, where, st, actions, resources, secrets_read)
            dynamo = [a for a in actions
                      if isinstance(a, str) and a.lower().startswith("dynamodb:")]
            if dynamo and st.get("Effect") == "Allow":
                if owner in STREAM_READERS:
                    self.check_stream_reader(where, dynamo, resources)
                    continue
                granted.add(owner)
                query_only = {a.lower() for a in dynamo} == {"dynamodb:query"}
                self.check_leading_keys(owner, where, st.get("Condition") or {}, query_only)
                self.check_queries(owner, where, dynamo, resources, queried)
        for role in sorted(set(SECRET_READERS) - secrets_read):
            self.expect(False, f"{role}: expected to read {SECRET_READERS[role]}, but no statement grants it")
        for role in sorted(set(EXPECTED) - granted):
            self.expect(False, f"{role}: expected to reach the table, but no statement grants it")
        for role in sorted(set(EXPECTED) | set(EXPECTED_INDEXES)):
            expected = EXPECTED_INDEXES.get(role, set())
            got = queried.get(role, set())
            self.expect(got == expected,
                        f"{role}: may Query indexes {sorted(got)}, expected {sorted(expected)}")

    def check_secret_reader(self, owner, where, st, actions, resources, secrets_read):
        secret = SECRET_READERS.get(owner)
        if not self.expect(secret is not None,
                           f"{where}: Secrets Manager access for a role not in SECRET_READERS"):
            return
        lowered = {a.lower() for a in actions if isinstance(a, str)}
        self.expect(lowered == {"secretsmanager:getsecretvalue"},
                    f"{where}: Secrets Manager actions {sorted(lowered)}, expected GetSecretValue alone")
        self.expect(resources == [{"Ref": secret}],
                    f"{where}: GetSecretValue on {resources}, expected exactly !Ref {secret}")
        self.expect(st.get("Effect") == "Allow", f"{where}: not an Allow statement")
        generated = (self.resources.get(secret) or {})
        props = generated.get("Properties") or {}
        self.expect(generated.get("Type") == "AWS::SecretsManager::Secret"
                    and "GenerateSecretString" in props and "SecretString" not in props,
                    f"{secret}: not a secret that the template generates")
        secrets_read.add(owner)

    def check_secret_env(self, name, props, role_name):
        env = ((props.get("Environment") or {}).get("Variables") or {})
        secret = SECRET_READERS.get(role_name)
        if secret is None:
            self.expect(SECRET_ENV not in env,
                        f"{name}: {SECRET_ENV} on a function whose role may not read it")
        else:
            self.expect(env.get(SECRET_ENV) == {"Ref": secret},
                        f"{name}: {SECRET_ENV} is not !Ref {secret}")

    def check_queries(self, owner, where, actions, resources, queried):
        lowered = {a.lower() for a in actions}
        self.expect("dynamodb:scan" not in lowered, f"{where}: dynamodb:Scan is granted")
        if "dynamodb:query" not in lowered:
            return
        self.expect(lowered == {"dynamodb:query"},
                    f"{where}: dynamodb:Query shares a statement with {sorted(lowered)}")
        for resource in resources:
            index = self.index_of(resource)
            if self.expect(index is not None,
                           f"{where}: dynamodb:Query on {resource}, not on an index of Table"):
                queried.setdefault(owner, set()).add(index)

    @staticmethod
    def index_of(resource):
        """The index name of `!Sub "${Table.Arn}/index/NAME"`, else None."""
        sub = resource.get("Fn::Sub") if isinstance(resource, dict) else None
        prefix = "${Table.Arn}/index/"
        if isinstance(sub, str) and sub.startswith(prefix) and "*" not in sub:
            return sub[len(prefix):]
        return None

    def check_indexes(self):
        table = (self.resources.get("Table") or {}).get("Properties") or {}
        indexes = as_list(table.get("GlobalSecondaryIndexes"))
        names = {i.get("IndexName") for i in indexes}
        for role, wanted in EXPECTED_INDEXES.items():
            self.expect(wanted <= names,
                        f"{role}: indexes {sorted(wanted - names)} are not on the table")
        for index in indexes:
            if index.get("IndexName") in FULL_INDEXES:
                continue
            projection = (index.get("Projection") or {}).get("ProjectionType")
            self.expect(projection == "KEYS_ONLY",
                        f"index {index.get('IndexName')}: projects {projection}, not KEYS_ONLY")

    def check_stream_reader(self, where, actions, resources):
        others = [a for a in actions if a.lower() not in STREAM_ACTIONS]
        self.expect(not others, f"{where}: a stream reader may not {others}")
        stream = {"Fn::GetAtt": ["Table", "StreamArn"]}
        self.expect(resources == [stream], f"{where}: stream actions on {resources}, not the table's stream")

    def check_leading_keys(self, owner, where, condition, query_only=False):
        """A Query statement may name fewer prefixes than the role owns (an index holds
        only some of its items); any other statement names exactly the role's."""
        expected = EXPECTED.get(owner)
        if not self.expect(expected is not None,
                           f"{where}: DynamoDB access for a role with no EXPECTED line"):
            return
        like = condition.get("ForAllValues:StringLike") or {}
        prefixes = set(as_list(like.get("dynamodb:LeadingKeys")))
        fits = prefixes <= expected if query_only else prefixes == expected
        self.expect(
            bool(prefixes) and fits,
            f"{where}: dynamodb:LeadingKeys (ForAllValues:StringLike) is"
            f" {sorted(prefixes) or 'missing'}, expected {sorted(expected)}",
        )
        # YAML reads a bare Null key as null: the operator must be quoted.
        self.expect(None not in condition,
                    f'{where}: condition operator Null must be quoted ("Null")')
        # ForAllValues is true for a request without the key, so the key must be present.
        null = condition.get("Null") or {}
        self.expect(
            str(null.get("dynamodb:LeadingKeys")).lower() == "false",
            f'{where}: no "Null": {{dynamodb:LeadingKeys: "false"}} guard',
        )
        others = [op for op, keys in condition.items()
                  if op not in ("ForAllValues:StringLike", "Null", None)
                  and isinstance(keys, dict) and "dynamodb:LeadingKeys" in keys]
        self.expect(not others, f"{where}: dynamodb:LeadingKeys also under {others}")

    def check_functions(self):
        for name, resource in self.resources.items():
            if resource.get("Type") not in FUNCTION_TYPES:
                continue
            props = resource.get("Properties") or {}
            role = props.get("Role")
            target = role.get("Fn::GetAtt", [None])[0] if isinstance(role, dict) else None
            declared = (self.resources.get(target) or {}).get("Type") in ROLE_TYPES
            self.expect(declared, f"{name}: Role is not a role declared in this template")
            self.expect("Policies" not in props, f"{name}: SAM Policies bypass the role checks")
            self.check_secret_env(name, props, target)
