#!/bin/sh
# scripts/check-layers can fail: on a copy of src/, apps/ and docs/architecture.md under the build
# tree, each planted violation (an include up the layer order, one family including another's header,
# an app including a family header, a .cpp no library compiles) must be reported, and the copy
# without them must pass.
# usage: check_layers_rejects.sh SOURCE_DIR
set -eu
src=$1
dir=$(pwd)/check_layers_copy
rm -rf "$dir" && mkdir -p "$dir/docs" "$dir/scripts"
cp -r "$src/src" "$src/apps" "$dir/" && cp "$src/docs/architecture.md" "$dir/docs/" && cp "$src/scripts/check-layers" "$dir/scripts/"
"$dir/scripts/check-layers" "$dir" > "$dir/clean.log" || { cat "$dir/clean.log"; echo "FAIL: the unchanged copy does not pass"; exit 1; }
printf '#include "train/trainer.hpp"\n' > "$dir/src/nn/up.hpp"
printf '#include "models/smart/rollout.hpp"\n' > "$dir/src/models/gnn/other_family.hpp"
printf '#include "models/gnn/gnn_model.hpp"\n' > "$dir/apps/family_header.cpp"
printf 'int f() { return 0; }\n' > "$dir/src/data/orphan.cpp"
if "$dir/scripts/check-layers" "$dir" > "$dir/planted.log"; then
  cat "$dir/planted.log"; echo "FAIL: check-layers passed a tree with planted violations"; exit 1
fi
status=0
for want in "src/nn/up.hpp:1: includes train/trainer.hpp: src/nn/ does not depend on train/" \
            "src/models/gnn/other_family.hpp:1: includes models/smart/rollout.hpp: the gnn family may not include the smart family's headers" \
            "apps/family_header.cpp:1: includes models/gnn/gnn_model.hpp: apps/ may not include the gnn family's headers" \
            "src/data/orphan.cpp is compiled by no library" \
            "4 problem(s)"; do
  grep -qF "$want" "$dir/planted.log" || { echo "FAIL: no '$want' in:"; cat "$dir/planted.log"; status=1; }
done
[ "$status" -eq 0 ] && echo "ok: check-layers reports each planted violation"
exit "$status"
