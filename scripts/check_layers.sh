#!/usr/bin/env bash
# Fails when an #include runs against braid's layering or a library reads the
# environment (docs/architecture.md):
#   graph            <- nothing of braid but include/braid/ (the public types)
#   kernels          <- graph
#   scheduler        <- graph (never kernels: it plans with names and costs)
#   models           <- graph
#   runtime          <- graph, kernels, scheduler (never models: it runs the
#                       Graph it is handed; "builtin:" names resolve in api/)
#   api              <- graph, kernels, scheduler, models, runtime
#   profiling        <- graph, kernels, scheduler, models, runtime, api
#   tools, bench, examples, tests: anything
# So nothing under graph, kernels, scheduler, models, runtime or api includes
# profiling/ or tools/.
# Libraries (graph, kernels, scheduler, models, runtime, api, profiling) take
# options, never the environment: no getenv / secure_getenv / environ / setenv / putenv.
# runtime/ and scheduler/ name no backend ("vgpu", "cuda" literals,
# DeviceKind::kCuda / kVirtualGpu, an include from a backend's folder
# kernels/cpu|cuda|vgpu/): they ask the backend registry or the profile.
#
#   scripts/check_layers.sh          # exit 1 listing every violation
set -euo pipefail
cd "$(dirname "$0")/.."

allowed() {
  case "$1" in
    graph) echo "graph braid" ;;
    kernels) echo "graph kernels braid" ;;
    scheduler) echo "graph scheduler braid" ;;
    models) echo "graph models braid" ;;
    runtime) echo "graph kernels scheduler runtime braid" ;;
    api) echo "graph kernels scheduler models runtime api braid" ;;
    profiling) echo "graph kernels scheduler models runtime api profiling braid" ;;
  esac
}

violations=0
for layer in graph kernels scheduler models runtime api profiling; do
  ok=$(allowed "$layer")
  while IFS=: read -r file line text; do
    top=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<< "$text")
    if ! grep -qw -- "$top" <<< "$ok"; then
      echo "layering: $file:$line includes $top/ ($layer may include: $ok)"
      violations=$((violations + 1))
    fi
  done < <(grep -rnE --include='*.h' --include='*.cc' --include='*.cu' '^#include "[a-z_]+/' "$layer" || true)
  while IFS= read -r hit; do
    echo "environment: $hit (libraries take options; the CLI reads the environment)"
    violations=$((violations + 1))
  done < <(grep -rnE --include='*.h' --include='*.cc' --include='*.cu' \
             '\b(getenv|secure_getenv|setenv|putenv|unsetenv)\s*\(|\benviron\b' "$layer" | grep -vE ':\s*//' || true)
done
# runtime/ and scheduler/ name no backend: devices come from the backend
# registry (kernels/backend_registry.h), a device's properties from its
# backend's traits or the device profile. Comments may name them; a profile
# format's data line says so with "check_layers: profile data".
backend_name='"(vgpu|cuda)(:[^"]*)?"|DeviceKind::k(Cuda|VirtualGpu)'
for layer in runtime scheduler; do
  while IFS= read -r hit; do
    code="${hit#*:*:}"
    code="${code%%//*}"
    if grep -qE -- "$backend_name" <<< "$code"; then
      echo "backend named: $hit (ask the backend registry's traits or the device profile)"
      violations=$((violations + 1))
    fi
  done < <(grep -rnE --include='*.h' --include='*.cc' -- "$backend_name" "$layer" |
             grep -v 'check_layers: profile data' || true)
  while IFS= read -r hit; do
    echo "backend included: $hit (backend folders are reached through kernels/backend_registry.h; shared host utilities live in kernels/host/)"
    violations=$((violations + 1))
  done < <(grep -rnE --include='*.h' --include='*.cc' '^#include "kernels/(cpu|cuda|vgpu)/' "$layer" || true)
done
if [ "$violations" -gt 0 ]; then
  echo "check_layers: $violations violation(s)" >&2
  exit 1
fi
echo "check_layers: ok (graph, kernels, scheduler, models, runtime, api, profiling: includes follow the layers; no environment reads; runtime, scheduler: no backend named or included)"
