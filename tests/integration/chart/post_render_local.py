#!/usr/bin/env python3
"""A Helm post-renderer for running the chart's services as local processes (as
hack/run-local.sh runs deploy/): passes every object through, except that both webhook
configurations call https://127.0.0.1:<port> with the given CA as caBundle instead of the
release's Service, which nothing on a node-less test bed would serve; with --failure-policy,
every webhook of theirs gets that policy.

    helm install ... --post-renderer post_render_local.py \\
        --post-renderer-args --url=https://127.0.0.1:PORT --post-renderer-args --ca=CA.crt
"""
import argparse
import base64
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "hack", "testbed"))
import webhooks  # noqa: E402

KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--failure-policy", choices=("Fail", "Ignore"))
    args = p.parse_args()
    with open(args.ca, "rb") as f:
        bundle = base64.b64encode(f.read()).decode()
    docs = [d for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader) if d]
    for d in docs:
        if d.get("kind") in KINDS:
            webhooks.point_at_url(d, args.url, bundle)
            for w in d.get("webhooks") or []:
                if args.failure_policy:
                    w["failurePolicy"] = args.failure_policy
            (d["metadata"].get("annotations") or {}).pop("cert-manager.io/inject-ca-from", None)
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
