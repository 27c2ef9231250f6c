#!/usr/bin/env python3
"""Rewrites webhook configurations that point at an in-cluster Service (as controller-gen writes
them) to point at a URL on this machine instead, with our CA as the bundle.

Reads MutatingWebhookConfiguration / ValidatingWebhookConfiguration objects as JSON on stdin (the
output of `kubectl create --dry-run=client -o json -f manifests.yaml`; other kinds are dropped),
writes them rewritten as one v1 List to stdout. Each webhook's clientConfig becomes {url: BASE + service.path, caBundle: CA}; names get
PREFIX, as kustomize's namePrefix would give them.
"""
import argparse
import base64
import json
import sys


def point_at_url(config, base_url, ca_bundle):
    """Rewrites every webhook of one configuration to call base_url + its Service path."""
    for wh in config.get("webhooks", []):
        cc = wh.get("clientConfig", {})
        path = cc.get("service", {}).get("path", "")
        if not path and "url" not in cc:
            sys.exit(f"webhooks.py: webhook {wh.get('name')} has neither service.path nor url")
        url = base_url.rstrip("/") + path if path else cc["url"]
        wh["clientConfig"] = {"url": url, "caBundle": ca_bundle}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="base URL, e.g. https://127.0.0.1:9443")
    p.add_argument("--ca", required=True, help="PEM file of the CA that signed the serving cert")
    p.add_argument("--prefix", default="", help="prefix for each configuration's name")
    args = p.parse_args()

    with open(args.ca, "rb") as f:
        ca_bundle = base64.b64encode(f.read()).decode()
    # kubectl prints one JSON document per object, back to back (or one List).
    text, pos, items = sys.stdin.read(), 0, []
    decoder = json.JSONDecoder()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        doc, pos = decoder.raw_decode(text, pos)
        items.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    out = []
    for item in items:
        if item.get("kind") not in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            continue
        item["metadata"] = {"name": args.prefix + item["metadata"]["name"]}
        point_at_url(item, args.url, ca_bundle)
        out.append(item)
    if not out:
        sys.exit("webhooks.py: no webhook configurations in the input")
    json.dump({"apiVersion": "v1", "kind": "List", "items": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
