"""The checks of scripts/check-template.py, a module for each subject: IAM (`iam`), how
functions are built and the HTTP API serves (`deploy`), alarms and the dashboard
(`alarms`), the authorizer of every route (`authorizers`); what they expect is in `rules`."""
