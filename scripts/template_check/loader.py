"""Reading the template: CloudFormation's short-form tags, and values that may be a list."""

import yaml


class TemplateLoader(yaml.SafeLoader):
    """A safe loader that also reads CloudFormation's short-form intrinsic tags."""


def _intrinsic(loader, tag_suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "Condition":
        return {"Condition": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {"Fn::" + tag_suffix: value}


TemplateLoader.add_multi_constructor("!", _intrinsic)


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
