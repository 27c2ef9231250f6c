#!/usr/bin/env bash
# 1. promtool accepts the rules file, and its tests (one per alert) pass;
# 2. the PrometheusRule is what hack/gen-prometheusrule.py generates from the rules file now;
# 3. every metric the rules, the dashboard and docs/observability.md's PromQL use is in the
#    guide's metric tables (check_metrics_docs.py --offline).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
fail() { echo "FAIL: $*" >&2; exit 1; }
rules=deploy/components/prometheus-rules/trainer-alerts.rules.yaml

promtool check rules "$rules" || fail "promtool check rules $rules"
promtool test rules tests/unit/observability/trainer-alerts.test.yaml || fail "promtool test rules"
# Every alert has a test case.
missing=$(comm -23 <(sed -n 's/^ *- alert: //p' "$rules" | sort -u) \
  <(sed -n 's/.*alertname: \([A-Za-z]*\).*/\1/p' tests/unit/observability/trainer-alerts.test.yaml | sort -u))
[[ -z $missing ]] || fail "alerts without a promtool test: $missing"
echo "ok: promtool check rules, promtool test rules (every alert tested)"

hack/gen-prometheusrule.py --check || fail "prometheusrule.yaml is stale"
echo "ok: prometheusrule.yaml generated from the rules file"

python3 tests/integration/observability/check_metrics_docs.py --offline
echo PASS
