#!/bin/sh
# A user's clone has nothing beside it: no file of the repository (tests, decks, scripts, docs, CI)
# may name a path that leaves it towards a sibling folder of the checkout (the developers' shared
# folder above all).
# usage: check_stands_alone.sh SOURCE_DIR
src=$1
# Written in two pieces so that this file does not match itself.
sibling='\.\./''shared'
# Every file but the build trees, local deps and run outputs at the top (ignored by .gitignore).
hits=$(cd "$src" && find . \( -path ./.git -o -path './build*' -o -path ./.deps -o -path ./runs -o -path ./data \
        -o -name __pycache__ \) -prune -o -type f -print0 | xargs -0 grep -nE "$sibling" | head -20)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "FAIL: the files above reach outside the repository"
  exit 1
fi
echo "PASS: nothing reaches outside the repository"
